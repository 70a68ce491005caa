package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/pricing"
)

// Size limits that keep a session's records inside DynamoDB's 400 KB items.
const (
	MaxVariablesBytes = 64 << 10
	MaxEventsBytes    = 256 << 10
)

// ExecuteRequest is an execute body.
type ExecuteRequest struct {
	Content       Content
	CorrelationID *string
	Inputs        map[string]any // nil when the body had none
	// Answer continues a paused execution instead of sending a new message (Content is then
	// absent); nil for a new message.
	Answer *Answer
	// History, when not nil, is the conversation before this message as a stateless client
	// holds it (the OpenAI API): a configuration with persistent_state is given it instead of
	// the session's stored history, cut to the same budget. It is not stored.
	History []domain.Message
	// Functions are function tools the client runs, for this run alone: offered to each
	// react_agent node beside its own tools (clientrun.go). An answer brings them again.
	Functions []domain.FunctionTool
	// DeclineElicitations says that no person can answer an MCP server's question during this
	// run (a surface whose client cannot be asked): it is declined instead of pausing the run.
	DeclineElicitations bool
	// AgentID, when set, is the agent a surface that names agents (the OpenAI API's model) runs:
	// a session opened from another agent is refused (400) before anything runs, without a read
	// of its own.
	AgentID string
	// UserID, when set, is the end user a surface names on a session it goes on in: a session
	// serving another user (or none) is refused (400 on UserField) before anything runs, without
	// a read of its own — a session's user never changes, so that no one reaches a user's memory
	// through another's session.
	UserID    *string
	UserField string
}

// Observer receives an execution's events and text as they happen (for streaming). The run's
// goroutines call it one call at a time, in the order things happened, and wait for each call:
// a consumer that writes to a client should queue rather than block the run.
type Observer struct {
	// OnStart is told the execution's id once the run holds the session, before its first
	// event: the id a cancel request names.
	OnStart func(executionID string)
	OnEvent func(engine.Event)
	OnText  func(node, delta string)
	// OnEnd is told the run's outcome once the engine returns, before it is committed: the
	// engine's result (the run's span among it; nil if the engine gave none) and its error.
	OnEnd func(out *engine.Result, err error)
}

// ToolCall is one tool call of an execution, as the message response shape lists it.
type ToolCall struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Input   map[string]any `json:"input"`
	Output  string         `json:"output"`
	IsError bool           `json:"is_error"`
}

// Result is a finished execution.
type Result struct {
	Session   *domain.Session
	Execution *domain.Execution
	Messages  []domain.Message // the new assistant messages the client may see
	ToolCalls []ToolCall
	// Pending is what the execution waits for when it paused (status requires_action).
	Pending *domain.PendingAction
}

// Execute runs one user message in a session: take the session's lease together with its
// checkpoint (one UpdateItem, which also records the new execution's id on the lease), read
// recent history (one Query), run the engine under a supervisor (supervise: no call in its
// first second, then a cheap read a second and a heartbeat every 10 s), then write the
// messages, the execution record and the new checkpoint, releasing the lease (one transaction).
func (s *Service) Execute(ctx context.Context, p domain.Principal, sessionID string, req ExecuteRequest, obs Observer) (*Result, error) {
	return s.execute(ctx, p, sessionID, "", req, obs)
}

