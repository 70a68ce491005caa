package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// Runtime limits of the HTTP layer.
const (
	DefaultMessagesLimit = 50
	MaxMessagesLimit     = 200
	// ExecuteMaxBodyBytes bounds execute bodies, which may carry base64 images (Lambda takes 6 MB).
	ExecuteMaxBodyBytes = 5 << 20
)

// RuntimeService is what the runtime group calls: executions and their records;
// sessions.Service is the implementation.
type RuntimeService interface {
	Execute(ctx context.Context, p domain.Principal, sessionID string, req sessions.ExecuteRequest, obs sessions.Observer) (*sessions.Result, error)
	Enqueue(ctx context.Context, p domain.Principal, sessionID string, req sessions.ExecuteRequest) (*domain.Execution, error)
	GetExecution(ctx context.Context, p domain.Principal, sessionID, execID string) (*domain.Session, *domain.Execution, []domain.Message, error)
	Messages(ctx context.Context, p domain.Principal, sessionID string, limit, offset int) ([]domain.Message, int, bool, error)
	Events(ctx context.Context, p domain.Principal, sessionID, correlationID, executionID string, offset, limit int) (sessions.EventsPage, error)
	// Cancel stops an execution; stopped is false when it was asked to stop but had not yet.
	Cancel(ctx context.Context, p domain.Principal, sessionID, execID string) (e *domain.Execution, stopped bool, err error)
	// ListExecutions pages the caller's executions (the traces list) and gives the next page's cursor.
	ListExecutions(ctx context.Context, p domain.Principal, q sessions.ExecutionsQuery) ([]*domain.Execution, string, error)
	// SessionExecutions pages a session's executions in the order they were created, each with
	// its messages as GetExecution gives them.
	SessionExecutions(ctx context.Context, p domain.Principal, sessionID string, limit, offset int) (*domain.Session, []sessions.SessionExecution, bool, error)
}

// NewRuntime is the handler of the runtime endpoint group.
func NewRuntime(svc RuntimeService, opts Options) *Group {
	g := newGroup(opts)
	h := &runtimeHandlers{svc: svc, g: g}
	// An Idempotency-Key serves an execute once (idempotency.go).
	g.handle(http.MethodPost, "/api/v1/runtime/{session_id}/execute/", false,
		once(svc, domain.ScopeSessionsWrite, max(g.opts.MaxBodyBytes, ExecuteMaxBodyBytes), h.execute, h.replayExecute))
	g.handle(http.MethodGet, "/api/v1/runtime/{session_id}/messages/", false, h.messages)
	g.handle(http.MethodGet, "/api/v1/runtime/{session_id}/events/", false, h.events)
	g.handle(http.MethodGet, "/api/v1/runtime/{session_id}/executions/", false, h.sessionExecutions)
	g.handle(http.MethodGet, "/api/v1/runtime/{session_id}/executions/{execution_id}/", false, h.execution)
	g.handle(http.MethodPost, "/api/v1/runtime/{session_id}/executions/{execution_id}/cancel/", false, h.cancel)
	g.handle(http.MethodGet, "/api/v1/executions/", false, h.listExecutions)
	return g
}

type runtimeHandlers struct {
	svc RuntimeService
	g   *Group
}

