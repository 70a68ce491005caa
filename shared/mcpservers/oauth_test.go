package mcpservers_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/mcpservers/mcpserverstest"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/seal"
)

const callback = "http://localhost:3000/studio/oauth/callback"

// oauthEnv is the service with the real connector (through a loopback guard) and an OAuth
// protected server of the test tools.
type oauthEnv struct {
	svc   *mcpservers.Service
	store *mcpserverstest.Store
	conn  *mcp.Connector
	as    *mcptest.OAuthServer
	url   string
}

func newOAuthEnv(t *testing.T, as *mcptest.OAuthServer) oauthEnv {
	t.Helper()
	hs := httptest.NewServer(as.Handler())
	t.Cleanup(hs.Close)
	as.Base = hs.URL
	conn := mcp.NewConnector(mcp.Options{Guard: netguard.Policy{AllowHosts: []string{"127.0.0.1", "localhost"}}})
	st := mcpserverstest.NewStore()
	svc := mcpservers.New(st, conn, seal.New(seal.Static(strings.Repeat("k", 40)))).WithAudit(audit.New(audittest.NewStore())).
		WithOAuth(conn, callback)
	return oauthEnv{svc: svc, store: st, conn: conn, as: as, url: hs.URL + mcptest.PathOAuthMCP}
}