func (s *Service) execute(ctx context.Context, p domain.Principal, sessionID, execID string, req ExecuteRequest, obs Observer) (*Result, error) {
	if !domain.IsID(sessionID) {
		return nil, domain.Errorf(domain.KindNotFound, "Session %q not found", domain.Clip(sessionID, 64))
	}
	if req.CorrelationID != nil && len(*req.CorrelationID) > 256 {
		return nil, field("correlation_id", "must be at most 256 characters")
	}
	var parts []domain.Part
	var userText string
	if req.Answer == nil {
		var err error
		if parts, userText, err = s.parseContent(ctx, req.Content); err != nil {
			return nil, err
		}
	} else if err := req.Answer.check(); err != nil {
		return nil, err
	}
	leaseID := uuid.NewString()
	// The run's execution id is known before it starts, so that it can be cancelled: a new
	// message's is made now, a queued run's and a queued answer's were given. A synchronous
	// answer's is the paused execution's, which only the acquired session tells (resume).
	async, runID := execID != "", execID
	if runID == "" && req.Answer == nil {
		runID = newExecutionID()
	}
	// An answer does not wait for the lease: a second answer racing the first is a conflict,
	// never a second run.
	sess, err := s.acquireRun(ctx, p, sessionID, leaseID, runID, req.Answer == nil)
	if err != nil {
		return nil, err
	}
	if req.AgentID != "" && sess.AgentID != req.AgentID {
		s.release(ctx, sessionID, leaseID)
		return nil, domain.Errorf(domain.KindInvalid, "Session %s was not opened from the agent this request names", sessionID)
	}
	if req.UserID != nil && sess.UserID != *req.UserID {
		s.release(ctx, sessionID, leaseID)
		return nil, domain.Invalid([]domain.FieldError{{Field: req.UserField,
			Message: fmt.Sprintf("session %s does not serve this user; a session's user never changes", sessionID)}})
	}
	var res *Result
	switch {
	case req.Answer != nil:
		res, err = s.resume(ctx, p, sess, leaseID, runID, req, obs)
	case sess.Pending != nil:
		err = pendingConflict(sess.Pending)
	default:
		res, err = s.run(ctx, p, sess, leaseID, runID, async, parts, userText, req, obs)
	}
	if err != nil {
		// The lease is released on every failure so the session stays usable.
		s.release(ctx, sessionID, leaseID)
		return nil, err
	}
	return res, nil
}

// release gives the lease back, with a background context because ctx may be the one that ran
// out; a lease it cannot give back expires.
func (s *Service) release(ctx context.Context, sessionID, leaseID string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = s.store.ReleaseSession(rctx, sessionID, leaseID)
}

// acquire takes the lease for a brief hold (no run, no heartbeat), waiting up to LeaseWait for
// a running execution to finish.
func (s *Service) acquire(ctx context.Context, p domain.Principal, id, leaseID string, wait bool) (*domain.Session, error) {
	return s.acquireRun(ctx, p, id, leaseID, "", wait)
}

// acquireRun takes the lease for the run of execID (none when empty), waiting up to LeaseWait
// for a running execution to finish. A run's lease lasts RunLease and its supervisor extends
// it; a brief hold's outlives it: to the context's deadline (the Lambda's) and a margin, or
// LeaseTTL when there is none.
func (s *Service) acquireRun(ctx context.Context, p domain.Principal, id, leaseID, execID string, wait bool) (*domain.Session, error) {
	deadline := s.now().Add(s.limits.LeaseWait)
	delay := 50 * time.Millisecond
	for {
		now := s.now()
		until := now.Add(s.limits.LeaseTTL)
		if dl, ok := ctx.Deadline(); ok {
			until = dl.Add(30 * time.Second)
		}
		if execID != "" {
			until = now.Add(s.limits.RunLease)
		}
		sess, err := s.store.AcquireRun(ctx, p, id, leaseID, execID, until, now)
		switch {
		case err == nil:
			return sess, nil
		case errors.Is(err, domain.ErrNotFound):
			return nil, domain.Errorf(domain.KindNotFound, "Session %s not found", id)
		case domain.KindOf(err) != domain.KindConflict || !wait || s.now().Add(delay).After(deadline):
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 400*time.Millisecond)
	}
}

// run runs the engine for p: the session's tenant, with p's scopes (a key without
// knowledge:read retrieves nothing).
func (s *Service) run(ctx context.Context, p domain.Principal, sess *domain.Session, leaseID, execID string, async bool, parts []domain.Part, userText string, req ExecuteRequest, obs Observer) (*Result, error) {
	g, err := s.parsed(sess)
	if err == nil {
		g, err = s.withFunctions(g, req.Functions)
	}
	if err != nil {
		return nil, err
	}
	vars := map[string]any{}
	var history []engine.Message
	if g.PersistentState {
		for k, v := range sess.Variables {
			vars[k] = v
		}
		var err error
		if req.History != nil {
			history = seedHistory(req.History, engine.HistoryBudget(g))
		} else if history, err = s.history(ctx, sess.ID, engine.HistoryBudget(g), ""); err != nil {
			return nil, err
		}
	}
	for k, v := range req.Inputs {
		vars[k] = v
	}
	if b, _ := json.Marshal(vars); len(b) > MaxVariablesBytes {
		return nil, field("inputs", fmt.Sprintf("the session's variables must stay under %d bytes of JSON", MaxVariablesBytes))
	}
	if missing := missingVariables(g, vars); len(missing) > 0 {
		fields := make([]domain.FieldError, len(missing))
		for i, name := range missing {
			fields[i] = domain.FieldError{Field: "inputs." + name, Message: fmt.Sprintf("variable %q is used by a prompt ({{ variables.%s }}) but was never supplied", name, name)}
		}
		return nil, domain.Invalid(fields)
	}

	t := &turn{sess: sess, g: g, leaseID: leaseID, vars: vars, req: req, start: s.now().UTC(), prices: s.prices,
		exec: &domain.Execution{ID: execID, SessionID: sess.ID, CorrelationID: req.CorrelationID, CreatedAt: s.now().UTC()},
		user: &domain.Message{ID: uuid.NewString(), Role: domain.RoleUser, Content: userText, Visible: true, ExecutionID: execID}, async: async, queued: async}
	t.user.CreatedAt = t.start
	stamp(t.exec, sess) // listed under its owner and agent once it ends or pauses
	run := t.engineRun(p, history, parts, obs)
	tools := s.runTools(g)
	if tools != nil {
		run.Tools = tools
		defer func() { _ = tools.Close() }()
	}
	if obs.OnStart != nil {
		obs.OnStart(execID)
	}
	sv := s.supervise(ctx, sess.ID, leaseID, execID)
	defer func() { _ = sv.stop() }() // settle stops it; this, should the engine panic
	out, err := s.engine.Run(sv.ctx, run)
	return s.settle(ctx, t, sv, out, err)
}

