package a2aserve

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// handler is the SDK's a2asrv.RequestHandler over sessions and executions: it keeps nothing
// itself (no task store, no queue), so that any process answers any request, as in Lambda.
type handler struct{ s *server }

// sendFor is a message/send or message/stream made ready: the session it goes to (its
// contextId's, or a new one of the agent) and the execute request (a new message, or the answer
// to the paused task it names).
type sendFor struct {
	sessionID string
	req       sessions.ExecuteRequest
}

func (h *handler) prepare(ctx context.Context, c *call, params *a2a.MessageSendParams) (*sendFor, error) {
	if params == nil || params.Message == nil {
		return nil, invalidParams("params.message is required")
	}
	if !c.p.Can(domain.ScopeSessionsWrite) {
		return nil, domain.ErrPermission
	}
	// A run spends the model: a spent monthly budget refuses it before anything is read.
	if err := h.s.g.CheckBudget(ctx, c.p); err != nil {
		return nil, err
	}
	m := params.Message
	user, err := endUser(params)
	if err != nil {
		return nil, err
	}
	sid := m.ContextID
	var execID string
	if m.TaskID != "" {
		tsid, eid, ok := splitTaskID(m.TaskID)
		if !ok {
			return nil, taskNotFound(m.TaskID)
		}
		if sid != "" && sid != tsid {
			return nil, invalidParams("message.taskId is not a task of message.contextId")
		}
		sid, execID = tsid, eid
	}
	if sid == "" {
		sess, err := h.s.runs.OnAgentFor(ctx, c.p, c.agent, user)
		if err != nil {
			return nil, err
		}
		return h.newMessage(sess.ID, m)
	}
	sess, err := h.s.runs.Get(ctx, c.p, sid)
	if err != nil {
		return nil, err
	}
	if sess.AgentID != c.agent.ID {
		return nil, invalidParams(fmt.Sprintf("Context %s is not a session of the agent %s", sid, c.agent.AgentKey))
	}
	// A session's user never changes: a message naming another user than its context's is
	// refused, so that no one reaches a user's memory through a context of someone else.
	if user != nil && sess.UserID != *user {
		return nil, invalidParams(fmt.Sprintf("Context %s does not serve the metadata.user_id this message names; a context's user never changes", sid))
	}
	if execID == "" {
		return h.newMessage(sid, m)
	}
	// A message naming a task continues it: only a paused one can be, with its answer.
	if sess.Pending == nil || sess.Pending.ExecutionID != execID {
		return nil, invalidParams(fmt.Sprintf("Task %s is not waiting for input", m.TaskID))
	}
	for _, p := range m.Parts {
		if d, ok := p.(a2a.DataPart); ok {
			a, ok, err := answerOf(d.Data)
			if err != nil {
				return nil, err
			}
			if ok {
				return &sendFor{sessionID: sid, req: sessions.ExecuteRequest{Answer: a}}, nil
			}
		}
	}
	return nil, invalidParams(pendingText(sess.Pending))
}

// endUser is the end user a send names: metadata.user_id of its message, or of its params (both
// A2A's metadata; when both name one it must be the same). Absent, null or empty is none.
func endUser(params *a2a.MessageSendParams) (*string, error) {
	var user *string
	for _, at := range []struct {
		field string
		meta  map[string]any
	}{{"message.metadata.user_id", params.Message.Metadata}, {"params.metadata.user_id", params.Metadata}} {
		var u string
		switch x := at.meta["user_id"].(type) {
		case nil:
			continue
		case string:
			u = x
		default:
			return nil, invalidParams(at.field + " must be a string")
		}
		if u == "" {
			continue
		}
		if !domain.ValidUserID(u) {
			return nil, invalidParams(at.field + " " + domain.UserIDRule)
		}
		if user != nil && *user != u {
			return nil, invalidParams("message.metadata.user_id and params.metadata.user_id name different users")
		}
		user = &u
	}
	return user, nil
}

// newMessage is a message's execute request: its text parts as the content, its data parts as
// the values of the prompt's variables.
func (h *handler) newMessage(sid string, m *a2a.Message) (*sendFor, error) {
	var text []string
	var inputs map[string]any
	for _, p := range m.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			text = append(text, p.Text)
		case a2a.DataPart:
			if inputs == nil {
				inputs = map[string]any{}
			}
			for k, v := range p.Data {
				inputs[k] = v
			}
		default:
			return nil, &rpcError{msg: "invalid_request_error: Only text and data parts are accepted; pass images and files by URL in the text", kind: a2a.ErrUnsupportedContentType}
		}
	}
	content := strings.Join(text, "\n")
	if strings.TrimSpace(content) == "" {
		return nil, invalidParams("message.parts must hold a text part")
	}
	return &sendFor{sessionID: sid, req: sessions.ExecuteRequest{Content: sessions.TextContent(content), Inputs: inputs}}, nil
}

