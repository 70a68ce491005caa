package mcpservers

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// Servers behind OAuth 2.1 (the MCP authorization spec, 2025-11-25). A server registered with
// auth {type: "oauth"} holds its grant sealed beside its headers: the authorization server as
// discovered, the client (given, or registered dynamically) with its secret, the token, and a
// pending authorization (state and PKCE verifier) while a person authorizes.

// OAuth is the OAuth 2.1 client the feature needs (the mcp connector implements it). Its
// failures are *domain.MCPError, whose Reason is safe to show.
type OAuth interface {
	// Probe asks the server, without a token, how it wants to be authorized (its 401's challenge).
	Probe(ctx context.Context, mcpURL string) (domain.MCPChallenge, error)
	// Discover finds the server's authorization server from its challenge.
	Discover(ctx context.Context, c domain.MCPChallenge) (*domain.MCPOAuthServer, error)
	// Register resolves the client: a metadata document URL, the given client, or a dynamic registration.
	Register(ctx context.Context, srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, grant string) (domain.MCPOAuthClient, error)
	// AuthCodeURL is the authorization request for state, with a new PKCE verifier.
	AuthCodeURL(srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, scopes []string, state string) (authURL, verifier string)
	// Exchange trades an authorization code for a token.
	Exchange(ctx context.Context, srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, scopes []string, code, verifier string) (*domain.MCPToken, error)
	// ClientCredentials gets a token for the client itself.
	ClientCredentials(ctx context.Context, srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, scopes []string) (*domain.MCPToken, error)
	// Refresh trades the token's refresh token for a new token.
	Refresh(ctx context.Context, srv *domain.MCPOAuthServer, c domain.MCPOAuthClient, t *domain.MCPToken) (*domain.MCPToken, error)
}

// maxAuthorizations bounds the renewals one connection tries before it gives up.
const maxAuthorizations = 3

// AuthorizationTTL is how long an authorization a person started may come back.
const AuthorizationTTL = 10 * time.Minute

// WithOAuth makes s register servers behind OAuth through o; redirectURL (the studio's
// /studio/oauth/callback on the public base URL) is where authorizations come back when the
// caller names no other ("" : the caller must name one).
func (s *Service) WithOAuth(o OAuth, redirectURL string) *Service {
	s.oauth, s.redirectURL = o, redirectURL
	return s
}

// errAuthRequired marks a failure that a person's authorization would cure (RecordUse and
// Refresh set status auth_required on it).
var errAuthRequired = errors.New("MCP server authorization required")

// grant is the sealed part of a server's OAuth (SealedAuth).
type grant struct {
	Server  *domain.MCPOAuthServer `json:"server,omitempty"`
	Client  domain.MCPOAuthClient  `json:"client"`
	Dynamic string                 `json:"dynamic_redirect,omitempty"` // the redirect URI a dynamic registration was for
	Token   *domain.MCPToken       `json:"token,omitempty"`
	Pending *pending               `json:"pending,omitempty"`
}

// pending is an authorization a person has started: what the callback checks and sends.
type pending struct {
	State       string    `json:"state"`
	Verifier    string    `json:"verifier"`
	RedirectURL string    `json:"redirect_url"`
	Scopes      []string  `json:"scopes,omitempty"`
	Expires     time.Time `json:"expires"`
}

// authAAD binds a sealed grant to its company and server.
func authAAD(srv *domain.MCPServer) []byte {
	return []byte("mcp-server-auth\x00" + srv.Company + "\x00" + srv.ID)
}

func (s *Service) sealGrant(ctx context.Context, srv *domain.MCPServer, g *grant) error {
	plain, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("encode OAuth grant: %w", err)
	}
	if srv.SealedAuth, err = s.seal.Seal(ctx, plain, authAAD(srv)); err != nil {
		return fmt.Errorf("seal OAuth grant of MCP server %s: %w", srv.ID, err)
	}
	srv.Auth.Authorized = g.Token != nil
	return nil
}