// settle ends a supervised run: a cancelled one is committed as such with what it produced, one
// that lost its lease commits nothing, a failed one is its error, and a finished one (even if
// a cancel came too late to stop it) is committed as usual.
func (s *Service) settle(ctx context.Context, t *turn, sv *supervisor, out *engine.Result, err error) (*Result, error) {
	if t.onEnd != nil {
		t.onEnd(out, err)
	}
	switch cause := sv.stop(); {
	case errors.Is(cause, errCancelRequested):
		if out == nil {
			out = &engine.Result{}
		}
		// The run's context is cancelled and ctx may be near its end: the commit gets its own.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		defer cancel()
		return s.finish(cctx, t, out, true)
	case err != nil && cause != nil:
		return nil, leaseLost(err)
	case err != nil:
		return nil, engineError(err)
	}
	return s.finish(ctx, t, out, false)
}

// commitTimeout bounds the commit of a cancelled run, made on a context of its own.
const commitTimeout = 10 * time.Second

// turn is one part of an execution: a new message's run up to its end or its first pause, or
// the run from a pause to the next.
type turn struct {
	sess    *domain.Session
	g       *domain.AgentConfig
	leaseID string
	vars    map[string]any
	req     ExecuteRequest
	start   time.Time
	exec    *domain.Execution // the record so far (a resumed execution's, with its events)
	user    *domain.Message   // the new user message; nil when resuming
	async   bool
	queued  bool // run by the worker from a queued record (a message or an answer)
	events  []map[string]any
	calls   []ToolCall
	prior   time.Duration // time the execution ran before this part
	cost    pricing.Meter // of this part's model calls
	prices  Prices
	keyID   string // of the caller's API key; empty for a queued run (the worker has none)
	embed   int64  // embedding tokens of this part's retrievals (their events' embedding_tokens)
	onEnd   func(*engine.Result, error)
	// canWriteMemory: the caller holds memory:write (extraction is queued only then);
	// extractEvent is the turn's memory_extract event (nil: none), extractAt its index in events.
	canWriteMemory bool
	extractEvent   *engine.Event
	extractAt      int
	onEvent        func(engine.Event)
}

// price is the cost of the model call a model_call event's data records.
func (t *turn) price(data map[string]any) (float64, bool) {
	if t.prices == nil {
		return 0, false
	}
	provider, _ := data["provider"].(string)
	model, _ := data["model"].(string)
	in, _ := data["input_tokens"].(int)
	out, _ := data["output_tokens"].(int)
	return t.prices.Cost(provider, model, in, out)
}

// callCost is a model call's cost_usd in its event: nil (null) when the model has no price.
func callCost(usd float64, ok bool) any {
	if !ok {
		return nil
	}
	return usd
}