// authorize starts an authorization, lets the authorization server redirect at once, and
// completes it as the studio's callback page would.
func (e oauthEnv) authorize(t *testing.T, p domain.Principal, id string) *domain.MCPServer {
	t.Helper()
	ctx := context.Background()
	a, err := e.svc.StartAuthorization(ctx, p, id, "")
	if err != nil {
		t.Fatal(err)
	}
	code, state, err := e.conn.FollowRedirect(ctx, a.URL)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := e.svc.CompleteAuthorization(ctx, p, code, state)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestOAuthAuthorizationCodeRegistration(t *testing.T) {
	e := newOAuthEnv(t, &mcptest.OAuthServer{Scopes: []string{"tools:read"}})
	ctx := context.Background()
	srv, err := e.svc.Create(ctx, alice, createInput(t, `{"name":"gh","url":"`+e.url+`","auth":{"type":"oauth"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Status != domain.MCPStatusAuthRequired || len(srv.Tools) != 0 || srv.Auth.Authorized || !strings.Contains(srv.LastError, "/authorize/") {
		t.Fatalf("registered %+v, want auth_required without tools, naming the authorize call", srv)
	}
	a, err := e.svc.StartAuthorization(ctx, alice, srv.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.URL, "redirect_uri="+strings.ReplaceAll(strings.ReplaceAll(callback, ":", "%3A"), "/", "%2F")) || !a.ExpiresAt.After(time.Now()) {
		t.Errorf("authorization %+v, want the studio callback as redirect and a future expiry", a)
	}
	code, state, err := e.conn.FollowRedirect(ctx, a.URL)
	if err != nil {
		t.Fatal(err)
	}
	// Another company's key cannot complete it.
	if _, err := e.svc.CompleteAuthorization(ctx, eve, code, state); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("eve completing alice's authorization: %v, want a 400 on state", err)
	}
	done, err := e.svc.CompleteAuthorization(ctx, alice, code, state)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != domain.MCPStatusActive || len(done.Tools) == 0 || !done.Auth.Authorized {
		t.Fatalf("authorized %+v, want active with tools", done)
	}
	// The state is single-use.
	if _, err := e.svc.CompleteAuthorization(ctx, alice, code, state); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("replayed state: %v, want a 400", err)
	}
	// A run reaches the server with the stored token.
	stored, err := e.svc.Get(ctx, alice, srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.svc.Endpoint(ctx, stored)
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.conn.Connect(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	res, err := s.CallTool(ctx, "echo", map[string]any{"message": "hi"})
	if err != nil || res.Text != "hi" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	if len(e.as.Authorizations) != 1 || e.as.Registrations != 1 {
		t.Errorf("%d authorizations, %d registrations; want 1 each", len(e.as.Authorizations), e.as.Registrations)
	}
	// Nothing secret is stored in clear.
	for _, tr := range e.as.TokenRequests {
		for _, v := range []string{tr.Get("code_verifier"), tr.Get("client_secret")} {
			if v != "" && bytes.Contains(stored.SealedAuth, []byte(v)) {
				t.Errorf("sealed grant holds %q in clear", v)
			}
		}
	}
}

func TestOAuthRefreshFailsToAuthRequired(t *testing.T) {
	e := newOAuthEnv(t, &mcptest.OAuthServer{TokenTTL: 30 * time.Second}) // within a minute: refreshed at each use
	ctx := context.Background()
	srv := e.authorize(t, alice, must[*domain.MCPServer](t)(e.svc.Create(ctx, alice, createInput(t, `{"name":"gh","url":"`+e.url+`","auth":{"type":"oauth"}}`))).ID)
	refreshes := func() int {
		n := 0
		for _, tr := range e.as.TokenRequests {
			if tr.Get("grant_type") == "refresh_token" {
				n++
			}
		}
		return n
	}
	before := refreshes()
	refreshed, err := e.svc.Refresh(ctx, alice, srv.ID)
	if err != nil || refreshed.Status != domain.MCPStatusActive || refreshes() == before {
		t.Fatalf("refresh with a renewable token: %+v, %v (%d refreshes); want active, refreshed", refreshed, err, refreshes()-before)
	}
	e.as.Revoked = true
	got, err := e.svc.Refresh(ctx, alice, srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.MCPStatusAuthRequired || !strings.Contains(got.LastError, "refreshed") || !strings.Contains(got.LastError, "authorize the server again") {
		t.Errorf("after a refused refresh: status %q, last_error %q; want auth_required saying so", got.Status, got.LastError)
	}
	// A run meeting the same records it.
	cur := must[*domain.MCPServer](t)(e.svc.Get(ctx, alice, srv.ID))
	ep, err := e.svc.Endpoint(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	_, connErr := e.conn.Connect(ctx, ep)
	if connErr == nil {
		t.Fatal("connected with a revoked grant")
	}
	if err := e.svc.RecordUse(ctx, cur, connErr); err != nil {
		t.Fatal(err)
	}
	if after := must[*domain.MCPServer](t)(e.svc.Get(ctx, alice, srv.ID)); after.Status != domain.MCPStatusAuthRequired {
		t.Errorf("status after the run %q, want auth_required", after.Status)
	}
}

func TestOAuthClientCredentialsRegistration(t *testing.T) {
	e := newOAuthEnv(t, &mcptest.OAuthServer{ClientID: "svc", Secret: "cc-secret-value"})
	ctx := context.Background()
	srv, err := e.svc.Create(ctx, alice, createInput(t, `{"name":"svc","url":"`+e.url+`",
		"auth":{"type":"oauth","grant":"client_credentials","client_id":"svc","client_secret":"cc-secret-value"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Status != domain.MCPStatusActive || len(srv.Tools) == 0 || !srv.Auth.ClientSecretSet || srv.Auth.ClientID != "svc" {
		t.Fatalf("registered %+v, want active with tools", srv)
	}
	if bytes.Contains(srv.SealedAuth, []byte("cc-secret-value")) {
		t.Error("the client secret is stored in clear")
	}
	if _, err := e.svc.StartAuthorization(ctx, alice, srv.ID, ""); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("StartAuthorization of a client credentials server: %v, want a 409", err)
	}
}

func TestOAuthInputRefused(t *testing.T) {
	e := newOAuthEnv(t, &mcptest.OAuthServer{})
	for _, tc := range []struct{ body, field string }{
		{`{"type":"basic"}`, "auth.type"},
		{`{"type":"oauth","grant":"password"}`, "auth.grant"},
		{`{"type":"oauth","grant":"client_credentials","client_id":"x"}`, "auth.client_id"},
		{`{"type":"oauth","scopes":["a b"]}`, "auth.scopes"},
	} {
		_, err := e.svc.Create(context.Background(), alice, createInput(t, `{"name":"x","url":"`+e.url+`","auth":`+tc.body+`}`))
		if !hasField(err, tc.field) {
			t.Errorf("auth %s: %v, want a 400 on %s", tc.body, err, tc.field)
		}
	}
	_, err := e.svc.Create(context.Background(), alice, createInput(t, `{"name":"x","url":"`+e.url+`","headers":{"Authorization":"Bearer x"},"auth":{"type":"oauth"}}`))
	if !hasField(err, "headers.Authorization") {
		t.Errorf("auth with an Authorization header: %v, want a 400 on headers.Authorization", err)
	}
	// A server that is not behind OAuth is refused as one.
	plain := httptest.NewServer(mcptest.Handler())
	t.Cleanup(plain.Close)
	_, err = e.svc.Create(context.Background(), alice, createInput(t, `{"name":"x","url":"`+plain.URL+mcptest.PathJSON+`","auth":{"type":"oauth"}}`))
	if !hasField(err, "url") {
		t.Errorf("auth on a server without OAuth: %v, want a 400 on url", err)
	}
}

func hasField(err error, field string) bool {
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
		return false
	}
	for _, f := range de.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// must is the value of a call that must succeed.
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestOAuthNewURLDropsTheTokens(t *testing.T) {
	e := newOAuthEnv(t, &mcptest.OAuthServer{ClientID: "svc", Secret: "cc-secret-value"})
	ctx := context.Background()
	cc := must[*domain.MCPServer](t)(e.svc.Create(ctx, alice, createInput(t, `{"name":"svc","url":"`+e.url+`",
		"auth":{"type":"oauth","grant":"client_credentials","client_id":"svc","client_secret":"cc-secret-value"}}`)))
	code := e.authorize(t, alice, must[*domain.MCPServer](t)(e.svc.Create(ctx, alice, createInput(t, `{"name":"gh","url":"`+e.url+`","auth":{"type":"oauth"}}`))).ID)
	// The server moves: another resource, whose tokens the old ones are not.
	moved := &mcptest.OAuthServer{ClientID: "svc", Secret: "cc-secret-value"}
	hs := httptest.NewServer(moved.Handler())
	t.Cleanup(hs.Close)
	moved.Base = hs.URL
	other := hs.URL + mcptest.PathOAuthMCP
	got, err := e.svc.Update(ctx, alice, cc.ID, updateInput(t, `{"url":"`+other+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.MCPStatusActive || len(moved.TokenRequests) != 1 || moved.TokenRequests[0].Get("resource") != other {
		t.Errorf("client credentials after a new url: %s, %d token requests at the new server (want 1, for %s)", got.Status, len(moved.TokenRequests), other)
	}
	got, err = e.svc.Update(ctx, alice, code.ID, updateInput(t, `{"url":"`+other+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.MCPStatusAuthRequired || got.Auth.Authorized {
		t.Errorf("authorization code after a new url: %s, authorized %v; want auth_required without a token", got.Status, got.Auth.Authorized)
	}
}

func TestOAuthStepUpInUse(t *testing.T) {
	ctx := context.Background()
	call := func(t *testing.T, e oauthEnv, srv *domain.MCPServer) error {
		t.Helper()
		ep, err := e.svc.Endpoint(ctx, must[*domain.MCPServer](t)(e.svc.Get(ctx, alice, srv.ID)))
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.conn.Connect(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = s.Close() }()
		_, err = s.CallTool(ctx, "echo", map[string]any{"message": "hi"})
		if err != nil {
			if rerr := e.svc.RecordUse(ctx, srv, err); rerr != nil {
				t.Fatal(rerr)
			}
		}
		return err
	}
	t.Run("client credentials ask for more", func(t *testing.T) {
		e := newOAuthEnv(t, &mcptest.OAuthServer{Scopes: []string{"tools:read"}, StepUpScope: "tools:write", ClientID: "svc", Secret: "cc-secret-value"})
		srv := must[*domain.MCPServer](t)(e.svc.Create(ctx, alice, createInput(t, `{"name":"svc","url":"`+e.url+`",
			"auth":{"type":"oauth","grant":"client_credentials","client_id":"svc","client_secret":"cc-secret-value"}}`)))
		if err := call(t, e, srv); err != nil {
			t.Fatalf("call with step-up: %v", err)
		}
		last := e.as.TokenRequests[len(e.as.TokenRequests)-1]
		if last.Get("scope") != "tools:read tools:write" {
			t.Errorf("step-up token request asked %q, want the granted and the asked scopes", last.Get("scope"))
		}
	})
	t.Run("an authorization code grant needs a person", func(t *testing.T) {
		e := newOAuthEnv(t, &mcptest.OAuthServer{Scopes: []string{"tools:read"}, StepUpScope: "tools:write"})
		srv := e.authorize(t, alice, must[*domain.MCPServer](t)(e.svc.Create(ctx, alice, createInput(t, `{"name":"gh","url":"`+e.url+`","auth":{"type":"oauth"}}`))).ID)
		err := call(t, e, srv)
		if me := mcpError(t, err); !strings.Contains(me.Reason, "asks for more scope (tools:read tools:write)") {
			t.Errorf("reason %q, want the scope asked for", me.Reason)
		}
		if got := must[*domain.MCPServer](t)(e.svc.Get(ctx, alice, srv.ID)); got.Status != domain.MCPStatusAuthRequired {
			t.Errorf("status %q, want auth_required", got.Status)
		}
	})
}

func mcpError(t *testing.T, err error) *domain.MCPError {
	t.Helper()
	var me *domain.MCPError
	if !errors.As(err, &me) {
		t.Fatalf("error %v, want a *domain.MCPError", err)
	}
	return me
}

// TestOAuthConcurrentRefresh: two processes that read the same grant refresh its rotating
// refresh token at once. The authorization server takes the first and refuses the second
// (invalid_grant, the token is used); the one refused uses the tokens the other stored instead
// of sending a person round, so both calls succeed, the server stays active, and the stored
// refresh token is the live one.
func TestOAuthConcurrentRefresh(t *testing.T) {
	e := newOAuthEnv(t, &mcptest.OAuthServer{TokenTTL: 30 * time.Second}) // within a minute: refreshed at each use
	ctx := context.Background()
	srv := e.authorize(t, alice, must[*domain.MCPServer](t)(e.svc.Create(ctx, alice, createInput(t, `{"name":"gh","url":"`+e.url+`","auth":{"type":"oauth"}}`))).ID)
	use := func(cur *domain.MCPServer, ep domain.MCPEndpoint) error {
		s, err := e.conn.Connect(ctx, ep)
		if rerr := e.svc.RecordUse(ctx, cur, err); rerr != nil {
			return rerr
		}
		if err != nil {
			return err
		}
		defer func() { _ = s.Close() }()
		res, err := s.CallTool(ctx, "echo", map[string]any{"message": "hi"})
		if err == nil && res.Text != "hi" {
			err = errors.New("echo answered " + res.Text)
		}
		return err
	}
	// Both read the record before either refreshes, as two runs starting at once do.
	var curs [2]*domain.MCPServer
	var eps [2]domain.MCPEndpoint
	for i := range 2 {
		curs[i] = must[*domain.MCPServer](t)(e.svc.Get(ctx, alice, srv.ID))
		eps[i] = must[domain.MCPEndpoint](t)(e.svc.Endpoint(ctx, curs[i]))
	}
	errs := make(chan error, 2)
	for i := range 2 {
		go func() { errs <- use(curs[i], eps[i]) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("a use racing another's refresh: %v", err)
		}
	}
	refused, sent := 0, map[string]bool{} // a refresh token sent twice: the second is refused
	for _, tr := range e.as.TokenRequests {
		if rt := tr.Get("refresh_token"); tr.Get("grant_type") == "refresh_token" {
			if sent[rt] {
				refused++
			}
			sent[rt] = true
		}
	}
	if refused == 0 {
		t.Error("no refresh token used twice: the race did not happen")
	}
	got := must[*domain.MCPServer](t)(e.svc.Get(ctx, alice, srv.ID))
	if got.Status != domain.MCPStatusActive || !got.Auth.Authorized {
		t.Fatalf("after the race: status %q, last_error %q; want active", got.Status, got.LastError)
	}
	// The stored refresh token is the live one: the next use refreshes it.
	if err := use(got, must[domain.MCPEndpoint](t)(e.svc.Endpoint(ctx, got))); err != nil {
		t.Errorf("a use after the race: %v", err)
	}
}

// TestOAuthRenewalKeepsNewerGrant: a run holding the grant read before a person authorized the
// server again refreshes its own (still valid) refresh token; its write finds another grant
// stored and leaves it: the person's grant is not silently replaced.
func TestOAuthRenewalKeepsNewerGrant(t *testing.T) {
	e := newOAuthEnv(t, &mcptest.OAuthServer{TokenTTL: 30 * time.Second})
	ctx := context.Background()
	srv := e.authorize(t, alice, must[*domain.MCPServer](t)(e.svc.Create(ctx, alice, createInput(t, `{"name":"gh","url":"`+e.url+`","auth":{"type":"oauth"}}`))).ID)
	old := must[*domain.MCPServer](t)(e.svc.Get(ctx, alice, srv.ID))
	ep := must[domain.MCPEndpoint](t)(e.svc.Endpoint(ctx, old))
	again := e.authorize(t, alice, srv.ID)
	s, err := e.conn.Connect(ctx, ep) // refreshes the old grant's token: the authorization server still takes it
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	got := must[*domain.MCPServer](t)(e.svc.Get(ctx, alice, srv.ID))
	if !bytes.Equal(got.SealedAuth, again.SealedAuth) {
		t.Error("the run's renewed grant replaced the one the person authorized since")
	}
}
