package domain

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Scopes a key may be limited to. A key with no scopes may do everything its company may, except
// what needs ScopeAdmin.
const (
	ScopeAgentsRead    = "agents:read"
	ScopeAgentsWrite   = "agents:write"
	ScopeKeysManage    = "keys:manage"
	ScopeSessionsWrite = "sessions:write"
	ScopeSessionRead   = "sessions:read"
	// ScopeKnowledgeRead reads files, collections and knowledge bases, checks a knowledge base's
	// status and searches it; ScopeKnowledgeWrite uploads, changes and deletes them.
	ScopeKnowledgeRead  = "knowledge:read"
	ScopeKnowledgeWrite = "knowledge:write"
	// ScopeApprovals approves or denies the MCP calls a paused execution waits on (with
	// ScopeSessionsWrite, which executing needs): a key that runs sessions does not thereby
	// approve its own calls. Answering function calls needs ScopeSessionsWrite only.
	ScopeApprovals = "approvals:write"
	// ScopeWebhooksRead lists and reads the company's webhooks and their deliveries;
	// ScopeWebhooksWrite creates, changes, deletes and redelivers them and rotates their secrets.
	ScopeWebhooksRead  = "webhooks:read"
	ScopeWebhooksWrite = "webhooks:write"
	// ScopeUsageRead reads the company's usage report (requests, tokens and cost per day, key
	// and agent).
	ScopeUsageRead = "usage:read"
	// ScopeMemoryRead lists and reads the memory agents keep of end users (docs/memory.md) and
	// opens sessions whose configuration turns memory on; ScopeMemoryWrite creates, changes and
	// deletes it, forgets a user, and lets an execution's agent write memory.
	ScopeMemoryRead  = "memory:read"
	ScopeMemoryWrite = "memory:write"
	// ScopeAdmin manages the keys of every owner of the company and includes every other scope.
	// Only a key that lists it explicitly holds it.
	ScopeAdmin = "admin"
)

// KnownScopes lists every scope a key may carry.
var KnownScopes = []string{ScopeAgentsRead, ScopeAgentsWrite, ScopeKeysManage, ScopeSessionRead, ScopeSessionsWrite,
	ScopeKnowledgeRead, ScopeKnowledgeWrite, ScopeApprovals, ScopeWebhooksRead, ScopeWebhooksWrite, ScopeUsageRead, ScopeMemoryRead, ScopeMemoryWrite, ScopeAdmin}

// identifierRE is what owners and companies look like: they become parts of storage keys, so no
// separators, spaces or control characters.
//
// Compiled on first use: its counted repetition makes a large program (about 2,500
// allocations), which every function would otherwise pay at init.
var identifierRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$`)
})

// IdentifierRule describes a valid identifier for error messages.
const IdentifierRule = "must be 1 to 128 letters, digits or . _ @ + - and start with a letter or digit"

// ValidIdentifier reports whether s may be used as an owner or company.
func ValidIdentifier(s string) bool { return identifierRE().MatchString(s) }

// APIKey is a stored API key. The secret itself is never stored, only its SHA-256.
type APIKey struct {
	ID      string
	Name    string
	Prefix  string
	Hash    string
	Owner   string
	Company string
	// ParentID is the key that created this one through the API; nil for a key made by an
	// operator (scripts/apikey, the dev server).
	ParentID *string
	// Ancestors are the parent, its parent and so on up to an operator's key: the key stops
	// working when any of them is revoked.
	Ancestors []string
	Scopes    []string
	RateLimit int
	// Budget is the key's own monthly budget, counted from its own usage (its children's is
	// theirs).
	Budget    Budget
	ExpiresAt time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
}

// Principal is the authenticated caller of one request.
type Principal struct {
	KeyID     string
	Owner     string
	Company   string
	Scopes    []string
	RateLimit int    // requests per minute; 0 means unlimited
	Budget    Budget // the key's monthly budget
	ExpiresAt time.Time
	Ancestors []string // of the key, parent first
	ViaToken  bool     // authenticated by a bearer token rather than the key itself
}

// Can reports whether the principal holds scope. An unscoped key holds every scope but
// ScopeAdmin; ScopeAdmin holds them all.
func (p Principal) Can(scope string) bool {
	switch {
	case slices.Contains(p.Scopes, ScopeAdmin):
		return true
	case scope == ScopeAdmin:
		return false
	case len(p.Scopes) == 0 || slices.Contains(p.Scopes, scope):
		return true
	}
	// Write implies read on the same resource.
	if res, ok := strings.CutSuffix(scope, ":read"); ok {
		return slices.Contains(p.Scopes, res+":write")
	}
	return false
}

// Grants lists every known scope the principal holds, in KnownScopes order: an unscoped key's
// are all but ScopeAdmin. Unlike Scopes it is never empty for a key that may do anything, so a
// record of it (a queued execution's) cannot be mistaken for an unscoped key.
func (p Principal) Grants() []string {
	var out []string
	for _, s := range KnownScopes {
		if p.Can(s) {
			out = append(out, s)
		}
	}
	return out
}

// IsAdmin reports whether the principal may manage the keys of every owner of its company.
func (p Principal) IsAdmin() bool { return p.Can(ScopeAdmin) }

// Principal is the caller a valid key authenticates.
func (k *APIKey) Principal() Principal {
	return Principal{KeyID: k.ID, Owner: k.Owner, Company: k.Company, Scopes: k.Scopes, RateLimit: k.RateLimit, Budget: k.Budget,
		ExpiresAt: k.ExpiresAt, Ancestors: k.Ancestors}
}