// count is what this part adds to the company's usage counters: one request, an execution
// when it began one, its tokens (usage less the earlier parts' recorded on t.exec) and cost.
func (t *turn) count(at time.Time, usage domain.Usage) domain.UsageEntry {
	c := domain.UsageEntry{Company: t.sess.Company, Day: at.UTC().Truncate(24 * time.Hour), KeyID: t.keyID, AgentID: t.sess.AgentID,
		UsageCount: domain.UsageCount{Requests: 1, InputTokens: int64(usage.InputTokens - t.exec.InputTokens),
			OutputTokens: int64(usage.OutputTokens - t.exec.OutputTokens), EmbeddingTokens: t.embed}}
	if t.user != nil {
		c.Executions = 1
	}
	c.CostUSD = t.cost.Priced()
	if t.cost.Unknown() {
		c.Unpriced = 1
	}
	return c
}

// priorCost is the meter of an execution's earlier parts: their recorded cost, unknown when
// they made priced calls that were not recorded (a record from before costs were kept).
func priorCost(e *domain.Execution) pricing.Meter {
	var m pricing.Meter
	switch {
	case e.CostUSD != nil:
		m.Add(*e.CostUSD, true)
	case e.InputTokens+e.OutputTokens > 0:
		m.Add(0, false)
	}
	return m
}

// engineRun is the engine's run of t, recording events and tool calls as they happen.
func (t *turn) engineRun(p domain.Principal, history []engine.Message, parts []domain.Part, obs Observer) engine.Run {
	t.events = t.exec.Events
	t.cost, t.keyID, t.embed, t.onEnd = pricing.Meter{}, p.KeyID, 0, obs.OnEnd
	t.canWriteMemory, t.onEvent = p.Can(domain.ScopeMemoryWrite), obs.OnEvent
	return engine.Run{
		Graph: t.g, Principal: domain.Principal{Company: t.sess.Company, Owner: t.sess.Owner, Scopes: p.Scopes},
		History: history, Input: parts, Variables: t.vars, DeclineElicitations: t.req.DeclineElicitations, Memory: memoryRun(t.sess, t.g, t.exec.ID),
		Trace: engine.TraceInfo{ConversationID: t.sess.ID, AgentID: t.sess.AgentID, AgentName: t.sess.AgentName, ExecutionID: t.exec.ID},
		Emit: func(e engine.Event) {
			if e.Type == engine.EventModelCall {
				// The call's cost goes into its event (null: no price) by the rule that sums
				// the execution's, so the calls' costs add up to it.
				usd, ok := t.price(e.Data)
				t.cost.Add(usd, ok)
				if e.Data != nil {
					e.Data["cost_usd"] = callCost(usd, ok)
				}
			}
			t.events = append(t.events, eventRecord(e, t.exec.ID, t.req.CorrelationID, len(t.events)))
			t.calls = collectToolCall(t.calls, e)
			if n, ok := e.Data["embedding_tokens"].(int); ok && (e.Type == engine.EventRetrieval || e.Type == engine.EventMemoryRecall) {
				t.embed += int64(n)
			}
			if obs.OnEvent != nil {
				obs.OnEvent(e)
			}
		},
		OnText: obs.OnText,
	}
}