func (s *Service) openGrant(ctx context.Context, srv *domain.MCPServer) (*grant, error) {
	g := &grant{}
	if len(srv.SealedAuth) == 0 {
		return g, nil
	}
	plain, err := s.seal.Open(ctx, srv.SealedAuth, authAAD(srv))
	if err != nil {
		return nil, fmt.Errorf("open OAuth grant of MCP server %s: %w", srv.ID, err)
	}
	if err := json.Unmarshal(plain, g); err != nil {
		return nil, fmt.Errorf("decode OAuth grant of MCP server %s: %w", srv.ID, err)
	}
	return g, nil
}

// setAuth prepares a new registration's OAuth: the server's authorization server discovered
// (a server that names none is a 400 on url), and for client credentials a first token.
func (s *Service) setAuth(ctx context.Context, srv *domain.MCPServer, in *AuthInput) (*grant, error) {
	if s.oauth == nil {
		return nil, domain.Invalid([]domain.FieldError{{Field: "auth", Message: "OAuth is not available in this deployment"}})
	}
	srv.Auth = &domain.MCPServerAuth{Type: AuthTypeOAuth, Grant: in.grant(), ClientID: in.ClientID,
		ClientSecretSet: in.ClientSecret != "", Scopes: in.Scopes}
	g := &grant{Client: domain.MCPOAuthClient{ID: in.ClientID, Secret: in.ClientSecret}}
	ch, err := s.discover(ctx, srv, g)
	if err != nil {
		return nil, err
	}
	if srv.Auth.Grant == domain.MCPGrantClientCredentials {
		if g.Client, err = s.oauth.Register(ctx, g.Server, g.Client, srv.Auth.Grant); err != nil {
			return nil, authUnusable(err)
		}
		scopes := in.Scopes
		if len(scopes) == 0 {
			scopes = domain.MCPScopes(ch, g.Server, nil, false)
		}
		if g.Token, err = s.oauth.ClientCredentials(ctx, g.Server, g.Client, scopes); err != nil {
			return nil, authUnusable(err)
		}
	}
	return g, s.sealGrant(ctx, srv, g)
}

// discover finds srv's authorization server into g, from the server's own challenge.
func (s *Service) discover(ctx context.Context, srv *domain.MCPServer, g *grant) (domain.MCPChallenge, error) {
	ctx, cancel := context.WithTimeout(ctx, RegisterBudget)
	defer cancel()
	ch, err := s.oauth.Probe(ctx, srv.URL)
	if err != nil {
		return ch, authUnusable(err)
	}
	ch.URL = srv.URL
	if g.Server, err = s.oauth.Discover(ctx, ch); err != nil {
		return ch, authUnusable(err)
	}
	if ch.Status != 401 && g.Server.Legacy {
		return ch, unusable("authorization: the server asks for no OAuth (it answered without a 401 and has no protected resource metadata)", nil)
	}
	return ch, nil
}

// authUnusable is the 400 on url of a server whose authorization cannot be set up.
func authUnusable(err error) error {
	var me *domain.MCPError
	if errors.As(err, &me) {
		return unusable("authorization: "+me.Reason, err)
	}
	return err
}

// Authorization is an authorization a person is to make: the URL to open, until when.
type Authorization struct {
	URL       string
	ExpiresAt time.Time
}

