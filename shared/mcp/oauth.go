package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
)

// OAuth is the OAuth 2.1 client of the MCP authorization spec (2025-11-25): discovery of a
// server's protected resource metadata (RFC 9728) and of its authorization server's metadata
// (RFC 8414, OpenID discovery), client registration (pre-registered, Client ID Metadata
// Documents, dynamic registration RFC 7591), the authorization code grant with PKCE S256 and
// the resource parameter (RFC 8707), client credentials and refresh. The metadata documents and
// the registration come from the go-sdk (oauthex, auth), the grants from golang.org/x/oauth2;
// this type chooses among them as the spec says. Every request goes through the address guard.
type OAuth struct {
	client *http.Client
}

// NewOAuth builds the OAuth client whose requests go through guard.
func NewOAuth(guard netguard.Policy) *OAuth {
	return &OAuth{client: &http.Client{Transport: guard.Transport(DefaultTimeout), CheckRedirect: guard.CheckRedirect,
		Timeout: 2 * DefaultTimeout}}
}

// oauthFail is a failure of the OAuth flow: a *domain.MCPError whose Reason is safe to show (no
// secret, no token, nothing the authorization server wrote).
func oauthFail(err error, format string, args ...any) error {
	if err == nil {
		err = errors.New("oauth")
	}
	return &domain.MCPError{Reason: fmt.Sprintf(format, args...), Err: err}
}

// Challenge reads a refusal's WWW-Authenticate header (the Bearer challenge's parameters).
func Challenge(status int, mcpURL string, h http.Header) domain.MCPChallenge {
	c := domain.MCPChallenge{Status: status, URL: mcpURL}
	chs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return c
	}
	for _, ch := range chs {
		if c.ResourceMetadata == "" {
			c.ResourceMetadata = ch.Params["resource_metadata"]
		}
		if ch.Scheme != "bearer" {
			continue
		}
		if c.Scopes == nil && ch.Params["scope"] != "" {
			c.Scopes = strings.Fields(ch.Params["scope"])
		}
		if c.Error == "" {
			c.Error = ch.Params["error"]
		}
	}
	return c
}