func (h *runtimeHandlers) execute(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionsWrite); err != nil {
		return err
	}
	// A W3C traceparent sent is the run's parent, plain, streamed or queued (docs/observability.md).
	r = r.WithContext(propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
	b, req, err := readExecute(w, r, max(h.g.opts.MaxBodyBytes, ExecuteMaxBodyBytes))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	async, err := boolParam(q, "async")
	if err != nil {
		return err
	}
	stream, err := boolParam(q, "stream")
	if err != nil {
		return err
	}
	format := firstNonEmpty(q.Get("format"), b.ResponseFormat, "session")
	if format != "session" && format != "message" {
		return domain.Invalid([]domain.FieldError{{Field: "response_format", Message: `must be "session" (default) or "message"`}})
	}
	sid := r.PathValue("session_id")
	switch {
	case b.Async || async || strings.Contains(r.Header.Get("Prefer"), "respond-async"):
		e, err := h.svc.Enqueue(r.Context(), principal(r), sid, req)
		if err != nil {
			return err
		}
		w.Header().Set("Location", "/api/v1/runtime/"+sid+"/executions/"+e.ID+"/")
		writeJSON(w, http.StatusAccepted, executionView(e, nil, nil))
		return nil
	case b.Stream || stream || strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
		return h.stream(w, r, sid, req, format)
	}
	// As with streaming, the run is detached from the client: one that goes away cancels
	// neither the run nor the commit of its turn. It stops deadlineMargin before the request's
	// deadline (the Lambda's), so that a client still waiting gets our envelope (503 with
	// advice) instead of API Gateway's bare timeout.
	ctx, cancel := detach(r.Context())
	defer cancel()
	res, err := h.svc.Execute(ctx, principal(r), sid, req, sessions.Observer{})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resultView(res, format))
	return nil
}

type messageView struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	CreatedAt int64  `json:"created_at"`
	// Citations: absent when the message's agent retrieved nothing, [] when it searched and
	// found nothing (domain.Message.Citations).
	Citations []citationJSON `json:"citations,omitzero"`
	// ToolCalls: the calls a paused execution's assistant turn asked for.
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

// resultView is the execute result in the requested shape.
func resultView(res *sessions.Result, format string) any {
	e := res.Execution
	if format == "message" {
		var id, content string
		var cites []domain.Citation
		if n := len(res.Messages); n > 0 {
			id, content, cites = res.Messages[n-1].ID, res.Messages[n-1].Content, res.Messages[n-1].Citations
		}
		var calls any = toolRunViews(res.ToolCalls)
		action := viewRequiredAction(res.Pending)
		if action != nil {
			calls = action.ToolCalls // what the client must answer
		}
		// The contract's message shape has a string correlation_id: the request's, or empty.
		corr := ""
		if e.CorrelationID != nil {
			corr = *e.CorrelationID
		}
		v := executeMessageJSON{Success: true, MessageID: id, CorrelationID: corr, RequiredAction: action,
			Response: messageResponseJSON{Content: content, ToolCalls: calls, Citations: citationViews(cites)}}
		if action != nil || e.Status == domain.ExecCancelled {
			v.Status = e.Status
		}
		return v
	}
	return sessionResult(res)
}

// sessionResult is the execute result in the session shape.
func sessionResult(res *sessions.Result) executeResultJSON {
	e := res.Execution
	msgs := make([]messageView, len(res.Messages))
	for i, m := range res.Messages {
		msgs[i] = messageView{ID: m.ID, Role: m.Role, Content: m.Content, CreatedAt: m.CreatedAt.Unix(), Citations: citationViews(m.Citations),
			ToolCalls: toolCallViews(m.ToolCalls)}
	}
	completed := e.CreatedAt.Unix()
	if e.CompletedAt != nil {
		completed = e.CompletedAt.Unix()
	}
	return executeResultJSON{ID: res.Session.ID, Object: "agent.session", Status: e.Status,
		CreatedAt: e.CreatedAt.Unix(), CompletedAt: completed, Config: res.Session.Config,
		Messages: msgs, ExecutionTime: e.DurationMS,
		Metadata: resultMetadataJSON{CorrelationID: e.CorrelationID, EventCount: len(e.Events), ExecutionID: e.ID,
			StopReason: e.StopReason, Usage: usageJSON{InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, CostUSD: e.CostUSD}},
		RequiredAction: viewRequiredAction(res.Pending)}
}