// StartAuthorization begins the authorization code grant of one of p's company's servers: the
// authorization server discovered again, the client registered when it needs to be, and the
// authorization URL, whose state and PKCE verifier are kept sealed on the server for
// AuthorizationTTL. redirectURL is where the authorization server sends the person back (""
// for the service's own: the studio's callback page).
func (s *Service) StartAuthorization(ctx context.Context, p domain.Principal, id, redirectURL string) (*Authorization, error) {
	prev, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if prev.Auth == nil || prev.Auth.Grant != domain.MCPGrantAuthorizationCode || s.oauth == nil {
		return nil, domain.Errorf(domain.KindConflict, "MCP server %s does not use the OAuth authorization code grant", prev.Name)
	}
	if redirectURL == "" {
		redirectURL = s.redirectURL
	}
	if msg := checkRedirect(redirectURL); msg != "" {
		return nil, domain.Invalid([]domain.FieldError{{Field: "redirect_uri", Message: msg}})
	}
	srv := *prev
	auth := *prev.Auth
	srv.Auth = &auth
	g, err := s.openGrant(ctx, &srv)
	if err != nil {
		return nil, err
	}
	ch, err := s.discover(ctx, &srv, g)
	if err != nil {
		return nil, err
	}
	client := g.Client
	client.RedirectURL = redirectURL
	if srv.Auth.ClientID == "" && (client.ID == "" || g.Dynamic != redirectURL) {
		// No client given: a metadata document or a dynamic registration, once per redirect URI.
		if client, err = s.oauth.Register(ctx, g.Server, domain.MCPOAuthClient{RedirectURL: redirectURL, Name: "agentorch"},
			domain.MCPGrantAuthorizationCode); err != nil {
			return nil, authUnusable(err)
		}
		g.Dynamic = redirectURL
	} else if client, err = s.oauth.Register(ctx, g.Server, client, domain.MCPGrantAuthorizationCode); err != nil {
		return nil, authUnusable(err)
	}
	g.Client = client
	scopes := srv.Auth.Scopes
	if len(scopes) == 0 {
		var granted []string
		if g.Token != nil {
			granted = g.Token.Scopes
		}
		scopes = domain.MCPScopes(ch, g.Server, granted, true)
	}
	state := srv.ID + "." + rand.Text()
	authURL, verifier := s.oauth.AuthCodeURL(g.Server, client, scopes, state)
	expires := s.now().UTC().Add(AuthorizationTTL)
	g.Pending = &pending{State: state, Verifier: verifier, RedirectURL: redirectURL, Scopes: scopes, Expires: expires}
	if err := s.sealGrant(ctx, &srv, g); err != nil {
		return nil, err
	}
	srv.UpdatedAt = s.later(prev.UpdatedAt)
	if err := s.store.UpdateMCPServer(ctx, &srv, prev); err != nil {
		return nil, storeErr("start the authorization of MCP server", srv.Name, err)
	}
	return &Authorization{URL: authURL, ExpiresAt: expires}, nil
}

// checkRedirect says what is wrong with a redirect URI, or "".
func checkRedirect(raw string) string {
	if raw == "" {
		return "is required: where the authorization server sends the person back (the studio's /studio/oauth/callback)"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" || u.User != nil {
		return "must be an absolute http or https URL without a fragment"
	}
	return ""
}

