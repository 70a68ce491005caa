package api

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// AuditService is what the audit route calls; audit.Service is the implementation.
type AuditService interface {
	List(ctx context.Context, p domain.Principal, f domain.AuditFilter, offset, limit int) ([]*domain.AuditEntry, bool, error)
}

// auditEntryJSON is a recorded admin action as the API shows it.
type auditEntryJSON struct {
	ID         string    `json:"id"`
	Action     string    `json:"action"`
	ActorKeyID string    `json:"actor_key_id"`
	ViaToken   bool      `json:"via_token"`
	TargetType string    `json:"target_type"`
	TargetID   string    `json:"target_id"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
}

func viewAuditEntry(e *domain.AuditEntry) auditEntryJSON {
	return auditEntryJSON{ID: e.ID, Action: e.Action, ActorKeyID: e.ActorKeyID, ViaToken: e.ViaToken,
		TargetType: e.TargetType(), TargetID: e.TargetID, CreatedAt: e.CreatedAt, ExpiresAt: e.ExpiresAt}
}

// WithAudit adds the company's audit log to the group (the auth function's: its admin routes):
// GET /api/v1/audit/, admin keys only, newest first, paged as the other lists, filtered by action,
// by the acting key (key_id) and by a time window (from inclusive, to exclusive, RFC 3339).
func (g *Group) WithAudit(svc AuditService) *Group {
	g.handle(http.MethodGet, "/api/v1/audit/", false, listPage(domain.ScopeAdmin, func(r *http.Request, offset, limit int) ([]auditEntryJSON, bool, error) {
		f, err := auditFilter(r)
		if err != nil {
			return nil, false, err
		}
		list, more, err := svc.List(r.Context(), principal(r), f, offset, limit)
		out := make([]auditEntryJSON, len(list))
		for i, e := range list {
			out[i] = viewAuditEntry(e)
		}
		return out, more, err
	}))
	return g
}

// auditFilter reads the action, key_id, from and to query parameters; a key id that is not a
// key's (a UUID) or a time that is not RFC 3339 is a 400 naming the parameter (the action is
// checked by the service).
func auditFilter(r *http.Request) (domain.AuditFilter, error) {
	q := r.URL.Query()
	f := domain.AuditFilter{Action: q.Get("action"), ActorKeyID: q.Get("key_id")}
	var errs []domain.FieldError
	if f.ActorKeyID != "" {
		if id, err := uuid.Parse(f.ActorKeyID); err != nil || id.String() != f.ActorKeyID {
			errs = append(errs, domain.FieldError{Field: "key_id", Message: "must be a key's id, a lowercase UUID such as 6f1c2b1e-0d8e-4c59-9a55-2b0c6d0e7f10"})
		}
	}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			errs = append(errs, domain.FieldError{Field: p.name, Message: "must be an RFC 3339 time such as 2026-01-31T00:00:00Z"})
			continue
		}
		*p.to = t
	}
	if len(errs) > 0 {
		return domain.AuditFilter{}, domain.Invalid(errs)
	}
	return f, nil
}
