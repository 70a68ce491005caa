// Package mcpserve serves a company's agents over the Model Context Protocol: /api/v1/mcp/ speaks
// Streamable HTTP with the go-sdk's server, so that MCP clients (Claude Desktop, IDEs, other
// agents) call the agents as tools (docs/mcp-server.md). It is a package of its own so that only
// the runtime group links the SDK's server.
package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/sessions"
)

// MaxTools bounds the agents one MCP request lists as tools.
const MaxTools = 200

// Agents lists the agents a caller may see; agents.Service is the implementation.
type Agents interface {
	List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.Agent, bool, error)
}

// Runs opens sessions on stored agents and runs them; sessions.Service is the implementation.
type Runs interface {
	// OnAgentFor opens the session serving the call's end user (its user_id; nil none).
	OnAgentFor(ctx context.Context, p domain.Principal, a *domain.Agent, userID *string) (*domain.Session, error)
	Execute(ctx context.Context, p domain.Principal, sessionID string, req sessions.ExecuteRequest, obs sessions.Observer) (*sessions.Result, error)
}

// Knowledge searches a knowledge base of the caller's company; knowledge.Service is the
// implementation (nil: no search tool).
type Knowledge interface {
	Search(ctx context.Context, p domain.Principal, id string, in knowledge.SearchInput) ([]domain.Hit, error)
}

// Serve adds to g the Model Context Protocol endpoint: /api/v1/mcp/ speaks Streamable HTTP
// (the go-sdk's server, stateless, so that it runs behind API Gateway and Lambda with no session
// held between requests). The caller authenticates with an API key as on every other route; its
// tools are the agents it may read, calling one runs it, and search_knowledge_base searches
// the company's knowledge bases (docs/mcp-server.md). Answers are JSON, but for a tools/call
// that asks for progress, which is answered with an event stream carrying the run's progress.
func Serve(g *api.Group, agents Agents, runs Runs, kb Knowledge) {
	h := &mcpServe{agents: agents, runs: runs, kb: kb, g: g}
	h.json = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	h.events = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{Stateless: true})
	// POST alone: stateless, the server offers no GET stream and holds no session to DELETE, so
	// the group answers other methods with 405 in the envelope, as the transport allows.
	g.HandleAuthenticated(http.MethodPost, "/api/v1/mcp/", h.serve)
}

type mcpServe struct {
	agents Agents
	runs   Runs
	kb     Knowledge
	g      *api.Group
	// json answers with one JSON body; events with an event stream, so that notifications
	// reach the client before the answer.
	json, events *mcp.StreamableHTTPHandler
}

type mcpToolsKey struct{}

func (h *mcpServe) serve(w http.ResponseWriter, r *http.Request) error {
	p := api.Principal(r)
	if !p.Can(domain.ScopeAgentsRead) {
		return domain.ErrPermission
	}
	body, err := api.ReadBody(w, r, h.g.MaxExecuteBody())
	if err != nil {
		return err
	}
	agents, _, err := h.agents.List(r.Context(), p, 0, MaxTools)
	if err != nil {
		return err
	}
	// The search's name is kept from the agents whether or not this key may search, so that an
	// agent's tool has one name for every key.
	tools := mcpTools{search: h.kb != nil && p.Can(domain.ScopeKnowledgeRead), agents: agentTools(agents, map[string]bool{SearchToolName: true})}
	r.Body = readCloser{bytes.NewReader(body)}
	sdk := h.json
	if asksProgress(body) {
		sdk = h.events
	}
	// The answer goes on as the SDK writes it; a request the transport refuses (its plain-text
	// 4xx) is kept and answered in the error envelope, as every route answers.
	pw := &passWriter{w: w, header: http.Header{}}
	sdk.ServeHTTP(pw, r.WithContext(context.WithValue(r.Context(), mcpToolsKey{}, tools)))
	if pw.status >= 400 {
		return transportError(pw.status, pw.refused.String())
	}
	return nil
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// asksProgress tells a tools/call whose _meta carries a progressToken.
func asksProgress(body []byte) bool {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && m.Params.Meta["progressToken"] != nil
}

// passWriter hands the SDK's answer on as it is written (flushing each event of a stream), unless
// it is a refusal (400 or more), which it keeps.
type passWriter struct {
	w       http.ResponseWriter
	header  http.Header
	status  int
	refused bytes.Buffer
}

func (p *passWriter) Header() http.Header { return p.header }

func (p *passWriter) WriteHeader(code int) {
	if p.status != 0 {
		return
	}
	p.status = code
	if code < 400 {
		maps.Copy(p.w.Header(), p.header)
		p.w.WriteHeader(code)
	}
}

func (p *passWriter) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	if p.status >= 400 {
		return p.refused.Write(b)
	}
	return p.w.Write(b)
}

// Flush sends what was written so far (an event of the stream).
func (p *passWriter) Flush() {
	if p.status != 0 && p.status < 400 {
		_ = http.NewResponseController(p.w).Flush() // a writer that cannot flush sends as it writes
	}
}

// transportError is the transport's refusal as a domain error: its status's kind, its words.
func transportError(status int, text string) error {
	kind := domain.KindInternal
	switch status {
	case http.StatusBadRequest, http.StatusNotAcceptable:
		kind = domain.KindInvalid
	case http.StatusForbidden:
		kind = domain.KindPermission
	case http.StatusNotFound:
		kind = domain.KindNotFound
	case http.StatusMethodNotAllowed:
		kind = domain.KindMethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		kind = domain.KindTooLarge
	case http.StatusUnsupportedMediaType:
		kind = domain.KindUnsupportedMedia
	}
	text = strings.TrimSpace(text)
	if len(text) > 300 {
		text = text[:300]
	}
	return domain.Errorf(kind, "MCP transport: %s", text)
}

// mcpTools are the tools of one request, made once (the SDK asks for its server twice).
type mcpTools struct {
	search bool
	agents []*agentTool
}

// capabilities are what the server offers: tools, whose list it cannot announce a change of (a
// stateless server has no stream to send it on), and no logging (the SDK's default), as it
// sends no log messages.
var capabilities = &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}

// server is the MCP server of one request: the caller's agents as its tools, and the knowledge
// search when the caller may read knowledge bases.
func (h *mcpServe) server(r *http.Request) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentorch", Version: "1"}, &mcp.ServerOptions{Capabilities: capabilities})
	tools, _ := r.Context().Value(mcpToolsKey{}).(mcpTools)
	p := api.Principal(r)
	if tools.search {
		h.addSearch(s, r, p)
	}
	for _, t := range tools.agents {
		s.AddTool(t.tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return h.call(ctx, r, p, t, req), nil
		})
	}
	return s
}
