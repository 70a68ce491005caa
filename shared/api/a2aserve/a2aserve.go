// Package a2aserve serves each of a company's agents over the Agent2Agent protocol (A2A 0.3,
// JSON-RPC binding): an Agent Card at /api/v1/a2a/{agent_key}/.well-known/agent-card.json and
// the JSON-RPC endpoint at /api/v1/a2a/{agent_key}/ (message/send, message/stream, tasks/get,
// tasks/cancel), on the official a2a-go SDK's JSON-RPC server. An A2A context is a session, a
// task is an execution of it (docs/a2a.md). It is a package of its own so that only the runtime
// group links the SDK.
package a2aserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// ProtocolVersion is the A2A version the endpoint speaks (that of a2a-go v0.3).
const ProtocolVersion = "0.3.0"

// Agents reads the agents a caller may see; agents.Service is the implementation.
type Agents interface {
	GetByKey(ctx context.Context, p domain.Principal, agentKey string) (*domain.Agent, error)
}

// Runs opens sessions on stored agents, runs, polls and cancels their executions;
// sessions.Service is the implementation.
type Runs interface {
	// OnAgentFor opens the session serving the message's end user (its metadata.user_id; nil none).
	OnAgentFor(ctx context.Context, p domain.Principal, a *domain.Agent, userID *string) (*domain.Session, error)
	Get(ctx context.Context, p domain.Principal, id string) (*domain.Session, error)
	Execute(ctx context.Context, p domain.Principal, sessionID string, req sessions.ExecuteRequest, obs sessions.Observer) (*sessions.Result, error)
	Enqueue(ctx context.Context, p domain.Principal, sessionID string, req sessions.ExecuteRequest) (*domain.Execution, error)
	GetExecution(ctx context.Context, p domain.Principal, sessionID, execID string) (*domain.Session, *domain.Execution, []domain.Message, error)
	Cancel(ctx context.Context, p domain.Principal, sessionID, execID string) (*domain.Execution, bool, error)
}

// Serve adds to g the A2A routes of every agent: its Agent Card and its JSON-RPC endpoint. The
// caller authenticates with an API key as on every other route (x-api-key, or the key as a
// bearer token) and sees only the agents it may read; an unknown agent is 404. base is the
// public base URL the card names the endpoint under; when it is empty, the request's own host.
func Serve(g *api.Group, agents Agents, runs Runs, base api.BaseURL, opts ...Option) {
	s := &server{g: g, agents: agents, runs: runs, base: base}
	for _, o := range opts {
		o(s)
	}
	s.rpc = a2asrv.NewJSONRPCHandler(&handler{s: s})
	g.HandleAuthenticated(http.MethodGet, "/api/v1/a2a/{agent_key}/.well-known/agent-card.json", s.card)
	g.HandleAuthenticated(http.MethodPost, "/api/v1/a2a/{agent_key}/", s.serve)
}

type server struct {
	g      *api.Group
	agents Agents
	runs   Runs
	base   api.BaseURL
	rpc    http.Handler
	// pushes keeps tasks' push notification configs; nil when they are not offered (WithPushes).
	pushes   Pushes
	events   Events
	checkURL func(*url.URL) error
}

// call is what one JSON-RPC request's methods need: the request (for its error reports), the
// caller, the agent it addresses, and the runs it started, which the request waits for.
type call struct {
	r     *http.Request
	p     domain.Principal
	agent *domain.Agent
	runs  sync.WaitGroup
}

type callKey struct{}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) error {
	p := api.Principal(r)
	a, err := s.agents.GetByKey(r.Context(), p, r.PathValue("agent_key"))
	if err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.g.MaxExecuteBody())
	c := &call{r: r, p: p, agent: a}
	// The SDK writes its answers without a type; a stream sets its own.
	w.Header().Set("Content-Type", "application/json")
	var body bytes.Buffer
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(r.Body, &body), r.Body}
	tw := &trackedWriter{ResponseWriter: w}
	s.rpc.ServeHTTP(tw, r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
	if !tw.wrote {
		// a2a-go v0.3.3 writes nothing for a method whose result is null
		// (tasks/pushNotificationConfig/delete); JSON-RPC answers it.
		var req struct {
			ID any `json:"id"`
		}
		_ = json.Unmarshal(body.Bytes(), &req)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": nil})
	}
	// A stream whose client went away leaves its run going: the request ends with it (in Lambda,
	// returning would freeze the run).
	c.runs.Wait()
	return nil
}

