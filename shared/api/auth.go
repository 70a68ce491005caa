package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// KeyService is what the auth group calls: tokens and keys on behalf of the caller;
// auth.Service is the implementation.
type KeyService interface {
	IssueToken(ctx context.Context, p domain.Principal) (string, time.Duration, error)
	CreateKeyAs(ctx context.Context, p domain.Principal, in auth.NewKey) (*domain.APIKey, string, error)
	ListKeysAs(ctx context.Context, p domain.Principal) ([]*domain.APIKey, error)
	RevokeKeyAs(ctx context.Context, p domain.Principal, id string) error
}

// NewAuth is the handler of the auth endpoint group: bearer tokens and API key management.
func NewAuth(svc KeyService, opts Options) *Group {
	g := newGroup(opts)
	h := &authHandlers{svc: svc, g: g}
	g.handle(http.MethodPost, "/api/v1/auth/token/", false, h.token)
	g.handle(http.MethodPost, "/api/v1/api-keys/", false, h.createKey)
	g.handle(http.MethodGet, "/api/v1/api-keys/", false, h.listKeys)
	g.handle(http.MethodDelete, "/api/v1/api-keys/{id}/", false, h.revokeKey)
	return g
}

type authHandlers struct {
	svc KeyService
	g   *Group
}

func (h *authHandlers) token(w http.ResponseWriter, r *http.Request) error {
	if r.Header.Get("x-api-key") == "" {
		// A token is exchanged for a key, never for another token.
		return domain.ErrBadKey
	}
	if err := emptyBody(w, r, h.g.opts.MaxBodyBytes); err != nil {
		return err
	}
	tok, ttl, err := h.svc.IssueToken(r.Context(), principal(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tokenJSON{AccessToken: tok, TokenType: "Bearer", ExpiresIn: int(ttl / time.Second)})
	return nil
}

// keyJSON is a key as the API shows it: never its hash, and the secret only once, when it is
// created.
type keyJSON struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"`
	Owner     string     `json:"owner"`
	Company   string     `json:"company"`
	ParentID  *string    `json:"parent_id"`
	Scopes    []string   `json:"scopes"`
	RateLimit int        `json:"rate_limit"`
	Limits    limitsJSON `json:"limits"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	CreatedAt time.Time  `json:"created_at"`
	Key       string     `json:"key,omitempty"`
}

// KeyView is a key as the API shows it after its creation (no secret), for tools that print
// keys the way the API does (scripts/apikey list --json).
func KeyView(k *domain.APIKey) any { return viewKey(k, "") }

func viewKey(k *domain.APIKey, secret string) keyJSON {
	return keyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Owner: k.Owner, Company: k.Company, ParentID: k.ParentID,
		Scopes: k.Scopes, RateLimit: k.RateLimit, Limits: viewLimits(k.RateLimit, k.Budget), ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, CreatedAt: k.CreatedAt, Key: secret}
}

type createKeyRequest struct {
	firstError
	Name      string   `json:"name"`
	Owner     string   `json:"owner"`
	ExpiresIn *int64   `json:"expires_in"`
	ExpiresAt *string  `json:"expires_at"`
	Scopes    []string `json:"scopes"`
	RateLimit *int     `json:"rate_limit"`
	Limits    *struct {
		RequestsPerMinute *int     `json:"requests_per_minute"`
		MonthlyTokens     *int64   `json:"monthly_tokens"`
		MonthlyCostUSD    *float64 `json:"monthly_cost_usd"`
	} `json:"limits"`
}

// refusedKeys: a key's company is never chosen by the client.
func (createKeyRequest) refusedKeys() map[string]string {
	return map[string]string{"company": "unknown field: a key's company is always the caller's"}
}

func (h *authHandlers) createKey(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if !p.Can(domain.ScopeKeysManage) {
		return domain.ErrPermission
	}
	var req createKeyRequest
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &req); err != nil {
		return err
	}
	in := auth.NewKey{Name: req.Name, Owner: req.Owner, Scopes: req.Scopes, RateLimit: p.RateLimit}
	if req.RateLimit != nil {
		in.RateLimit = *req.RateLimit
	}
	if l := req.Limits; l != nil {
		// limits.requests_per_minute is rate_limit by another name: one limit, stored once.
		in.Budget = domain.Budget{MonthlyTokens: l.MonthlyTokens, MonthlyCostUSD: l.MonthlyCostUSD}
		if errs := domain.ValidateLimits("limits.", l.RequestsPerMinute, in.Budget); len(errs) > 0 {
			return domain.Invalid(errs)
		}
		if rpm := l.RequestsPerMinute; rpm != nil {
			if req.RateLimit != nil && *req.RateLimit != *rpm {
				return domain.Invalid([]domain.FieldError{{Field: "limits.requests_per_minute", Message: fmt.Sprintf("must equal rate_limit (%d) when both are given: they are the same limit", *req.RateLimit)}})
			}
			in.RateLimit = *rpm
		}
	}
	switch {
	case req.ExpiresIn != nil && req.ExpiresAt != nil:
		return domain.Invalid([]domain.FieldError{{Field: "expires_at", Message: "give expires_in or expires_at, not both"}})
	case req.ExpiresIn != nil:
		// Checked here, in seconds, before the conversion to a duration could overflow.
		if maxSec := int64(auth.MaxKeyTTL / time.Second); *req.ExpiresIn <= 0 || *req.ExpiresIn > maxSec {
			return domain.Invalid([]domain.FieldError{{Field: "expires_in", Message: fmt.Sprintf("must be between 1 and %d seconds (%d days)", maxSec, maxSec/86400)}})
		}
		in.TTL = time.Duration(*req.ExpiresIn) * time.Second
	case req.ExpiresAt != nil:
		t, err := time.Parse(time.RFC3339, *req.ExpiresAt)
		if err != nil {
			return domain.Invalid([]domain.FieldError{{Field: "expires_at", Message: "must be an RFC 3339 time such as 2026-01-31T00:00:00Z"}})
		}
		in.ExpiresAt = t
	}
	k, secret, err := h.svc.CreateKeyAs(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewKey(k, secret))
	return nil
}

func (h *authHandlers) listKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := h.svc.ListKeysAs(r.Context(), principal(r))
	if err != nil {
		return err
	}
	out := make([]keyJSON, len(keys))
	for i, k := range keys {
		out[i] = viewKey(k, "")
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *authHandlers) revokeKey(w http.ResponseWriter, r *http.Request) error {
	if err := h.svc.RevokeKeyAs(r.Context(), principal(r), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
