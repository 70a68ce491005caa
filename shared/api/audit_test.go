package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestAuditList: GET /api/v1/audit/ through the real handler and audit.Service on the fake store:
// admin keys only, newest first, paged with a Link, the action, acting key and time filters, bad
// filters a 400 in the error envelope naming the parameter; every response held to the document.
func TestAuditList(t *testing.T) {
	ctx := context.Background()
	st := audittest.NewStore()
	svc := audit.New(st)
	admin := domain.Principal{KeyID: "6f1c2b1e-0d8e-4c59-9a55-2b0c6d0e7f10", Owner: "ops", Company: "acme",
		Scopes: []string{domain.ScopeAdmin}, ExpiresAt: time.Now().Add(time.Hour)}
	base := time.Now().UTC().Add(-time.Hour)
	for i, a := range []string{audit.KeyCreated, audit.MCPServerCreated, audit.KeyRevoked, audit.AgentDeleted} {
		at := base.Add(time.Duration(i) * time.Minute)
		if err := st.PutAuditEntry(ctx, &domain.AuditEntry{ID: uuid.NewString(), Company: "acme", ActorKeyID: admin.KeyID, Action: a,
			TargetID: "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10", CreatedAt: at, ExpiresAt: at.Add(audit.Retention)}); err != nil {
			t.Fatal(err)
		}
	}
	// An entry of another admin key, before the others.
	peer := "0b3e8f4a-5c2d-4e6f-8a1b-9c0d1e2f3a4b"
	if err := st.PutAuditEntry(ctx, &domain.AuditEntry{ID: uuid.NewString(), Company: "acme", ActorKeyID: peer, Action: audit.KeyCreated,
		TargetID: admin.KeyID, CreatedAt: base.Add(-time.Minute), ExpiresAt: base.Add(audit.Retention)}); err != nil {
		t.Fatal(err)
	}
	other := admin
	other.Company = "globex"
	if err := svc.Record(ctx, other, audit.KeyCreated, "x"); err != nil {
		t.Fatal(err)
	}
	all := st.Entries()

	type got struct {
		status  int
		link    string
		actions []string
		errType string
		field   string // the parameter a 400's message names
	}
	do := func(p domain.Principal, query string) got {
		t.Helper()
		h := api.NewAuth(nil, api.Options{Auth: openapiAuth{p: p}}).WithAudit(svc)
		req := httptest.NewRequest(http.MethodGet, "/api/v1/audit/"+query, nil)
		req.Header.Set("x-api-key", "ak_x")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		body, _ := io.ReadAll(w.Result().Body)
		checkOpenAPI(t, req, nil, w.Code, w.Header(), body)
		g := got{status: w.Code, link: w.Header().Get("Link")}
		if w.Code != http.StatusOK {
			var e struct {
				Error struct{ Type, Message string } `json:"error"`
			}
			_ = json.Unmarshal(body, &e)
			g.errType = e.Error.Type
			if w.Code == http.StatusBadRequest {
				g.field, _, _ = strings.Cut(e.Error.Message, ":")
			}
			return g
		}
		var list []struct {
			Action     string `json:"action"`
			ActorKeyID string `json:"actor_key_id"`
			TargetType string `json:"target_type"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		g.actions = []string{}
		for _, e := range list {
			if (e.ActorKeyID != admin.KeyID && e.ActorKeyID != peer) || !strings.HasPrefix(e.Action, e.TargetType+".") {
				t.Errorf("entry %+v", e)
			}
			g.actions = append(g.actions, e.Action)
		}
		return g
	}
	q := func(s string) string { return strings.ReplaceAll(s, "+", "%2B") }
	second := all[1].CreatedAt.Format(time.RFC3339Nano)
	third := all[2].CreatedAt.Format(time.RFC3339Nano)
	unscoped := admin
	unscoped.Scopes = nil
	for _, c := range []struct {
		name  string
		p     domain.Principal
		query string
		want  got
	}{
		{"all", admin, "", got{status: 200, actions: []string{audit.AgentDeleted, audit.KeyRevoked, audit.MCPServerCreated, audit.KeyCreated, audit.KeyCreated}}},
		{"page", admin, "?limit=2&offset=1", got{status: 200, link: `</api/v1/audit?limit=2&offset=3>; rel="next"`,
			actions: []string{audit.KeyRevoked, audit.MCPServerCreated}}},
		{"action", admin, "?action=api_key.revoked", got{status: 200, actions: []string{audit.KeyRevoked}}},
		{"window", admin, q("?from=" + second + "&to=" + third), got{status: 200, actions: []string{audit.MCPServerCreated}}},
		{"from", admin, q("?from=" + third), got{status: 200, actions: []string{audit.AgentDeleted, audit.KeyRevoked}}},
		{"none", admin, "?action=webhook.deleted", got{status: 200, actions: []string{}}},
		{"key", admin, "?key_id=" + peer, got{status: 200, actions: []string{audit.KeyCreated}}},
		{"key's page", admin, "?key_id=" + admin.KeyID + "&limit=3", got{status: 200, link: `</api/v1/audit?key_id=` + admin.KeyID + `&limit=3&offset=3>; rel="next"`,
			actions: []string{audit.AgentDeleted, audit.KeyRevoked, audit.MCPServerCreated}}},
		{"key and action", admin, "?key_id=" + admin.KeyID + "&action=api_key.created", got{status: 200, actions: []string{audit.KeyCreated}}},
		{"empty key", admin, "?key_id=", got{status: 200, actions: []string{audit.AgentDeleted, audit.KeyRevoked, audit.MCPServerCreated, audit.KeyCreated, audit.KeyCreated}}},
		{"unknown key", admin, "?key_id=" + uuid.NewString(), got{status: 200, actions: []string{}}},
		{"bad key", admin, "?key_id=ak_123", got{status: 400, errType: "invalid_request_error", field: "key_id"}},
		{"uppercase key", admin, "?key_id=" + strings.ToUpper(peer), got{status: 400, errType: "invalid_request_error", field: "key_id"}},
		{"not admin", unscoped, "", got{status: 403, errType: "permission_error"}},
		{"unknown action", admin, "?action=key.created", got{status: 400, errType: "invalid_request_error", field: "action"}},
		{"bad from", admin, "?from=yesterday", got{status: 400, errType: "invalid_request_error", field: "from"}},
		{"bad to", admin, "?to=2026-01-01", got{status: 400, errType: "invalid_request_error", field: "to"}},
		{"to before from", admin, "?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", got{status: 400, errType: "invalid_request_error", field: "to"}},
		{"bad limit", admin, "?limit=0", got{status: 400, errType: "invalid_request_error", field: "limit"}},
	} {
		if diff := cmp.Diff(c.want, do(c.p, c.query), cmp.AllowUnexported(got{})); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", c.name, diff)
		}
	}
}
