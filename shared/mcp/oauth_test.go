package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/netguard"
)

// startOAuth serves o (the test server's tools behind OAuth) and returns its MCP URL.
func startOAuth(t *testing.T, o *mcptest.OAuthServer) string {
	t.Helper()
	hs := httptest.NewServer(o.Handler())
	t.Cleanup(hs.Close)
	o.Base = hs.URL
	return hs.URL + mcptest.PathOAuthMCP
}

func flow(o *mcp.OAuth) *mcp.Flow {
	return &mcp.Flow{OAuth: o, Fetch: o.FollowRedirect, Client: domain.MCPOAuthClient{RedirectURL: "http://localhost:3000/oauth/callback"}}
}

func TestOAuthAuthorizationCode(t *testing.T) {
	srv := &mcptest.OAuthServer{Scopes: []string{"tools:read", "tools:write"}}
	u := startOAuth(t, srv)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	tools, err := c.ListTools(context.Background(), domain.MCPEndpoint{URL: u, Auth: flow(mcp.NewOAuth(loopback))})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) == 0 {
		t.Fatal("no tools")
	}
	if srv.Registrations != 1 || len(srv.Authorizations) != 1 || len(srv.TokenRequests) != 1 {
		t.Fatalf("%d registrations, %d authorizations, %d token requests; want 1 each", srv.Registrations, len(srv.Authorizations), len(srv.TokenRequests))
	}
	a, tr := srv.Authorizations[0], srv.TokenRequests[0]
	got := map[string]string{"resource": a.Get("resource"), "scope": a.Get("scope"), "method": a.Get("code_challenge_method"),
		"token resource": tr.Get("resource"), "grant": tr.Get("grant_type"), "verifier sent": boolStr(tr.Get("code_verifier") != "")}
	want := map[string]string{"resource": u, "scope": "tools:read", "method": "S256", "token resource": u,
		"grant": "authorization_code", "verifier sent": "true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("authorization (-want +got):\n%s", diff)
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestOAuthStepUp(t *testing.T) {
	srv := &mcptest.OAuthServer{Scopes: []string{"tools:read"}, StepUpScope: "tools:write"}
	u := startOAuth(t, srv)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	s, err := c.Connect(context.Background(), domain.MCPEndpoint{URL: u, Auth: flow(mcp.NewOAuth(loopback))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	res, err := s.CallTool(context.Background(), "echo", map[string]any{"message": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hi" {
		t.Errorf("echo = %q, want hi", res.Text)
	}
	var scopes []string
	for _, a := range srv.Authorizations {
		scopes = append(scopes, a.Get("scope"))
	}
	if diff := cmp.Diff([]string{"tools:read", "tools:read tools:write"}, scopes); diff != "" {
		t.Errorf("scopes asked (-want +got):\n%s", diff)
	}
}

func TestOAuthGivesUp(t *testing.T) {
	srv := &mcptest.OAuthServer{Scopes: []string{"tools:read"}, StepUpScope: "tools:write"}
	u := startOAuth(t, srv)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	f := flow(mcp.NewOAuth(loopback))
	f.MaxAuthorizations = 1
	s, err := c.Connect(context.Background(), domain.MCPEndpoint{URL: u, Auth: f})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	_, err = s.CallTool(context.Background(), "echo", map[string]any{"message": "hi"})
	if me := mcpError(t, err); !strings.Contains(me.Reason, "refused 1 authorizations") {
		t.Errorf("reason %q, want the bound named", me.Reason)
	}
	if len(srv.Authorizations) != 1 {
		t.Errorf("%d authorizations, want 1", len(srv.Authorizations))
	}
}

func TestOAuthClientCredentials(t *testing.T) {
	for _, method := range []string{domain.MCPAuthMethodBasic, domain.MCPAuthMethodPost} {
		t.Run(method, func(t *testing.T) {
			srv := &mcptest.OAuthServer{ClientID: "svc", Secret: "s3cret-value"}
			u := startOAuth(t, srv)
			c := mcp.NewConnector(mcp.Options{Guard: loopback})
			f := &mcp.Flow{OAuth: mcp.NewOAuth(loopback), Grant: domain.MCPGrantClientCredentials,
				Client: domain.MCPOAuthClient{ID: "svc", Secret: "s3cret-value", AuthMethod: method}}
			if _, err := c.ListTools(context.Background(), domain.MCPEndpoint{URL: u, Auth: f}); err != nil {
				t.Fatal(err)
			}
			if len(srv.TokenRequests) != 1 || len(srv.Authorizations) != 0 {
				t.Fatalf("%d token requests, %d authorizations; want 1 and 0", len(srv.TokenRequests), len(srv.Authorizations))
			}
			tr := srv.TokenRequests[0]
			basic := strings.HasPrefix(tr.Get("authorization"), "Basic ")
			if tr.Get("grant_type") != "client_credentials" || tr.Get("resource") != u ||
				basic != (method == domain.MCPAuthMethodBasic) || (tr.Get("client_secret") != "") == basic {
				t.Errorf("token request %v, want client_credentials for %s with %s", tr, u, method)
			}
		})
	}
}

func TestOAuthRefresh(t *testing.T) {
	// A token that lives 30 s is refreshed before every request (a minute's margin).
	srv := &mcptest.OAuthServer{TokenTTL: 30 * time.Second}
	u := startOAuth(t, srv)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	if _, err := c.ListTools(context.Background(), domain.MCPEndpoint{URL: u, Auth: flow(mcp.NewOAuth(loopback))}); err != nil {
		t.Fatal(err)
	}
	var grants []string
	for _, tr := range srv.TokenRequests {
		grants = append(grants, tr.Get("grant_type"))
	}
	if len(grants) < 2 || grants[0] != "authorization_code" || grants[1] != "refresh_token" {
		t.Errorf("grants %v, want authorization_code then refresh_token", grants)
	}
	if len(srv.Authorizations) != 1 {
		t.Errorf("%d authorizations, want 1 (refreshed, not authorized again)", len(srv.Authorizations))
	}
}

func TestOAuthThroughTheGuard(t *testing.T) {
	srv := &mcptest.OAuthServer{}
	u := startOAuth(t, srv)
	// The production guard: the loopback server's metadata may not be read.
	_, err := mcp.NewOAuth(netguard.Policy{}).Discover(context.Background(), domain.MCPChallenge{URL: u,
		ResourceMetadata: srv.Base + "/.well-known/oauth-protected-resource" + mcptest.PathOAuthMCP})
	if err == nil || !errors.Is(err, netguard.ErrForbiddenDestination) {
		t.Errorf("Discover = %v, want refused by the guard", err)
	}
}

func TestOAuthProbeAndDiscover(t *testing.T) {
	srv := &mcptest.OAuthServer{Scopes: []string{"a", "b"}}
	u := startOAuth(t, srv)
	o := mcp.NewOAuth(loopback)
	ch, err := o.Probe(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.MCPChallenge{Status: 401, URL: u, ResourceMetadata: srv.Base + "/.well-known/oauth-protected-resource" + mcptest.PathOAuthMCP,
		Scopes: []string{"a"}}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("challenge (-want +got):\n%s", diff)
	}
	got, err := o.Discover(context.Background(), ch)
	if err != nil {
		t.Fatal(err)
	}
	if got.Resource != u || got.Issuer != srv.Base+mcptest.PathIssuer || got.TokenEndpoint != srv.Base+mcptest.PathIssuer+"/token" ||
		!cmp.Equal(got.ResourceScopes, []string{"a", "b"}) {
		t.Errorf("Discover = %+v", got)
	}
}

func TestScopes(t *testing.T) {
	srv := &domain.MCPOAuthServer{ResourceScopes: []string{"r1", "r2"}, ServerScopes: []string{"offline_access"}}
	for _, tc := range []struct {
		name    string
		c       domain.MCPChallenge
		srv     *domain.MCPOAuthServer
		granted []string
		refresh bool
		want    []string
	}{
		{"the challenge's first", domain.MCPChallenge{Scopes: []string{"c"}}, srv, nil, false, []string{"c"}},
		{"else the resource's", domain.MCPChallenge{}, srv, nil, false, []string{"r1", "r2"}},
		{"else none", domain.MCPChallenge{}, &domain.MCPOAuthServer{}, nil, true, nil},
		{"step-up keeps the granted", domain.MCPChallenge{Scopes: []string{"a", "w"}}, srv, []string{"a", "x"}, false, []string{"a", "x", "w"}},
		{"offline_access where offered", domain.MCPChallenge{Scopes: []string{"c"}}, srv, nil, true, []string{"c", "offline_access"}},
	} {
		if got := domain.MCPScopes(tc.c, tc.srv, tc.granted, tc.refresh); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: Scopes = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestChallenge(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x.example/.well-known/oauth-protected-resource"`)
	got := mcp.Challenge(403, "https://x.example/mcp", h)
	want := domain.MCPChallenge{Status: 403, URL: "https://x.example/mcp", Error: "insufficient_scope", Scopes: []string{"a", "b"},
		ResourceMetadata: "https://x.example/.well-known/oauth-protected-resource"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Challenge (-want +got):\n%s", diff)
	}
}

// BenchmarkListToolsOAuth is a registration's tools/list on a server behind OAuth with a token
// held (what OAuth adds over a static header: the token source per request); against
// BenchmarkListToolsBearer, the same with the token as a static header.
func BenchmarkListToolsOAuth(b *testing.B) {
	srv := &mcptest.OAuthServer{}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(hs.Close)
	srv.Base = hs.URL
	u := hs.URL + mcptest.PathOAuthMCP
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	ep := domain.MCPEndpoint{URL: u, Auth: flow(mcp.NewOAuth(loopback))}
	if _, err := c.ListTools(context.Background(), ep); err != nil { // authorizes once
		b.Fatal(err)
	}
	b.Run("oauth", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.ListTools(context.Background(), ep); err != nil {
				b.Fatal(err)
			}
		}
	})
	tok, err := ep.Auth.Token(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	bearer := domain.MCPEndpoint{URL: u, Headers: map[string]string{"Authorization": "Bearer " + tok}}
	b.Run("static-header", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.ListTools(context.Background(), bearer); err != nil {
				b.Fatal(err)
			}
		}
	})
}
