package domain

import (
	"slices"
	"strings"
	"time"
)

// Scopes a key may be limited to. A key with no scopes may do everything its company may.
const (
	ScopeAgentsRead  = "agents:read"
	ScopeAgentsWrite = "agents:write"
	ScopeKeysManage  = "keys:manage"
	ScopeSessions    = "sessions:write"
	ScopeSessionRead = "sessions:read"
)

// KnownScopes lists every scope a key may carry.
var KnownScopes = []string{ScopeAgentsRead, ScopeAgentsWrite, ScopeKeysManage, ScopeSessionRead, ScopeSessions}

// APIKey is a stored API key. The secret itself is never stored, only its SHA-256.
type APIKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"`
	Hash      string     `json:"-"`
	Owner     string     `json:"owner"`
	Company   string     `json:"company"`
	Scopes    []string   `json:"scopes"`
	RateLimit int        `json:"rate_limit"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	CreatedAt time.Time  `json:"created_at"`
}

// Principal is the authenticated caller of one request.
type Principal struct {
	KeyID     string
	Owner     string
	Company   string
	Scopes    []string
	RateLimit int // requests per minute; 0 means unlimited
	ExpiresAt time.Time
}

// Can reports whether the principal holds scope; an unscoped key holds them all.
func (p Principal) Can(scope string) bool {
	if len(p.Scopes) == 0 || slices.Contains(p.Scopes, scope) {
		return true
	}
	// Write implies read on the same resource.
	if res, ok := strings.CutSuffix(scope, ":read"); ok {
		return slices.Contains(p.Scopes, res+":write")
	}
	return false
}

// Principal is the caller a valid key authenticates.
func (k *APIKey) Principal() Principal {
	return Principal{KeyID: k.ID, Owner: k.Owner, Company: k.Company, Scopes: k.Scopes, RateLimit: k.RateLimit, ExpiresAt: k.ExpiresAt}
}
