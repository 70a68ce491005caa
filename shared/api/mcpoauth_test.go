package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/mcpservers/mcpserverstest"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/seal"
)

// TestMCPServerOAuth registers a server behind OAuth through the API, starts its authorization,
// lets the authorization server redirect at once and posts the code and state back as the
// studio's callback page does: the server is then active with its tools, and no view ever shows
// the client secret or a token.
func TestMCPServerOAuth(t *testing.T) {
	as := &mcptest.OAuthServer{Scopes: []string{"tools:read"}, ClientID: "given-id", Secret: "given-secret-value"}
	hs := httptest.NewServer(as.Handler())
	t.Cleanup(hs.Close)
	as.Base = hs.URL
	conn := mcp.NewConnector(mcp.Options{Guard: netguard.Policy{AllowHosts: []string{"127.0.0.1", "localhost"}}})
	s, f := newFakeStack(t)
	svc := mcpservers.New(mcpserverstest.NewStore(), conn, seal.New(seal.Static(strings.Repeat("s", 32)))).
		WithAudit(audit.New(audittest.NewStore())).WithOAuth(conn, "http://localhost:3000/studio/oauth/callback")
	g := api.NewAgents(f.agents, api.Options{Auth: fakeAuth{f}, Log: slog.New(slog.DiscardHandler)}).WithMCPServers(svc)
	s.mux = g
	key, other := s.key("alice", "acme"), s.key("eve", "evil")
	var bodies []string
	do := func(r req) response {
		t.Helper()
		if r.key == "" {
			r.key = key
		}
		res := s.do(r)
		bodies = append(bodies, string(res.body))
		return res
	}

	res := do(req{method: "POST", path: "/api/v1/mcp-servers/", body: map[string]any{"name": "gh", "url": hs.URL + mcptest.PathOAuthMCP,
		"auth": map[string]any{"type": "oauth", "client_id": "given-id", "client_secret": "given-secret-value"}}})
	if res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	srv := res.json(t)
	id, _ := srv["id"].(string)
	auth, _ := srv["auth"].(map[string]any)
	if srv["status"] != "auth_required" || auth["authorized"] != false || auth["client_secret_set"] != true || auth["client_id"] != "given-id" {
		t.Fatalf("created %s", res.body)
	}

	res = do(req{method: "POST", path: "/api/v1/mcp-servers/" + id + "/authorize/"})
	authURL, _ := res.json(t)["authorization_url"].(string)
	if res.status != 200 || !strings.HasPrefix(authURL, hs.URL+mcptest.PathIssuer+"/authorize?") {
		t.Fatalf("authorize: %d %s", res.status, res.body)
	}
	code, state, err := conn.FollowRedirect(context.Background(), authURL)
	if err != nil {
		t.Fatal(err)
	}
	res = do(req{method: "POST", path: "/api/v1/mcp-servers/oauth/callback/", key: other, body: map[string]any{"code": code, "state": state}})
	if res.status != 400 || !strings.Contains(string(res.body), "state") {
		t.Errorf("another company's callback: %d %s, want a 400 on state", res.status, res.body)
	}
	res = do(req{method: "POST", path: "/api/v1/mcp-servers/oauth/callback/", body: map[string]any{"code": code, "state": state}})
	if m := res.json(t); res.status != 200 || m["status"] != "active" || m["tool_count"].(float64) == 0 || m["auth"].(map[string]any)["authorized"] != true {
		t.Fatalf("callback: %d %s", res.status, res.body)
	}
	res = do(req{method: "POST", path: "/api/v1/mcp-servers/oauth/callback/", body: map[string]any{"code": code, "state": state}})
	if res.status != 400 {
		t.Errorf("replayed callback: %d %s, want 400", res.status, res.body)
	}
	do(req{method: "GET", path: "/api/v1/mcp-servers/" + id + "/"})
	for _, b := range bodies {
		for _, tr := range as.TokenRequests {
			for _, secret := range []string{"given-secret-value", tr.Get("code_verifier")} {
				if secret != "" && strings.Contains(b, secret) {
					t.Errorf("a response shows a secret: %s", b)
				}
			}
		}
	}
}