// finish commits what the engine produced: the new messages, the execution record and the
// session's checkpoint, in one transaction that releases the lease. A paused run also stores
// the assistant's tool-call turns and what it waits for; a cancelled one (cancelled) is
// recorded as such with the messages of the nodes that finished, and waits for nothing.
func (s *Service) finish(ctx context.Context, t *turn, out *engine.Result, cancelled bool) (*Result, error) {
	done := s.now().UTC()
	g, sess, exec := t.g, t.sess, t.exec
	var msgs []domain.Message
	if t.user != nil {
		msgs = append(msgs, *t.user)
	}
	for _, m := range out.Messages[out.Resumed:] {
		dm := domain.Message{ID: m.ID, Role: m.Role, Node: m.Node, Content: m.Content, Visible: m.Visible, ExecutionID: exec.ID, CreatedAt: done,
			Citations: m.Citations}
		if dm.ID == "" {
			dm.ID = uuid.NewString()
		}
		msgs = append(msgs, dm)
	}
	var pending *domain.PendingAction
	if p := out.Pending; p != nil && !cancelled {
		input := ""
		if t.user != nil {
			input = t.user.Content
		} else if sess.Pending != nil {
			input = sess.Pending.Input
		}
		pending = &domain.PendingAction{Type: p.Type, ExecutionID: exec.ID, ToolCalls: p.Calls, Input: input, CreatedAt: done}
		msgs = append(msgs, toolCallMessages(g, p, exec.ID, done)...)
	}
	newMsgs := msgs
	if t.user != nil {
		newMsgs = msgs[1:]
	}
	if g.SaveMessages {
		// What is stored is what the result shows, and the history and the poll show later.
		userBytes := 0
		if t.user != nil {
			userBytes = len(t.user.Content)
		}
		clipStored(newMsgs, MaxStoredRunBytes-userBytes)
	}
	var visible []domain.Message
	for _, m := range newMsgs {
		if m.Visible {
			visible = append(visible, m)
		}
	}
	// A failed answer's error goes with the answer that now applied.
	exec.Status, exec.StopReason, exec.Error, exec.ErrorType = domain.ExecCompleted, out.StopReason, "", ""
	count := t.count(done, out.Usage)
	total := priorCost(exec).Plus(t.cost)
	exec.InputTokens, exec.OutputTokens = out.Usage.InputTokens, out.Usage.OutputTokens
	exec.CostUSD = total.Total()
	exec.DurationMS = (t.prior + done.Sub(t.start)).Milliseconds()
	exec.CompletedAt, exec.Pending, exec.Checkpoint = &done, nil, nil
	if pending != nil {
		exec.Status, exec.StopReason, exec.CompletedAt = domain.ExecRequiresAction, "", nil
		exec.Pending, exec.Checkpoint = pending, out.Pending.Checkpoint
	}
	if cancelled {
		exec.Status, exec.StopReason = domain.ExecCancelled, StopCancelled
	}
	extract := s.extraction(t, visible, pending != nil, cancelled)
	// A paused execution's checkpoint shares its item with the events.
	exec.Events = capEvents(t.events, MaxEventsBytes-len(exec.Checkpoint))
	exec.Request, exec.Scopes = nil, nil
	for _, m := range visible {
		exec.MessageIDs = append(exec.MessageIDs, m.ID)
	}

	next := *sess
	next.UpdatedAt = done
	next.Pending = pending
	if t.user != nil {
		next.Executions++
	}
	commit := domain.Commit{Session: &next, LeaseID: t.leaseID}
	if t.queued {
		// The worker recorded it running when it took the job: a cancel or the watchdog that
		// settled it since (its worker seemed dead) keeps the last word.
		commit.ExecutionFrom = domain.ExecRunning
	}
	if g.PersistentState {
		next.Variables = t.vars
	}
	switch {
	case g.SaveMessages:
		for i := range msgs {
			next.MessageCount++
			msgs[i].Seq = next.MessageCount
			if msgs[i].Visible {
				next.VisibleCount++
			}
		}
		commit.Messages, commit.Execution = msgs, exec
	case t.async || pending != nil || t.user == nil || cancelled:
		// Nothing of the conversation is kept, but the poller (and a cancel request) must
		// learn that the run finished, and a paused run must find its checkpoint.
		bare := *exec
		bare.Events, bare.MessageIDs = []map[string]any{}, nil
		commit.Execution = &bare
	}
	if err := s.store.Commit(ctx, commit); err != nil {
		return nil, err
	}
	s.enqueueExtraction(ctx, t, commit.Execution, extract)
	if s.usage != nil {
		// One UpdateItem after the commit. Its failure is not the execute's: the run is
		// committed, and an error would have the client run it again; the report then counts
		// this part short.
		_ = s.usage.CountUsage(ctx, count)
	}
	s.publish(runContext(ctx, out), sess.Company, exec)
	// The result shows this part's messages; a resumed execution's record lists them all.
	return &Result{Session: &next, Execution: exec, Messages: visible, ToolCalls: t.calls, Pending: pending}, nil
}

// capEvents keeps an execution's events under limit bytes of JSON by dropping the data of the
// largest events (marked "truncated"); the events themselves and their order stay.
func capEvents(events []map[string]any, limit int) []map[string]any {
	size := func(e map[string]any) int { b, _ := json.Marshal(e); return len(b) }
	total := 0
	sizes := make([]int, len(events))
	for i, e := range events {
		sizes[i] = size(e)
		total += sizes[i]
	}
	for total > limit {
		big := 0
		for i := range sizes {
			if sizes[i] > sizes[big] {
				big = i
			}
		}
		if _, ok := events[big]["data"]; !ok {
			break
		}
		delete(events[big], "data")
		events[big]["truncated"] = true
		n := size(events[big])
		total -= sizes[big] - n
		sizes[big] = n
	}
	return events
}

func missingVariables(g *engine.Graph, vars map[string]any) []string {
	var missing []string
	for _, name := range engine.Variables(g) {
		if _, ok := vars[name]; !ok {
			missing = append(missing, name)
		}
	}
	return missing
}