// Probe asks the server at mcpURL, without a token, how it wants to be authorized: its answer
// to an initialize request. A server that answers anything else than 401 gives an empty
// challenge (discovery then tries the well-known locations).
func (o *OAuth) Probe(ctx context.Context, mcpURL string) (domain.MCPChallenge, error) {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + ProtocolVersion +
		`","capabilities":{},"clientInfo":{"name":"agentorch","version":"1.0.0"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, mcpURL, strings.NewReader(body))
	if err != nil {
		return domain.MCPChallenge{}, oauthFail(err, "the URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := o.client.Do(req)
	if err != nil {
		return domain.MCPChallenge{}, oauthFail(err, "the server could not be reached: %s", reasonOf(err))
	}
	_ = resp.Body.Close() // only the status and headers matter
	if resp.StatusCode != http.StatusUnauthorized {
		return domain.MCPChallenge{URL: mcpURL}, nil
	}
	return Challenge(resp.StatusCode, mcpURL, resp.Header), nil
}

// reasonOf names a transport failure without its text.
func reasonOf(err error) string {
	if errors.Is(err, netguard.ErrForbiddenDestination) {
		return refusedReason(err)
	}
	return unreachableReason(err)
}

// Discover finds the authorization server of the MCP server that sent c: its protected resource
// metadata from c's resource_metadata, then at the path of the endpoint, then at the root; then
// that authorization server's metadata (OAuth, then OpenID, with path insertion). A server
// without protected resource metadata is the 2025-03-26 spec's: its origin is the
// authorization server, and without metadata its endpoints are /authorize, /token, /register.
func (o *OAuth) Discover(ctx context.Context, c domain.MCPChallenge) (*domain.MCPOAuthServer, error) {
	prm, legacy, err := o.resourceMetadata(ctx, c)
	if err != nil {
		return nil, err
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, o.client)
	if err != nil && legacy {
		asm, err = o.legacyMetadata(ctx, issuer)
	}
	if err != nil {
		return nil, oauthFail(err, "the authorization server's metadata could not be read")
	}
	if asm == nil {
		base := strings.TrimSuffix(issuer, "/")
		asm = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: base + "/authorize",
			TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register"}
	}
	return &domain.MCPOAuthServer{Resource: prm.Resource, Issuer: asm.Issuer, AuthorizationEndpoint: asm.AuthorizationEndpoint,
		TokenEndpoint: asm.TokenEndpoint, RegistrationEndpoint: asm.RegistrationEndpoint,
		AuthMethods: asm.TokenEndpointAuthMethodsSupported, CIMD: asm.ClientIDMetadataDocumentSupported,
		ResourceScopes: prm.ScopesSupported, ServerScopes: asm.ScopesSupported, Legacy: legacy}, nil
}

// resourceMetadata reads the protected resource metadata of c's server (RFC 9728 §3, the MCP
// spec's order); none found is the 2025-03-26 fallback (legacy).
func (o *OAuth) resourceMetadata(ctx context.Context, c domain.MCPChallenge) (_ *oauthex.ProtectedResourceMetadata, legacy bool, _ error) {
	u, err := url.Parse(c.URL)
	if err != nil || !u.IsAbs() {
		return nil, false, oauthFail(err, "the MCP server URL is not absolute")
	}
	type candidate struct{ metadata, resource string }
	var cands []candidate
	if c.ResourceMetadata != "" {
		cands = append(cands, candidate{c.ResourceMetadata, c.URL})
	}
	m := *u
	m.RawQuery, m.Fragment = "", ""
	if p := strings.Trim(u.Path, "/"); p != "" {
		m.Path = "/.well-known/oauth-protected-resource/" + p
		cands = append(cands, candidate{m.String(), c.URL})
	}
	root := *u
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	m.Path = "/.well-known/oauth-protected-resource"
	cands = append(cands, candidate{m.String(), root.String()})
	var mismatch error
	for _, cd := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, cd.metadata, cd.resource, o.client)
		if err != nil || prm == nil {
			if err != nil && strings.Contains(err.Error(), "got metadata resource") {
				mismatch = err
			}
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, false, oauthFail(nil, "the server's protected resource metadata names no authorization server")
		}
		return prm, false, nil
	}
	if mismatch != nil {
		// Metadata that names another resource is not this server's: tokens for it must not be
		// asked for (RFC 9728 §3.3).
		return nil, false, oauthFail(mismatch, "the server's protected resource metadata is for another resource")
	}
	return &oauthex.ProtectedResourceMetadata{Resource: c.URL, AuthorizationServers: []string{root.String()}}, true, nil
}

// legacyMetadata reads the metadata of a 2025-03-26 server's authorization server, at the
// root of the MCP server's origin, whose issuer may name a path there (the older spec did not
// tie the two): its issuer read first, then the document fetched again and checked against it
// as RFC 8414 checks any other.
func (o *OAuth) legacyMetadata(ctx context.Context, origin string) (*oauthex.AuthServerMeta, error) {
	metaURL := strings.TrimSuffix(origin, "/") + "/.well-known/oauth-authorization-server"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metaURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("authorization server metadata: HTTP %d", resp.StatusCode)
	}
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if doc.Issuer == "" {
		return nil, errors.New("authorization server metadata without an issuer")
	}
	return oauthex.GetAuthServerMeta(ctx, metaURL, doc.Issuer, o.client)
}

// Register resolves who the service is at srv's authorization server: a Client ID Metadata
// Document's URL where the server supports them (and no client id is given), the given
// (pre-registered) client, else a dynamic registration (RFC 7591) for grant. The result's
// AuthMethod is one the server supports.
func (o *OAuth) Register(ctx context.Context, srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, grant string) (domain.MCPOAuthClient, error) {
	switch {
	case c.ID == "" && c.MetadataURL != "" && srv.CIMD:
		c.ID, c.Secret, c.AuthMethod = c.MetadataURL, "", domain.MCPAuthMethodNone
		return c, nil
	case c.ID != "":
		if c.AuthMethod == "" {
			c.AuthMethod = pickAuthMethod(srv.AuthMethods, c.Secret != "")
		}
		return c, nil
	case srv.RegistrationEndpoint == "":
		return c, oauthFail(nil, "the authorization server offers no dynamic client registration: give a client_id")
	}
	meta := &oauthex.ClientRegistrationMetadata{
		ClientName:              cmpOr(c.Name, "agentorch"),
		TokenEndpointAuthMethod: pickAuthMethod(srv.AuthMethods, true),
		GrantTypes:              []string{grant},
	}
	if grant == domain.MCPGrantAuthorizationCode {
		meta.GrantTypes = append(meta.GrantTypes, "refresh_token")
		meta.ResponseTypes = []string{"code"}
		meta.RedirectURIs = []string{c.RedirectURL}
	}
	reg, err := oauthex.RegisterClient(ctx, srv.RegistrationEndpoint, meta, o.client)
	if err != nil {
		return c, oauthFail(err, "the dynamic client registration failed")
	}
	c.ID, c.Secret = reg.ClientID, reg.ClientSecret
	c.AuthMethod = reg.TokenEndpointAuthMethod
	if c.AuthMethod == "" {
		c.AuthMethod = meta.TokenEndpointAuthMethod
	}
	if c.Secret == "" {
		c.AuthMethod = domain.MCPAuthMethodNone
	}
	return c, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pickAuthMethod is the token endpoint auth method to use among those a server supports
// (client_secret_basic when it lists none, RFC 8414 §2); none for a client without a secret.
func pickAuthMethod(supported []string, secret bool) string {
	if !secret {
		return domain.MCPAuthMethodNone
	}
	if len(supported) == 0 {
		return domain.MCPAuthMethodBasic
	}
	for _, m := range []string{domain.MCPAuthMethodBasic, domain.MCPAuthMethodPost, domain.MCPAuthMethodNone} {
		if slices.Contains(supported, m) {
			return m
		}
	}
	return domain.MCPAuthMethodBasic
}

// config is the oauth2 configuration of c at srv.
func config(srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, scopes []string) *oauth2.Config {
	style := oauth2.AuthStyleInHeader
	secret := c.Secret
	switch c.AuthMethod {
	case domain.MCPAuthMethodPost:
		style = oauth2.AuthStyleInParams
	case domain.MCPAuthMethodNone:
		style, secret = oauth2.AuthStyleInParams, ""
	}
	return &oauth2.Config{ClientID: c.ID, ClientSecret: secret, RedirectURL: c.RedirectURL, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: srv.AuthorizationEndpoint, TokenURL: srv.TokenEndpoint, AuthStyle: style}}
}

// AuthCodeURL is where a person authorizes c for scopes: the authorization request with state,
// a PKCE S256 challenge of a new verifier and the resource. The caller keeps state and the
// verifier (a secret) until the redirect comes back.
func (o *OAuth) AuthCodeURL(srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, scopes []string, state string) (authURL, verifier string) {
	verifier = oauth2.GenerateVerifier()
	authURL = config(srv, c, scopes).AuthCodeURL(state, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("resource", srv.Resource))
	return authURL, verifier
}

// Exchange trades an authorization code for a token (with the PKCE verifier and the resource).
func (o *OAuth) Exchange(ctx context.Context, srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, scopes []string, code, verifier string) (*domain.MCPToken, error) {
	tok, err := config(srv, c, scopes).Exchange(o.ctx(ctx), code, oauth2.VerifierOption(verifier),
		oauth2.SetAuthURLParam("resource", srv.Resource))
	if err != nil {
		return nil, tokenFail(err, "the authorization code could not be exchanged for a token")
	}
	return token(tok, scopes), nil
}

// ClientCredentials gets a token for c itself (the client credentials grant, with the resource),
// authenticated with its secret or, with a private key, a signed JWT (RFC 7523).
func (o *OAuth) ClientCredentials(ctx context.Context, srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, scopes []string) (*domain.MCPToken, error) {
	cfg := config(srv, c, scopes)
	cc := &clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.Endpoint.TokenURL,
		Scopes: scopes, AuthStyle: cfg.Endpoint.AuthStyle, EndpointParams: url.Values{"resource": {srv.Resource}}}
	if c.AuthMethod == domain.MCPAuthMethodJWT {
		assertion, err := clientAssertion(c, srv.Issuer)
		if err != nil {
			return nil, oauthFail(err, "the client's private key cannot sign (an EC P-256 key in PEM is needed)")
		}
		cc.ClientSecret, cc.AuthStyle = "", oauth2.AuthStyleInParams
		cc.EndpointParams.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		cc.EndpointParams.Set("client_assertion", assertion)
	}
	tok, err := cc.Token(o.ctx(ctx))
	if err != nil {
		return nil, tokenFail(err, "the client credentials were refused")
	}
	return token(tok, scopes), nil
}

// Refresh trades a refresh token for a new token; the new one keeps the refresh token when
// the server sends none.
func (o *OAuth) Refresh(ctx context.Context, srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, t *domain.MCPToken) (*domain.MCPToken, error) {
	if t == nil || t.Refresh == "" {
		return nil, oauthFail(nil, "the token has expired and there is no refresh token")
	}
	old := &oauth2.Token{RefreshToken: t.Refresh, Expiry: time.Unix(1, 0)}
	tok, err := config(srv, c, t.Scopes).TokenSource(o.ctx(ctx), old).Token()
	if err != nil {
		return nil, tokenFail(err, "the token could not be refreshed")
	}
	return token(tok, t.Scopes), nil
}

func (o *OAuth) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, o.client)
}

// tokenFail names a token endpoint's refusal by its error code (never its description, which
// an authorization server may fill with what it was sent).
func tokenFail(err error, what string) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return oauthFail(err, "%s (%s)", what, quote(re.ErrorCode))
		}
		return oauthFail(err, "%s (HTTP %d)", what, re.Response.StatusCode)
	}
	return oauthFail(err, "%s", what)
}

// token is tok as the domain keeps it; asked are the scopes asked for, kept when the server
// does not say which it granted.
func token(tok *oauth2.Token, asked []string) *domain.MCPToken {
	t := &domain.MCPToken{Access: tok.AccessToken, Refresh: tok.RefreshToken, Expiry: tok.Expiry, Scopes: asked}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		t.Scopes = strings.Fields(s)
	}
	return t
}

// clientAssertion is c's JWT for the authorization server issuer (RFC 7523 §3): c's id as
// issuer and subject, the issuer as audience, five minutes, a new id; ES256.
func clientAssertion(c domain.MCPOAuthClient, issuer string) (string, error) {
	key, err := jwt.ParseECPrivateKeyFromPEM([]byte(c.PrivateKey))
	if err != nil {
		return "", err
	}
	now := time.Now()
	claims := jwt.RegisteredClaims{Issuer: c.ID, Subject: c.ID, Audience: jwt.ClaimStrings{issuer}, IssuedAt: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(5 * time.Minute)), ID: rand.Text()}
	return jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(key)
}
