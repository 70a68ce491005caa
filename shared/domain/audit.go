package domain

import (
	"strings"
	"time"
)

// AuditEntry is one recorded admin action of a company (shared/audit records and lists them):
// who acted, when, what was done and to what; never a secret.
type AuditEntry struct {
	ID      string
	Company string
	// ActorKeyID is the id of the key that acted (through a bearer token of it, when ViaToken).
	ActorKeyID string
	ViaToken   bool
	// Action is one of shared/audit's actions ("api_key.revoked" …).
	Action string
	// TargetID is the id of what the action was done to (the company for limits).
	TargetID  string
	CreatedAt time.Time
	// ExpiresAt is when the store may delete the entry.
	ExpiresAt time.Time
}

// TargetType is the kind of resource the entry's action was done to ("api_key", "agent" …): the
// action's part before the dot.
func (e AuditEntry) TargetType() string {
	t, _, _ := strings.Cut(e.Action, ".")
	return t
}

// AuditFilter narrows a list of entries: one action (or any, ""), one acting key (ActorKeyID, or
// any, ""), and entries created at or after From and before To (zero: unbounded).
type AuditFilter struct {
	Action     string
	ActorKeyID string
	From, To   time.Time
}
