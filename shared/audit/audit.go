// Package audit records who did what to a company's resources: each admin action (a key created
// or revoked, an MCP server registered, changed or deleted, an agent deleted, a webhook or the
// company's limits changed) is an entry naming the acting key, the time, the action and its
// target, never a secret. Entries are kept Retention and listed newest first.
package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// The actions an entry (domain.AuditEntry) records; the part before the dot is the target's type.
const (
	KeyCreated           = "api_key.created"
	KeyRevoked           = "api_key.revoked"
	MCPServerCreated     = "mcp_server.created"
	MCPServerUpdated     = "mcp_server.updated"
	MCPServerDeleted     = "mcp_server.deleted"
	AgentDeleted         = "agent.deleted"
	WebhookCreated       = "webhook.created"
	WebhookUpdated       = "webhook.updated"
	WebhookDeleted       = "webhook.deleted"
	WebhookSecretRotated = "webhook.secret_rotated"
	LimitsUpdated        = "limits.updated"
)

// Actions lists every action, in the order the API documents them.
var Actions = []string{KeyCreated, KeyRevoked, MCPServerCreated, MCPServerUpdated, MCPServerDeleted,
	AgentDeleted, WebhookCreated, WebhookUpdated, WebhookDeleted, WebhookSecretRotated, LimitsUpdated}

// Retention is how long an entry is kept: the store gives each an expiry (DynamoDB's TTL) this
// long after it was recorded.
const Retention = 90 * 24 * time.Hour

// Store keeps a company's entries.
type Store interface {
	// PutAuditEntry stores a new entry.
	PutAuditEntry(ctx context.Context, e *domain.AuditEntry) error
	// ListAuditEntries returns up to limit of a company's entries that pass f, newest first (ties
	// by id, descending), after skipping offset, and whether more follow.
	ListAuditEntries(ctx context.Context, company string, f domain.AuditFilter, offset, limit int) ([]*domain.AuditEntry, bool, error)
}

// Recorder is what the features that act call: Record stores that p did action to target.
// An error means nothing was recorded; the callers then fail the request (see Service.Record).
type Recorder interface {
	Record(ctx context.Context, p domain.Principal, action, target string) error
}

// Service records and lists entries.
type Service struct {
	store Store
	now   func() time.Time
}

// New builds the service on its store.
func New(store Store) *Service { return &Service{store: store, now: time.Now} }

// Record stores one entry of p's company: one write to the store. It is called after the
// action's own write has succeeded, so an entry never names an action that did not happen; when
// it fails the caller answers with the error (a 500 whose log line carries the action, target and
// actor), so the loss of an entry is never silent.
func (s *Service) Record(ctx context.Context, p domain.Principal, action, target string) error {
	if !slices.Contains(Actions, action) {
		return fmt.Errorf("record audit entry: unknown action %q", action)
	}
	now := s.now().UTC()
	e := &domain.AuditEntry{ID: uuid.NewString(), Company: p.Company, ActorKeyID: p.KeyID, ViaToken: p.ViaToken,
		Action: action, TargetID: target, CreatedAt: now, ExpiresAt: now.Add(Retention)}
	if err := s.store.PutAuditEntry(ctx, e); err != nil {
		return fmt.Errorf("record audit entry %s of %s by key %s: %w", action, target, p.KeyID, err)
	}
	return nil
}

// List returns one page of the caller's company's entries; only an admin key may read them.
func (s *Service) List(ctx context.Context, p domain.Principal, f domain.AuditFilter, offset, limit int) ([]*domain.AuditEntry, bool, error) {
	if !p.IsAdmin() {
		return nil, false, domain.ErrPermission
	}
	var errs []domain.FieldError
	if f.Action != "" && !slices.Contains(Actions, f.Action) {
		errs = append(errs, domain.FieldError{Field: "action", Message: "must be one of " + strings.Join(Actions, ", ")})
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		errs = append(errs, domain.FieldError{Field: "to", Message: "must be after from"})
	}
	if len(errs) > 0 {
		return nil, false, domain.Invalid(errs)
	}
	out, more, err := s.store.ListAuditEntries(ctx, p.Company, f, offset, limit)
	if err != nil {
		return nil, false, fmt.Errorf("list audit entries: %w", err)
	}
	return out, more, nil
}
