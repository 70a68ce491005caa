package domain

import (
	"context"
	"slices"
	"time"
)

// The seams of MCP servers behind OAuth 2.1 (the MCP authorization spec, 2025-11-25): what the
// mcp adapter (the protocol) and the mcpservers feature (the stored grants) agree on.

// OAuth grants a registered MCP server may use.
const (
	MCPGrantAuthorizationCode = "authorization_code" // a person authorizes once in a browser; refreshed after
	MCPGrantClientCredentials = "client_credentials" // the service authorizes itself with its client secret
)

// MCPStatusAuthRequired is the status of a server that needs a person to authorize (again).
const MCPStatusAuthRequired = "auth_required"

// Token endpoint authentication methods (RFC 7591).
const (
	MCPAuthMethodBasic = "client_secret_basic"
	MCPAuthMethodPost  = "client_secret_post"
	MCPAuthMethodNone  = "none"
	MCPAuthMethodJWT   = "private_key_jwt" // RFC 7523; client credentials only (the conformance suite's extension)
)

// MCPInsufficientScope is the error a server names in a 403 that asks for more scope.
const MCPInsufficientScope = "insufficient_scope"

// MCPServerAuth is how a registered server is authorized, without its secrets (those are in
// MCPServer.SealedAuth): what the API shows.
type MCPServerAuth struct {
	Type            string   `json:"type"`  // "oauth"
	Grant           string   `json:"grant"` // MCPGrantAuthorizationCode or MCPGrantClientCredentials
	ClientID        string   `json:"client_id,omitempty"`
	ClientSecretSet bool     `json:"client_secret_set"`
	Scopes          []string `json:"scopes,omitempty"` // asked for; none: those the server names
	Authorized      bool     `json:"authorized"`       // a token is held
}

// MCPChallenge is what a server said when it refused a request (its WWW-Authenticate).
type MCPChallenge struct {
	Status           int      // 401 or 403
	URL              string   // the MCP endpoint that refused
	ResourceMetadata string   // resource_metadata: where its protected resource metadata is
	Scopes           []string // scope: what it asks for
	Error            string   // error: invalid_token, insufficient_scope …
}

// MCPAuth gives a connection to an OAuth-protected MCP server its access token. The mcp adapter
// calls Token before each request and Authorize when the server refuses one (401, or 403 with
// insufficient_scope); the request is then sent once more.
type MCPAuth interface {
	// Token is the access token to send ("" for none yet), refreshed when it has expired.
	Token(ctx context.Context) (string, error)
	// Authorize gets a token the server will take, or fails with an *MCPError saying why.
	Authorize(ctx context.Context, c MCPChallenge) error
}

// MCPOAuthServer is what discovery found about a protected MCP server and its authorization
// server: enough to authorize and to refresh without discovering again.
type MCPOAuthServer struct {
	Resource              string   `json:"resource"` // the canonical URI tokens are asked for (RFC 8707)
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RegistrationEndpoint  string   `json:"registration_endpoint,omitempty"`
	AuthMethods           []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	CIMD                  bool     `json:"client_id_metadata_document_supported,omitempty"`
	ResourceScopes        []string `json:"resource_scopes_supported,omitempty"` // the protected resource's scopes_supported
	ServerScopes          []string `json:"scopes_supported,omitempty"`          // the authorization server's
	Legacy                bool     `json:"legacy,omitempty"`                    // no protected resource metadata: the 2025-03-26 spec's fallbacks
}

// MCPOAuthClient is who the service is at an authorization server.
type MCPOAuthClient struct {
	ID          string `json:"client_id,omitempty"`
	Secret      string `json:"client_secret,omitempty"`
	AuthMethod  string `json:"token_endpoint_auth_method,omitempty"` // "" picks one the server supports
	MetadataURL string `json:"-"`                                    // a Client ID Metadata Document's URL, used as client_id where supported
	PrivateKey  string `json:"-"`                                    // PEM: authenticates with a signed JWT (private_key_jwt, ES256) instead of a secret
	RedirectURL string `json:"-"`
	Name        string `json:"-"` // client_name in a dynamic registration
}

// MCPToken is an OAuth token of an MCP server.
type MCPToken struct {
	Access  string    `json:"access_token"`
	Refresh string    `json:"refresh_token,omitempty"`
	Expiry  time.Time `json:"expiry,omitempty"`
	Scopes  []string  `json:"scopes,omitempty"` // as granted (or asked, when the server does not say)
}

// Expired reports a token that is past, or within a minute of, its expiry.
func (t *MCPToken) Expired(now time.Time) bool {
	return t == nil || t.Access == "" || (!t.Expiry.IsZero() && now.Add(time.Minute).After(t.Expiry))
}

// MCPScopes selects the scopes to ask for (the MCP spec's strategy): those the challenge names,
// else every one the protected resource supports, else none; with offline_access when the
// authorization server offers it and refresh tokens are wanted; joined with those granted
// before (step-up keeps what was granted).
func MCPScopes(c MCPChallenge, srv *MCPOAuthServer, granted []string, refresh bool) []string {
	want := c.Scopes
	if len(want) == 0 {
		want = srv.ResourceScopes
	}
	out := slices.Clone(granted)
	for _, s := range want {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if refresh && slices.Contains(srv.ServerScopes, "offline_access") && !slices.Contains(out, "offline_access") {
		out = append(out, "offline_access")
	}
	return out
}