// trackedWriter notes whether anything was written through it.
type trackedWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackedWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackedWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

func (t *trackedWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (t *trackedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// card answers the agent's Agent Card: its JSON-RPC endpoint, its one skill (itself), streaming,
// and the API key as the security scheme.
func (s *server) card(w http.ResponseWriter, r *http.Request) error {
	p := api.Principal(r)
	if !p.Can(domain.ScopeAgentsRead) {
		return domain.ErrPermission
	}
	a, err := s.agents.GetByKey(r.Context(), p, r.PathValue("agent_key"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(s.agentCard(r, a))
}

func (s *server) agentCard(r *http.Request, a *domain.Agent) *a2a.AgentCard {
	modes := []string{"text/plain", "application/json"}
	return &a2a.AgentCard{
		Name: a.Name, Description: description(a), Version: version(a), ProtocolVersion: ProtocolVersion,
		URL: s.baseURL(r) + "/api/v1/a2a/" + a.AgentKey + "/", PreferredTransport: a2a.TransportProtocolJSONRPC,
		Capabilities:      a2a.AgentCapabilities{Streaming: true, PushNotifications: s.pushes != nil},
		DefaultInputModes: modes, DefaultOutputModes: modes,
		Skills: []a2a.AgentSkill{{ID: a.AgentKey, Name: a.Name, Description: description(a), Tags: []string{"agent"}}},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			"apiKey": a2a.APIKeySecurityScheme{In: a2a.APIKeySecuritySchemeInHeader, Name: "x-api-key", Description: "An API key of the company (ak_…)."},
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer", Description: "The API key as a bearer token."},
		},
		Security: []a2a.SecurityRequirements{{"apiKey": {}}, {"bearer": {}}},
	}
}

// baseURL is the configured public base, or else the scheme and host the request came to.
func (s *server) baseURL(r *http.Request) string {
	if s.base != nil {
		if b := s.base(r); b != "" {
			return strings.TrimRight(b, "/")
		}
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func description(a *domain.Agent) string {
	if d, _ := a.SystemConfig["description"].(string); d != "" {
		return d
	}
	return "The agent " + a.Name + "."
}

func version(a *domain.Agent) string {
	if a.VersionNumber != "" {
		return a.VersionNumber
	}
	return "1"
}

// rpcError is an error of ours as the JSON-RPC error the SDK writes: code of kind, and our
// error type and message (never an internal error's text) as its data.
type rpcError struct {
	msg  string
	kind error
}

func (e *rpcError) Error() string { return e.msg }
func (e *rpcError) Unwrap() error { return e.kind }

// fail is err as a JSON-RPC error: an a2a error as it is, ours with the code of its kind.
func (c *call) fail(s *server, err error) error {
	var re *rpcError
	if errors.As(err, &re) {
		return err
	}
	kind := a2a.ErrInternalError
	switch domain.KindOf(err) {
	case domain.KindInvalid, domain.KindNotFound, domain.KindConflict, domain.KindTooLarge, domain.KindUnsupportedMedia, domain.KindUnprocessable:
		kind = a2a.ErrInvalidParams
	case domain.KindPermission, domain.KindUnauthenticated:
		kind = a2a.ErrInvalidRequest
	case domain.KindRateLimited, domain.KindOverloaded:
		kind = a2a.ErrServerError
	}
	typ, msg := s.g.ErrorOf(c.r, err)
	return &rpcError{msg: typ + ": " + msg, kind: kind}
}

func invalidParams(msg string) error {
	return &rpcError{msg: "invalid_request_error: " + msg, kind: a2a.ErrInvalidParams}
}

func taskNotFound(id a2a.TaskID) error {
	return &rpcError{msg: "not_found_error: Task " + domain.Clip(string(id), 80) + " not found", kind: a2a.ErrTaskNotFound}
}
