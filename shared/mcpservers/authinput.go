package mcpservers

import (
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// AuthTypeOAuth is the one auth type: OAuth 2.1 as the MCP authorization spec defines it.
const AuthTypeOAuth = "oauth"

// Limits of an auth input.
const (
	MaxClientIDLength     = 1024
	MaxClientSecretLength = 4096
	MaxScopes             = 50
	MaxScopeLength        = 256
)

// AuthInput is a registration's auth: {type: "oauth", grant?, client_id?, client_secret?,
// scopes?}. The client secret is a secret: sealed, never shown, never in an error.
type AuthInput struct {
	Type string `json:"type"`
	// Grant: "authorization_code" (the default: a person authorizes once, refreshed after) or
	// "client_credentials" (the service authorizes itself; client_id and client_secret required).
	Grant string `json:"grant"`
	// ClientID and ClientSecret of a client registered at the authorization server beforehand;
	// none: a Client ID Metadata Document or a dynamic registration, where the server offers one.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// Scopes to ask for; none: those the server names (its challenge, else its metadata).
	Scopes []string `json:"scopes" want:"an array of scope strings"`
}

func (in *AuthInput) grant() string {
	if in.Grant == "" {
		return domain.MCPGrantAuthorizationCode
	}
	return in.Grant
}

// check validates an auth beside the registration's headers.
func (in *AuthInput) check(headers map[string]string, errs *fieldErrs) {
	if in.Type != AuthTypeOAuth {
		errs.add("auth.type", "must be %q", AuthTypeOAuth)
	}
	switch in.grant() {
	case domain.MCPGrantAuthorizationCode:
	case domain.MCPGrantClientCredentials:
		if in.ClientID == "" || in.ClientSecret == "" {
			errs.add("auth.client_id", "and auth.client_secret are required with the client_credentials grant")
		}
	default:
		errs.add("auth.grant", "must be %q or %q", domain.MCPGrantAuthorizationCode, domain.MCPGrantClientCredentials)
	}
	if len(in.ClientID) > MaxClientIDLength || !validHeaderValue(in.ClientID) {
		errs.add("auth.client_id", "must be at most %d characters, without control characters", MaxClientIDLength)
	}
	if len(in.ClientSecret) > MaxClientSecretLength || !validHeaderValue(in.ClientSecret) {
		errs.add("auth.client_secret", "must be at most %d characters, without control characters", MaxClientSecretLength)
	}
	if in.ClientSecret != "" && in.ClientID == "" {
		errs.add("auth.client_id", "is required with auth.client_secret")
	}
	if len(in.Scopes) > MaxScopes {
		errs.add("auth.scopes", "must hold at most %d scopes", MaxScopes)
	}
	for _, s := range in.Scopes {
		if s == "" || len(s) > MaxScopeLength || strings.ContainsAny(s, " \t\"\\") || !validHeaderValue(s) {
			errs.add("auth.scopes", "must be scope tokens of 1 to %d characters without spaces, quotes or backslashes", MaxScopeLength)
			break
		}
	}
	for name := range headers {
		if strings.EqualFold(name, "Authorization") {
			errs.add("headers."+name, "cannot be given with auth: the OAuth token is sent as Authorization")
		}
	}
}
