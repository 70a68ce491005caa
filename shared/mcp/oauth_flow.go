package mcp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/agentorch/agentorch/shared/domain"
)

// authHandler is the SDK's OAuth handler over a domain.MCPAuth: the Streamable HTTP transport
// asks it for the token of each request and, on a 401 or a 403, to authorize before it sends
// the request once more. Every token it hands out joins the connection's redactor first, so
// that a token renewed during a session (a refresh, a step-up) is hidden as the first one is.
type authHandler struct {
	a   domain.MCPAuth
	red *redactor
}

var _ auth.OAuthHandler = authHandler{}

func (h authHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	tok, err := h.a.Token(ctx)
	if err != nil || tok == "" {
		return nil, err
	}
	h.red.add("Bearer " + tok)
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"}), nil
}

func (h authHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	c := Challenge(resp.StatusCode, req.URL.String(), resp.Header)
	if c.Status == http.StatusForbidden && c.Error != domain.MCPInsufficientScope {
		return nil // not a question of scope: the request fails again as it is (step-up is for insufficient_scope)
	}
	return h.a.Authorize(ctx, c)
}

// redactedValues is what a connection's redactor hides: ep's header values and the OAuth access
// token the connection starts with, which a server may echo as it would a header (a token
// renewed during the session joins it as it is sent: authHandler).
func redactedValues(ctx context.Context, ep domain.MCPEndpoint) map[string]string {
	if ep.Auth == nil {
		return ep.Headers
	}
	tok, err := ep.Auth.Token(ctx)
	if err != nil || tok == "" {
		return ep.Headers
	}
	m := maps.Clone(ep.Headers)
	if m == nil {
		m = map[string]string{}
	}
	m["\x00oauth"] = "Bearer " + tok // a name no header has
	return m
}

// CodeFetcher sends a person (or, in tests, a headless client) to authURL and returns the code
// and state that the authorization server's redirect carried.
type CodeFetcher func(ctx context.Context, authURL string) (code, state string, err error)

// Flow is a domain.MCPAuth that runs the whole authorization in process and keeps the token in
// memory: discovery, registration, the grant (the authorization code through Fetch, or client
// credentials), refresh, and step-up on a 403 insufficient_scope, at most MaxAuthorizations
// times. The service keeps its grants elsewhere (mcpservers); Flow serves a client that can
// wait for a person, and the conformance suite.
type Flow struct {
	OAuth  *OAuth
	Client domain.MCPOAuthClient // pre-registered, or its redirect URL and metadata URL
	Grant  string                // domain.MCPGrantAuthorizationCode (default) or MCPGrantClientCredentials
	Fetch  CodeFetcher           // the authorization code grant's
	// MaxAuthorizations bounds the authorizations (0: 3): a server that refuses every token
	// must not send a person round for ever.
	MaxAuthorizations int

	mu      sync.Mutex
	tries   int
	server  *domain.MCPOAuthServer
	client  *domain.MCPOAuthClient // as registered
	token   *domain.MCPToken
	granted []string
}

var _ domain.MCPAuth = (*Flow)(nil)

// Token is the token held, refreshed when it has expired (a failed refresh gives none: the
// server's 401 then authorizes again).
func (f *Flow) Token(ctx context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.token == nil {
		return "", nil
	}
	if f.token.Expired(time.Now()) && f.token.Refresh != "" {
		if t, err := f.OAuth.Refresh(ctx, f.server, *f.client, f.token); err == nil {
			f.token = t
		} else {
			f.token = nil
			return "", nil
		}
	}
	return f.token.Access, nil
}

// Authorize runs the grant for what c asks.
func (f *Flow) Authorize(ctx context.Context, c domain.MCPChallenge) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	max := f.MaxAuthorizations
	if max <= 0 {
		max = 3
	}
	if f.tries++; f.tries > max {
		return &domain.MCPError{Reason: fmt.Sprintf("the server refused %d authorizations; giving up", max),
			Err: fmt.Errorf("authorize: %d tries", max)}
	}
	srv, err := f.OAuth.Discover(ctx, c)
	if err != nil {
		return asMCPError(err)
	}
	if f.client == nil || f.server == nil || f.server.Issuer != srv.Issuer {
		cl, err := f.OAuth.Register(ctx, srv, f.Client, f.grant())
		if err != nil {
			return asMCPError(err)
		}
		f.client = &cl
	}
	f.server = srv
	scopes := domain.MCPScopes(c, srv, f.granted, f.grant() == domain.MCPGrantAuthorizationCode)
	var tok *domain.MCPToken
	if f.grant() == domain.MCPGrantClientCredentials {
		tok, err = f.OAuth.ClientCredentials(ctx, srv, *f.client, scopes)
	} else {
		tok, err = f.code(ctx, srv, scopes)
	}
	if err != nil {
		return asMCPError(err)
	}
	f.token, f.granted = tok, tok.Scopes
	return nil
}

func (f *Flow) grant() string {
	if f.Grant == "" {
		return domain.MCPGrantAuthorizationCode
	}
	return f.Grant
}

// code runs the authorization code grant through Fetch.
func (f *Flow) code(ctx context.Context, srv *domain.MCPOAuthServer, scopes []string) (*domain.MCPToken, error) {
	if f.Fetch == nil {
		return nil, oauthFail(nil, "the server needs a person to authorize")
	}
	state := rand.Text()
	authURL, verifier := f.OAuth.AuthCodeURL(srv, *f.client, scopes, state)
	code, got, err := f.Fetch(ctx, authURL)
	if err != nil {
		return nil, oauthFail(err, "the authorization failed")
	}
	if got != state {
		return nil, oauthFail(nil, "the authorization answered another state")
	}
	return f.OAuth.Exchange(ctx, srv, *f.client, scopes, code, verifier)
}

// asMCPError is err as the connection's failure.
func asMCPError(err error) error {
	var me *domain.MCPError
	if errors.As(err, &me) {
		return &domain.MCPError{Reason: "authorization failed: " + me.Reason, Err: err}
	}
	return &domain.MCPError{Reason: "authorization failed", Err: err}
}

// FollowRedirect is a CodeFetcher for an authorization server that redirects at once (no
// person to ask, as the conformance suite's): it requests authURL through the OAuth client's
// guard and reads code and state from the redirect's Location.
func (o *OAuth) FollowRedirect(ctx context.Context, authURL string) (code, state string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", "", err
	}
	hc := *o.client
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return "", "", err
	}
	_ = resp.Body.Close() // the redirect is in the headers
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return "", "", fmt.Errorf("the authorization endpoint answered HTTP %d without a redirect", resp.StatusCode)
	}
	q := loc.Query()
	if e := q.Get("error"); e != "" {
		return "", "", fmt.Errorf("the authorization endpoint answered error %q", e)
	}
	return q.Get("code"), q.Get("state"), nil
}