// engineError maps engine failures to client-facing kinds.
func engineError(err error) error {
	var nl *engine.NodeRunLimitError
	var up *engine.UnknownProviderError
	switch {
	case errors.As(err, &nl):
		return &domain.Error{Kind: domain.KindInvalid, Message: "The configuration cannot run: " + nl.Error(), Err: err}
	case errors.As(err, &up):
		return &domain.Error{Kind: domain.KindInvalid, Message: fmt.Sprintf("llm_config.provider %q is not available in this deployment", up.Provider), Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &domain.Error{Kind: domain.KindOverloaded, Message: "The execution did not finish in time; use asynchronous execution (?async=true) for long runs", Err: err}
	}
	return err
}

func eventRecord(e engine.Event, execID string, correlation *string, seq int) map[string]any {
	r := map[string]any{"sequence": seq, "type": e.Type, "timestamp": e.Time.UTC().Format(time.RFC3339Nano), "execution_id": execID, "correlation_id": correlation}
	if e.Node != "" {
		r["node"] = e.Node
	}
	if len(e.Data) > 0 {
		r["data"] = e.Data
	}
	return r
}

func collectToolCall(calls []ToolCall, e engine.Event) []ToolCall {
	id, _ := e.Data["tool_use_id"].(string)
	switch e.Type {
	case engine.EventToolCall:
		name, _ := e.Data["tool"].(string)
		in, _ := e.Data["input"].(map[string]any)
		return append(calls, ToolCall{ID: id, Name: name, Input: in})
	case engine.EventToolResult:
		for i := range calls {
			if calls[i].ID == id {
				calls[i].Output, _ = e.Data["output"].(string)
				calls[i].IsError, _ = e.Data["is_error"].(bool)
			}
		}
	}
	return calls
}

// Messages pages through a session's visible history, oldest first.
func (s *Service) Messages(ctx context.Context, p domain.Principal, sessionID string, limit, offset int) ([]domain.Message, int, bool, error) {
	sess, err := s.Get(ctx, p, sessionID)
	if err != nil {
		return nil, 0, false, err
	}
	msgs, more, err := s.store.Messages(ctx, sess.ID, limit, offset)
	if err != nil {
		return nil, 0, false, err
	}
	return msgs, sess.VisibleCount, more, nil
}

// newExecutionID is a UUIDv7: its text sorts as its time, so a session's executions are stored
// (sort key "X#<id>") in the order they were created, and a page of their events is read from
// the start without reading them all.
func newExecutionID() string { return uuid.Must(uuid.NewV7()).String() }

// EventsPage is one page of a session's events.
type EventsPage struct {
	Events []map[string]any
	// Total counts the matching events of the executions read for the page: all of them when
	// More is false, otherwise at least one more than the page and those before it.
	Total int
	More  bool // matching events follow the page
}

// Events lists one page of a session's recorded events, executions in the order they were
// created and events in their sequence, filtered by correlation or execution id: limit events
// after skipping offset. It reads executions only until it has seen one matching event past
// the page (one GetItem for an execution id), never the whole session unless the page needs it.
func (s *Service) Events(ctx context.Context, p domain.Principal, sessionID, correlationID, executionID string, offset, limit int) (EventsPage, error) {
	if _, err := s.Get(ctx, p, sessionID); err != nil {
		return EventsPage{}, err
	}
	pg := EventsPage{Events: []map[string]any{}}
	take := func(e *domain.Execution) bool {
		if correlationID != "" && (e.CorrelationID == nil || *e.CorrelationID != correlationID) {
			return true
		}
		for _, ev := range e.Events {
			if pg.Total >= offset && len(pg.Events) < limit {
				pg.Events = append(pg.Events, ev)
			}
			pg.Total++
		}
		return pg.Total <= offset+limit
	}
	switch {
	case executionID == "":
		if err := s.store.EachExecution(ctx, sessionID, take); err != nil {
			return EventsPage{}, fmt.Errorf("events of %s: %w", sessionID, err)
		}
	case domain.IsID(executionID):
		e, err := s.store.GetExecution(ctx, sessionID, executionID)
		switch {
		case err == nil:
			take(e)
		case !errors.Is(err, domain.ErrNotFound):
			return EventsPage{}, fmt.Errorf("events of %s: %w", sessionID, err)
		}
	}
	pg.More = pg.Total > offset+len(pg.Events)
	return pg, nil
}

func asDomain(err error, target **domain.Error) bool { return errors.As(err, target) }