// executionView is an execution as the poll endpoint shows it, with its result once completed
// or cancelled.
func executionView(e *domain.Execution, sess *domain.Session, msgs []domain.Message) executionJSON {
	v := executionJSON{ID: e.ID, Object: "agent.execution", SessionID: e.SessionID, Status: e.Status,
		CorrelationID: e.CorrelationID, CreatedAt: e.CreatedAt.Unix(), RequiredAction: viewRequiredAction(e.Pending)}
	if e.CompletedAt != nil {
		completed := e.CompletedAt.Unix()
		v.CompletedAt = &completed
	}
	if e.Error != "" {
		typ := e.ErrorType
		if typ == "" {
			typ = domain.KindInternal.Type() // recorded before executions kept the type
		}
		v.Error = &executionErrorJSON{Type: typ, Message: e.Error}
	}
	if (e.Status == domain.ExecCompleted || e.Status == domain.ExecCancelled) && sess != nil {
		r := sessionResult(&sessions.Result{Session: sess, Execution: e, Messages: msgs})
		v.Result = &r
	}
	return v
}

func (h *runtimeHandlers) execution(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionRead); err != nil {
		return err
	}
	sess, e, msgs, err := h.svc.GetExecution(r.Context(), principal(r), r.PathValue("session_id"), r.PathValue("execution_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, executionView(e, sess, msgs))
	return nil
}

// cancel stops an execution (sessions.Service.Cancel): 200 with the cancelled execution, or 202
// with it as it stands when its run was asked to stop but had not yet committed (poll it); 409
// for a finished one. It needs the scope of executing.
func (h *runtimeHandlers) cancel(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionsWrite); err != nil {
		return err
	}
	e, stopped, err := h.svc.Cancel(r.Context(), principal(r), r.PathValue("session_id"), r.PathValue("execution_id"))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if !stopped {
		status = http.StatusAccepted
		w.Header().Set("Location", "/api/v1/runtime/"+e.SessionID+"/executions/"+e.ID+"/")
	}
	writeJSON(w, status, executionView(e, nil, nil))
	return nil
}

func (h *runtimeHandlers) messages(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionRead); err != nil {
		return err
	}
	pg, err := pageWithin(r, DefaultMessagesLimit, MaxMessagesLimit, 1<<30)
	if err != nil {
		return err
	}
	msgs, total, more, err := h.svc.Messages(r.Context(), principal(r), r.PathValue("session_id"), pg.limit, pg.offset)
	if err != nil {
		return err
	}
	out := make([]historyMessageJSON, len(msgs))
	for i, m := range msgs {
		out[i] = historyMessageJSON{ID: m.ID, Role: m.Role, Content: m.Content, Timestamp: m.CreatedAt.UTC().Format(time.RFC3339),
			Citations: citationViews(m.Citations), ToolCalls: toolCallViews(m.ToolCalls)}
	}
	// Stored messages reach 350,000 bytes each: a full page is cut to what a Lambda response holds.
	enc, err := fitPage(out)
	if err != nil {
		return err
	}
	if len(enc) < len(out) {
		more = true
	}
	if more {
		setNext(w, r, pg.offset+len(enc), pg.limit)
	}
	writeJSON(w, http.StatusOK, messagesPageJSON{Messages: enc, Total: total, HasMore: more})
	return nil
}

func (h *runtimeHandlers) events(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionRead); err != nil {
		return err
	}
	pg, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	page, err := h.svc.Events(r.Context(), principal(r), r.PathValue("session_id"), q.Get("correlation_id"), q.Get("execution_id"), pg.offset, pg.limit)
	if err != nil {
		return err
	}
	enc, err := fitPage(page.Events)
	if err != nil {
		return err
	}
	more := page.More || len(enc) < len(page.Events)
	if more {
		setNext(w, r, pg.offset+len(enc), pg.limit)
	}
	writeJSON(w, http.StatusOK, eventsPageJSON{Events: enc, Total: page.Total, HasMore: more})
	return nil
}

// intParam reads an integer query parameter within [lo, hi], or def when absent.
func intParam(v, name string, def, lo, hi int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, domain.Invalid([]domain.FieldError{{Field: name, Message: fmt.Sprintf("must be an integer from %d to %d", lo, hi)}})
	}
	return n, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