// OnSendMessage runs the message to its end (or its pause) and answers the task; with
// configuration.blocking false it queues the run and answers the submitted task at once.
func (h *handler) OnSendMessage(ctx context.Context, params *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	c := callOf(ctx)
	in, err := h.prepare(ctx, c, params)
	if err != nil {
		return nil, c.fail(h.s, err)
	}
	// A push config is checked before the run starts, and stored once its execution is known.
	var push *domain.TaskPush
	if params.Config != nil && params.Config.PushConfig != nil {
		if push, err = h.pushOf(c, params.Config.PushConfig); err != nil {
			return nil, c.fail(h.s, err)
		}
	}
	if params.Config != nil && params.Config.Blocking != nil && !*params.Config.Blocking {
		e, err := h.s.runs.Enqueue(ctx, c.p, in.sessionID, in.req)
		if err != nil {
			return nil, c.fail(h.s, err)
		}
		if push != nil {
			// The run is queued already: a config that cannot be kept fails the send, not the run.
			if _, err := h.setPush(ctx, c, in.sessionID, e.ID, push); err != nil {
				return nil, c.fail(h.s, err)
			}
		}
		return task(in.sessionID, e, nil, nil), nil
	}
	var started atomic.Value
	rctx, cancel := api.Detach(ctx)
	defer cancel()
	res, err := h.s.runs.Execute(rctx, c.p, in.sessionID, in.req, sessions.Observer{OnStart: func(id string) { started.Store(id) }})
	if err != nil {
		id, _ := started.Load().(string)
		if id == "" || domain.KindOf(err) == domain.KindConflict {
			return nil, c.fail(h.s, err)
		}
		typ, msg := h.s.g.ErrorOf(c.r, err)
		return failedTask(in.sessionID, id, typ, msg), nil
	}
	if push != nil {
		// A blocking send's task has ended or paused: setting its config pushes it at once.
		if _, err := h.setPush(ctx, c, in.sessionID, res.Execution.ID, push); err != nil {
			return nil, c.fail(h.s, err)
		}
	}
	return task(in.sessionID, res.Execution, res.Messages, res.Pending), nil
}

// OnSendMessageStream runs the message and streams it: the task as it starts (working), the
// reply's text as it is produced (appended chunks of the "response" artifact, the last one
// marked), and the final status (completed, input-required, failed or canceled).
func (h *handler) OnSendMessageStream(ctx context.Context, params *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		c := callOf(ctx)
		in, err := h.prepare(ctx, c, params)
		var push *domain.TaskPush
		if err == nil && params.Config != nil && params.Config.PushConfig != nil {
			push, err = h.pushOf(c, params.Config.PushConfig)
		}
		if err != nil {
			yield(nil, c.fail(h.s, err))
			return
		}
		f := api.NewQueue[any]()
		c.runs.Add(1)
		go func() {
			defer c.runs.Done()
			rctx, cancel := api.Detach(ctx)
			defer cancel()
			res, err := h.s.runs.Execute(rctx, c.p, in.sessionID, in.req, sessions.Observer{
				OnStart: func(id string) { f.Push(started{id, time.Now()}) },
				OnText:  func(_, delta string) { f.Push(delta) },
			})
			if push != nil && err == nil {
				// The stream has told of the run already: a config that cannot be kept is lost
				// with its error, as a webhook event is.
				_, _ = h.setPush(rctx, c, in.sessionID, res.Execution.ID, push)
			}
			f.Push(ended{res, err})
		}()
		st := &streamer{sessionID: in.sessionID, user: params.Message}
		for item := range items(ctx, f) {
			ev, final, err := st.event(item, func(err error) (string, string) { return h.s.g.ErrorOf(c.r, err) })
			if err != nil {
				yield(nil, c.fail(h.s, err))
				return
			}
			for _, e := range ev {
				if !yield(e, nil) {
					return
				}
			}
			if final {
				return
			}
		}
	}
}

// OnGetTask answers a task as its execution stands (tasks/get).
func (h *handler) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	c := callOf(ctx)
	if !c.p.Can(domain.ScopeSessionRead) {
		return nil, c.fail(h.s, domain.ErrPermission)
	}
	sid, eid, ok := splitTaskID(q.ID)
	if !ok {
		return nil, taskNotFound(q.ID)
	}
	sess, e, msgs, err := h.s.runs.GetExecution(ctx, c.p, sid, eid)
	if domain.KindOf(err) == domain.KindNotFound || (err == nil && sess.AgentID != c.agent.ID) {
		return nil, taskNotFound(q.ID)
	}
	if err != nil {
		return nil, c.fail(h.s, err)
	}
	t := task(sid, e, msgs, nil)
	if q.HistoryLength != nil && *q.HistoryLength < len(t.History) {
		t.History = t.History[len(t.History)-max(*q.HistoryLength, 0):]
	}
	return t, nil
}

// OnCancelTask stops a task's execution wherever it is, as the cancel route does (tasks/cancel):
// a finished task is not cancelable.
func (h *handler) OnCancelTask(ctx context.Context, id *a2a.TaskIDParams) (*a2a.Task, error) {
	c := callOf(ctx)
	if !c.p.Can(domain.ScopeSessionsWrite) {
		return nil, c.fail(h.s, domain.ErrPermission)
	}
	sid, eid, ok := splitTaskID(id.ID)
	if !ok {
		return nil, taskNotFound(id.ID)
	}
	sess, err := h.s.runs.Get(ctx, c.p, sid)
	if domain.KindOf(err) == domain.KindNotFound || (err == nil && sess.AgentID != c.agent.ID) {
		return nil, taskNotFound(id.ID)
	}
	if err != nil {
		return nil, c.fail(h.s, err)
	}
	e, _, err := h.s.runs.Cancel(ctx, c.p, sid, eid)
	switch domain.KindOf(err) {
	case domain.KindNotFound:
		return nil, taskNotFound(id.ID)
	case domain.KindConflict:
		typ, msg := h.s.g.ErrorOf(c.r, err)
		return nil, &rpcError{msg: typ + ": " + msg, kind: a2a.ErrTaskNotCancelable}
	}
	if err != nil {
		return nil, c.fail(h.s, err)
	}
	return task(sid, e, nil, nil), nil
}

// OnResubscribeToTask is not offered: a task is polled with tasks/get.
func (h *handler) OnResubscribeToTask(context.Context, *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrUnsupportedOperation) }
}

// OnGetExtendedAgentCard: the card is already served to authenticated callers only.
func (h *handler) OnGetExtendedAgentCard(context.Context) (*a2a.AgentCard, error) {
	return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
}
