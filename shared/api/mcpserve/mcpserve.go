// Package mcpserve serves a company's agents over the Model Context Protocol: /api/v1/mcp/ speaks
// Streamable HTTP with the go-sdk's server, so that MCP clients (Claude Desktop, IDEs, other
// agents) call the agents as tools (docs/mcp-server.md). It is a package of its own so that only
// the runtime group links the SDK's server.
package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
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
	FromAgent(ctx context.Context, p domain.Principal, agentKey string) (*domain.Session, *domain.Agent, error)
	Execute(ctx context.Context, p domain.Principal, sessionID string, req sessions.ExecuteRequest, obs sessions.Observer) (*sessions.Result, error)
}

// Serve adds to g the Model Context Protocol endpoint: /api/v1/mcp/ speaks Streamable HTTP
// (the go-sdk's server, stateless, with JSON responses, so that it runs behind API Gateway and
// Lambda with no session held between requests). The caller authenticates with an API key as on
// every other route; its tools are the agents it may read, and calling one runs it
// (docs/mcp-server.md).
func Serve(g *api.Group, agents Agents, runs Runs) {
	h := &mcpServe{agents: agents, runs: runs, g: g}
	h.sdk = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	// POST alone: stateless, the server offers no GET stream and holds no session to DELETE, so
	// the group answers other methods with 405 in the envelope, as the transport allows.
	g.HandleAuthenticated(http.MethodPost, "/api/v1/mcp/", h.serve)
}

type mcpServe struct {
	agents Agents
	runs   Runs
	g      *api.Group
	sdk    *mcp.StreamableHTTPHandler
}

type mcpToolsKey struct{}

func (h *mcpServe) serve(w http.ResponseWriter, r *http.Request) error {
	if !api.Principal(r).Can(domain.ScopeAgentsRead) {
		return domain.ErrPermission
	}
	var tools []*domain.Agent
	if r.Method == http.MethodPost {
		var err error
		if tools, _, err = h.agents.List(r.Context(), api.Principal(r), 0, MaxTools); err != nil {
			return err
		}
		r.Body = http.MaxBytesReader(w, r.Body, h.g.MaxExecuteBody())
	}
	// JSON responses are whole: the answer is kept so that a request the transport refuses
	// (its plain-text 4xx) is answered in the error envelope, as every route answers.
	rec := &sdkResponse{header: http.Header{}}
	h.sdk.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), mcpToolsKey{}, tools)))
	if rec.status >= 400 {
		return transportError(rec.status, rec.body.String())
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.status)
	_, err := w.Write(rec.body.Bytes())
	return err
}

// sdkResponse keeps the SDK's answer.
type sdkResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (s *sdkResponse) Header() http.Header { return s.header }

func (s *sdkResponse) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

func (s *sdkResponse) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return s.body.Write(b)
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

// server is the MCP server of one request: the caller's agents as its tools.
func (h *mcpServe) server(r *http.Request) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentorch", Version: "1"}, nil)
	agents, _ := r.Context().Value(mcpToolsKey{}).([]*domain.Agent)
	p := api.Principal(r)
	for _, a := range agents {
		s.AddTool(&mcp.Tool{Name: a.AgentKey, Title: a.Name, Description: agentDescription(a), InputSchema: agentToolSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return h.call(ctx, r, p, a.AgentKey, req.Params.Arguments), nil
			})
	}
	return s
}

// agentToolSchema is every agent's input: the message, an optional session to go on in, and the
// values of its prompt's variables.
var agentToolSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"message":    map[string]any{"type": "string", "description": "The user message the agent answers."},
		"session_id": map[string]any{"type": "string", "description": "A session of this agent to continue (from an earlier result's session_id); a new session when absent."},
		"inputs":     map[string]any{"type": "object", "description": "Values of the prompt's {{ variables.NAME }}."},
	},
	"required": []string{"message"},
}

func agentDescription(a *domain.Agent) string {
	if d, _ := a.SystemConfig["description"].(string); d != "" {
		return d
	}
	return fmt.Sprintf("Runs the agent %q and answers its reply.", a.Name)
}

type agentToolArgs struct {
	Message   string         `json:"message"`
	SessionID string         `json:"session_id"`
	Inputs    map[string]any `json:"inputs"`
}

// call runs an agent: on a new session from its stored configuration, or on to session_id. A
// failure is the tool's error result, in the API's error type and message.
func (h *mcpServe) call(ctx context.Context, r *http.Request, p domain.Principal, agentKey string, raw json.RawMessage) *mcp.CallToolResult {
	res, err := h.run(ctx, p, agentKey, raw)
	if err != nil {
		typ, msg := h.g.ErrorOf(r, err)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: typ + ": " + msg}},
			StructuredContent: map[string]any{"error": map[string]any{"type": typ, "message": msg}}}
	}
	var text []string
	for _, m := range res.Messages {
		text = append(text, m.Content)
	}
	out := map[string]any{"session_id": res.Session.ID, "execution_id": res.Execution.ID, "status": res.Execution.Status}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(text, "\n\n")}}, StructuredContent: out}
}

func (h *mcpServe) run(ctx context.Context, p domain.Principal, agentKey string, raw json.RawMessage) (*sessions.Result, error) {
	if !p.Can(domain.ScopeSessionsWrite) {
		return nil, domain.ErrPermission
	}
	var in agentToolArgs
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, domain.Invalid([]domain.FieldError{{Field: "arguments", Message: "must be an object with a string message"}})
		}
	}
	if strings.TrimSpace(in.Message) == "" {
		return nil, domain.Invalid([]domain.FieldError{{Field: "message", Message: "is required"}})
	}
	// A run spends the model: a spent monthly budget refuses it before anything is read.
	if err := h.g.CheckBudget(ctx, p); err != nil {
		return nil, err
	}
	sid := in.SessionID
	if sid == "" {
		sess, _, err := h.runs.FromAgent(ctx, p, agentKey)
		if err != nil {
			return nil, err
		}
		sid = sess.ID
	}
	// As the execute does, the run is detached from the client and stops before the deadline.
	ctx, cancel := api.Detach(ctx)
	defer cancel()
	return h.runs.Execute(ctx, p, sid, sessions.ExecuteRequest{Content: sessions.TextContent(in.Message), Inputs: in.Inputs}, sessions.Observer{})
}
