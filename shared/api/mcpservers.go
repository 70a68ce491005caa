package api

import (
	"context"
	"net/http"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcpservers"
)

// MCPServerService is what the MCP-servers endpoints call; mcpservers.Service is the
// implementation.
type MCPServerService interface {
	Create(ctx context.Context, p domain.Principal, in mcpservers.CreateInput) (*domain.MCPServer, error)
	Get(ctx context.Context, p domain.Principal, id string) (*domain.MCPServer, error)
	List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.MCPServer, bool, error)
	Update(ctx context.Context, p domain.Principal, id string, in mcpservers.UpdateInput) (*domain.MCPServer, error)
	Delete(ctx context.Context, p domain.Principal, id string) error
	Refresh(ctx context.Context, p domain.Principal, id string) (*domain.MCPServer, error)
	StartAuthorization(ctx context.Context, p domain.Principal, id, redirectURL string) (*mcpservers.Authorization, error)
	CompleteAuthorization(ctx context.Context, p domain.Principal, code, state string) (*domain.MCPServer, error)
}

// NewMCPServers is the handler of the MCP-servers endpoint group alone.
func NewMCPServers(svc MCPServerService, opts Options) *Group {
	return newGroup(opts).WithMCPServers(svc)
}

// WithMCPServers adds the MCP-servers routes to g and returns it (the mcpservers function serves
// them; they are the agents' tools, managed under the agents scopes).
func (g *Group) WithMCPServers(svc MCPServerService) *Group {
	h := &mcpHandlers{svc: svc, g: g}
	// Closures rather than method values, so a group is built (its routes listed) without a service.
	get := func(ctx context.Context, p domain.Principal, id string) (*domain.MCPServer, error) {
		return svc.Get(ctx, p, id)
	}
	del := func(ctx context.Context, p domain.Principal, id string) error { return svc.Delete(ctx, p, id) }
	// Refresh answers 200 with the record, whose status and last_error say whether the server
	// could be used (a failing server is not a failed request). No body is read.
	refresh := func(ctx context.Context, p domain.Principal, id string) (*domain.MCPServer, error) {
		return svc.Refresh(ctx, p, id)
	}
	g.handle(http.MethodPost, "/api/v1/mcp-servers/", false, h.create)
	g.handle(http.MethodGet, "/api/v1/mcp-servers/", false, listPage(domain.ScopeAgentsRead, func(r *http.Request, offset, limit int) ([]mcpServerJSON, bool, error) {
		list, more, err := svc.List(r.Context(), principal(r), offset, limit)
		out := make([]mcpServerJSON, len(list))
		for i, s := range list {
			out[i] = mcpServerView(s)
		}
		return out, more, err
	}))
	g.handle(http.MethodGet, "/api/v1/mcp-servers/{id}/", false, getByID(domain.ScopeAgentsRead, "id", viewed(get, mcpServerView)))
	g.handle(http.MethodPatch, "/api/v1/mcp-servers/{id}/", false, h.update)
	g.handle(http.MethodDelete, "/api/v1/mcp-servers/{id}/", false, deleteByID(domain.ScopeAgentsWrite, "id", del))
	g.handle(http.MethodGet, "/api/v1/mcp-servers/{id}/tools/", false, getByID(domain.ScopeAgentsRead, "id", viewed(get, mcpToolsView)))
	g.handle(http.MethodPost, "/api/v1/mcp-servers/{id}/refresh/", false, getByID(domain.ScopeAgentsWrite, "id", viewed(refresh, mcpServerView)))
	g.handle(http.MethodPost, "/api/v1/mcp-servers/{id}/authorize/", false, h.authorize)
	g.handle(http.MethodPost, "/api/v1/mcp-servers/oauth/callback/", false, h.callback)
	return g
}

// authorizeJSON is the body of POST /mcp-servers/{id}/authorize/ (all optional).
type authorizeJSON struct {
	RedirectURI string `json:"redirect_uri"`
}

// authorizationJSON answers it: the URL a person opens to authorize the server.
type authorizationJSON struct {
	AuthorizationURL string    `json:"authorization_url"`
	ExpiresAt        time.Time `json:"expires_at"`
}