// CompleteAuthorization ends an authorization that came back with code and state (the studio's
// callback page posts them): the state must be a pending one of one of p's company's servers,
// not expired; the code is exchanged for a token (with the PKCE verifier), and the server's
// tools are read with it. A server that then cannot be used is answered with status error and
// last_error, as a refresh does.
func (s *Service) CompleteAuthorization(ctx context.Context, p domain.Principal, code, state string) (*domain.MCPServer, error) {
	id, _, _ := strings.Cut(state, ".")
	badState := domain.Invalid([]domain.FieldError{{Field: "state",
		Message: "is not the state of an authorization in progress of your company; start the authorization again"}})
	if uuid.Validate(id) != nil || code == "" {
		if code == "" {
			return nil, domain.Invalid([]domain.FieldError{{Field: "code", Message: "is required"}})
		}
		return nil, badState
	}
	prev, err := s.Get(ctx, p, id)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, badState
	}
	if err != nil {
		return nil, err
	}
	if prev.Auth == nil {
		return nil, badState
	}
	srv := *prev
	auth := *prev.Auth
	srv.Auth = &auth
	g, err := s.openGrant(ctx, &srv)
	if err != nil {
		return nil, err
	}
	pd := g.Pending
	if pd == nil || subtle.ConstantTimeCompare([]byte(pd.State), []byte(state)) != 1 {
		return nil, badState
	}
	if s.now().After(pd.Expires) {
		return nil, domain.Invalid([]domain.FieldError{{Field: "state",
			Message: fmt.Sprintf("belongs to an authorization that expired (they last %s); start it again", AuthorizationTTL)}})
	}
	client := g.Client
	client.RedirectURL = pd.RedirectURL
	tok, err := s.oauth.Exchange(ctx, g.Server, client, pd.Scopes, code, pd.Verifier)
	var me *domain.MCPError
	if errors.As(err, &me) {
		return nil, domain.Invalid([]domain.FieldError{{Field: "code", Message: me.Reason}})
	}
	if err != nil {
		return nil, err
	}
	g.Token, g.Pending = tok, nil
	if err := s.sealGrant(ctx, &srv, g); err != nil {
		return nil, err
	}
	headers, err := s.headers(ctx, prev)
	if err != nil {
		return nil, err
	}
	if err := s.connect(ctx, &srv, headers); err != nil {
		if srv.Status, srv.LastError, err = failedConnect(err); err != nil {
			return nil, err
		}
	}
	srv.UpdatedAt = s.later(prev.UpdatedAt)
	if err := s.store.UpdateMCPServer(ctx, &srv, prev); err != nil {
		return nil, storeErr("complete the authorization of MCP server", srv.Name, err)
	}
	return &srv, nil
}

// failedConnect is the status and last_error of a server whose connection failed as an MCP
// server (auth_required when a person's authorization would cure it), or err itself.
func failedConnect(err error) (status, lastError string, _ error) {
	var reason *domain.Error
	switch {
	case errors.Is(err, errAuthRequired):
		return domain.MCPStatusAuthRequired, connectReason(err), nil
	case errors.As(err, &reason) && reason.Kind == domain.KindInvalid:
		return domain.MCPStatusError, connectReason(err), nil
	}
	return "", "", err
}

// createWithAuth sets up a new registration's OAuth: with client credentials it connects with
// its first token; with the authorization code it waits for a person (status auth_required, no
// tools yet) and connects when the authorization comes back.
func (s *Service) createWithAuth(ctx context.Context, srv *domain.MCPServer, in CreateInput) error {
	g, err := s.setAuth(ctx, srv, in.Auth)
	if err != nil {
		return err
	}
	if g.Token != nil {
		return s.connect(ctx, srv, in.Headers)
	}
	srv.Tools, srv.Status = []domain.MCPTool{}, domain.MCPStatusAuthRequired
	srv.LastError = "not authorized yet: start an authorization (POST /api/v1/mcp-servers/" + srv.ID + "/authorize/) and open its authorization_url"
	return nil
}

// resetAuth drops srv's token and pending authorization (its URL changed); client credentials
// get a new token for the new URL at once.
func (s *Service) resetAuth(ctx context.Context, srv *domain.MCPServer) error {
	auth := *srv.Auth
	srv.Auth = &auth
	g, err := s.openGrant(ctx, srv)
	if err != nil {
		return err
	}
	in := &AuthInput{Type: AuthTypeOAuth, Grant: auth.Grant, ClientID: auth.ClientID, ClientSecret: g.Client.Secret, Scopes: auth.Scopes}
	if auth.ClientID == "" {
		in.ClientSecret = ""
	}
	if _, err := s.setAuth(ctx, srv, in); err != nil {
		return err
	}
	if needsPerson(srv) {
		srv.Tools, srv.Status = []domain.MCPTool{}, domain.MCPStatusAuthRequired
		srv.LastError = "the URL changed: authorize the server again (POST /api/v1/mcp-servers/" + srv.ID + "/authorize/)"
	}
	return nil
}

// needsPerson reports a server behind OAuth that holds no token: only a person can give one.
func needsPerson(srv *domain.MCPServer) bool {
	return srv.Auth != nil && !srv.Auth.Authorized
}