// authorize starts the OAuth authorization code grant of a server (the state and PKCE
// verifier stay sealed on the server, company-scoped, for mcpservers.AuthorizationTTL).
func (h *mcpHandlers) authorize(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeAgentsWrite); err != nil {
		return err
	}
	var in authorizeJSON
	if r.ContentLength != 0 {
		if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
			return err
		}
	}
	a, err := h.svc.StartAuthorization(r.Context(), principal(r), r.PathValue("id"), in.RedirectURI)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, authorizationJSON{AuthorizationURL: a.URL, ExpiresAt: a.ExpiresAt})
	return nil
}

// callbackJSON is what the authorization server's redirect carried, as the studio's callback
// page posts it.
type callbackJSON struct {
	Code  string `json:"code"`
	State string `json:"state"`
}

// callback completes an authorization: the server with its tools read with the new token.
func (h *mcpHandlers) callback(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeAgentsWrite); err != nil {
		return err
	}
	var in callbackJSON
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	s, err := h.svc.CompleteAuthorization(r.Context(), principal(r), in.Code, in.State)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, mcpServerView(s))
	return nil
}

type mcpHandlers struct {
	svc MCPServerService
	g   *Group
}

func (h *mcpHandlers) create(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeAgentsWrite); err != nil {
		return err
	}
	var in mcpservers.CreateInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	s, err := h.svc.Create(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, mcpServerView(s))
	return nil
}

func (h *mcpHandlers) update(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeAgentsWrite); err != nil {
		return err
	}
	var in mcpservers.UpdateInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	s, err := h.svc.Update(r.Context(), principal(r), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, mcpServerView(s))
	return nil
}

// mcpServerJSON is an MCP server as the API shows it: the header names, never their values.
type mcpServerJSON struct {
	ID               string       `json:"id"`
	Name             string       `json:"name"`
	URL              string       `json:"url"`
	Description      string       `json:"description"`
	HeaderNames      []string     `json:"header_names"`
	Auth             *mcpAuthJSON `json:"auth,omitempty"`
	TimeoutMS        int          `json:"timeout_ms"`
	Status           string       `json:"status"`
	LastError        *string      `json:"last_error"`
	ToolCount        int          `json:"tool_count"`
	ToolsRefreshedAt time.Time    `json:"tools_refreshed_at"`
	CreatedAt        time.Time    `json:"created_at"`
	UpdatedAt        time.Time    `json:"updated_at"`
}

// mcpAuthJSON is a server's OAuth as the API shows it: never its client secret or tokens.
type mcpAuthJSON struct {
	Type            string   `json:"type"`
	Grant           string   `json:"grant"`
	ClientID        string   `json:"client_id,omitempty"`
	ClientSecretSet bool     `json:"client_secret_set"`
	Scopes          []string `json:"scopes"`
	Authorized      bool     `json:"authorized"`
}

func mcpServerView(s *domain.MCPServer) mcpServerJSON {
	v := mcpServerJSON{ID: s.ID, Name: s.Name, URL: s.URL, Description: s.Description, HeaderNames: s.HeaderNames,
		TimeoutMS: s.TimeoutMS, Status: s.Status, ToolCount: len(s.Tools), ToolsRefreshedAt: s.ToolsAt,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if v.HeaderNames == nil {
		v.HeaderNames = []string{}
	}
	if a := s.Auth; a != nil {
		v.Auth = &mcpAuthJSON{Type: a.Type, Grant: a.Grant, ClientID: a.ClientID, ClientSecretSet: a.ClientSecretSet,
			Scopes: a.Scopes, Authorized: a.Authorized}
		if v.Auth.Scopes == nil {
			v.Auth.Scopes = []string{}
		}
	}
	if v.TimeoutMS == 0 {
		v.TimeoutMS = mcpservers.DefaultTimeoutMS
	}
	if s.LastError != "" {
		v.LastError = &s.LastError
	}
	return v
}

// mcpToolsJSON answers GET /mcp-servers/{id}/tools/: the tools as last read.
type mcpToolsJSON struct {
	Tools       []mcpToolJSON `json:"tools"`
	RefreshedAt time.Time     `json:"refreshed_at"`
}

// mcpToolJSON is one tool of an MCP server.
type mcpToolJSON struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

func mcpToolsView(s *domain.MCPServer) mcpToolsJSON {
	tools := make([]mcpToolJSON, len(s.Tools))
	for i, t := range s.Tools {
		tools[i] = mcpToolJSON(t)
		if t.InputSchema == nil {
			tools[i].InputSchema = map[string]any{"type": "object"}
		}
	}
	return mcpToolsJSON{Tools: tools, RefreshedAt: s.ToolsAt}
}
