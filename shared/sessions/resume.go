package sessions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
)

// MaxToolOutputBytes bounds one client result of a function tool.
const MaxToolOutputBytes = 64 << 10

// MCP is what sessions needs of the company's MCP servers: a read of them for checking
// configurations, and each run's binder of their tools.
type MCP interface {
	domain.MCPResolver
	// NewRun returns the binder of one run's MCP tools; Close ends its connections.
	NewRun() RunTools
}

// RunTools binds tools for one run and is closed when the run ends.
type RunTools interface {
	engine.ToolBinder
	// Resume, called before the run binds anything, makes it bind what still exists: a server
	// deleted since the run paused binds no tools instead of failing the run, which would leave
	// its session waiting for good (the engine settles the calls that waited on the server).
	Resume()
	Close() error
}

// runTools is the run's MCP binder, or nil when the configuration binds no MCP server.
func (s *Service) runTools(g *domain.AgentConfig) RunTools {
	if s.mcp == nil || !g.HasMCP() {
		return nil
	}
	return s.mcp.NewRun()
}

// checkTools refuses a configuration whose tool entries name what the company lacks.
func (s *Service) checkTools(ctx context.Context, p domain.Principal, g *domain.AgentConfig) error {
	var r domain.MCPResolver
	if s.mcp != nil {
		r = s.mcp
	}
	errs, err := g.CheckToolsFor(ctx, r, p.Company)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return domain.Invalid(errs)
	}
	return nil
}

// Answer continues a paused execution: the client's results of its function calls, a
// person's decisions on its MCP calls, or a person's answers to the questions of its MCP calls'
// servers (elicitations). Exactly one of the lists is given.
type Answer struct {
	ToolResults  []ToolResultInput  `json:"tool_results,omitempty"`
	Approvals    []ApprovalInput    `json:"approvals,omitempty"`
	Elicitations []ElicitationInput `json:"elicitations,omitempty"`
	// HasResults, HasApprovals and HasElicitations say which field the body carried (an empty
	// list counts).
	HasResults      bool `json:"has_results,omitempty"`
	HasApprovals    bool `json:"has_approvals,omitempty"`
	HasElicitations bool `json:"has_elicitations,omitempty"`
}

// ToolResultInput is one tool_results entry.
type ToolResultInput struct {
	ToolCallID string `json:"tool_call_id"`
	Output     string `json:"output"`
	IsError    bool   `json:"is_error,omitempty"`
}

// ApprovalInput is one approvals entry.
type ApprovalInput struct {
	ToolCallID string `json:"tool_call_id"`
	Approve    bool   `json:"approve"`
	Reason     string `json:"reason,omitempty"`
}

// permit refuses p an answer it may not give: approving or denying calls needs ScopeApprovals
// (besides the ScopeSessionsWrite of executing), so that a key that runs sessions does not
// approve its own calls; results of function calls need nothing more.
func (a *Answer) permit(p domain.Principal) error {
	if a.HasApprovals && !p.Can(domain.ScopeApprovals) {
		return &domain.Error{Kind: domain.KindPermission, Message: domain.MsgNoPermission,
			Err: fmt.Errorf("answering approvals needs the %s scope", domain.ScopeApprovals)}
	}
	return nil
}

// check validates the answer on its own (against the pending calls: matches).
func (a *Answer) check() error {
	var errs []domain.FieldError
	add := func(f, m string) { errs = append(errs, domain.FieldError{Field: f, Message: m}) }
	if a.HasResults && a.HasApprovals {
		add("approvals", "send either tool_results or approvals, not both")
	}
	if a.HasElicitations && (a.HasResults || a.HasApprovals) {
		add("elicitations", "send one of tool_results, approvals and elicitations, not several")
	}
	seen := map[string]bool{}
	for i, r := range a.ToolResults {
		f := fmt.Sprintf("tool_results.%d", i)
		if m := callIDError(r.ToolCallID, seen); m != "" {
			add(f+".tool_call_id", m)
		}
		if len(r.Output) > MaxToolOutputBytes {
			add(f+".output", fmt.Sprintf("must be at most %d bytes", MaxToolOutputBytes))
		}
	}
	for i, ap := range a.Approvals {
		f := fmt.Sprintf("approvals.%d", i)
		if m := callIDError(ap.ToolCallID, seen); m != "" {
			add(f+".tool_call_id", m)
		}
		if len(ap.Reason) > 2000 {
			add(f+".reason", "must be at most 2000 characters")
		}
	}
	errs = append(errs, a.checkElicitations(seen)...)
	if len(errs) > 0 {
		return domain.Invalid(errs)
	}
	return nil
}

// callIDError is what is wrong with an answer entry's tool_call_id ("" when nothing): absent,
// or answering a call a second time. It marks id seen.
func callIDError(id string, seen map[string]bool) string {
	defer func() { seen[id] = true }()
	switch {
	case id == "":
		return "is required"
	case seen[id]:
		return fmt.Sprintf("answers %q a second time", domain.Clip(id, 64))
	}
	return ""
}

// match checks the answer against what the session waits for: the right list, every pending
// call answered, nothing else.
func (a *Answer) match(p *domain.PendingAction) error {
	list, ids := "tool_results", make([]string, 0, len(a.ToolResults)+len(a.Approvals))
	for _, r := range a.ToolResults {
		ids = append(ids, r.ToolCallID)
	}
	if a.HasApprovals {
		list = "approvals"
		for _, ap := range a.Approvals {
			ids = append(ids, ap.ToolCallID)
		}
	}
	if a.HasElicitations {
		list, ids = "elicitations", ids[:0]
		for _, e := range a.Elicitations {
			ids = append(ids, e.ToolCallID)
		}
	}
	want := answerList(p.Type)
	if list != want {
		return field(list, fmt.Sprintf("the execution waits for %s, not %s", want, list))
	}
	pending := make([]string, len(p.ToolCalls))
	for i, c := range p.ToolCalls {
		pending[i] = c.ID
	}
	var errs []domain.FieldError
	for i, id := range ids {
		if !slices.Contains(pending, id) {
			errs = append(errs, domain.FieldError{Field: fmt.Sprintf("%s.%d.tool_call_id", list, i),
				Message: fmt.Sprintf("no pending tool call %q (pending: %s)", domain.Clip(id, 64), strings.Join(pending, ", "))})
		}
	}
	var missing []string
	for _, id := range pending {
		if !slices.Contains(ids, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, domain.FieldError{Field: list, Message: "must answer every pending tool call; missing: " + strings.Join(missing, ", ")})
	}
	errs = append(errs, a.matchElicitations(p)...)
	if len(errs) > 0 {
		return domain.Invalid(errs)
	}
	return nil
}

func (a *Answer) engineAnswers() engine.Answers {
	ans := engine.Answers{Results: map[string]domain.ToolResult{}, Approvals: map[string]engine.Decision{}}
	for _, r := range a.ToolResults {
		ans.Results[r.ToolCallID] = domain.ToolResult{ToolUseID: r.ToolCallID, Content: r.Output, IsError: r.IsError}
	}
	for _, ap := range a.Approvals {
		ans.Approvals[ap.ToolCallID] = engine.Decision{Approve: ap.Approve, Reason: ap.Reason}
	}
	if a.HasElicitations {
		ans.Elicitations = map[string]domain.ElicitAnswer{}
		for _, e := range a.Elicitations {
			ans.Elicitations[e.ToolCallID] = domain.ElicitAnswer{Action: e.Action, Content: e.Content}
		}
	}
	return ans
}

// errNothingPending marks an answer for a session that waits for nothing.
var errNothingPending = errors.New("nothing pending")

func nothingPending(a *Answer) error {
	e := domain.Invalid([]domain.FieldError{{Field: answerField(a), Message: "the session has no pending tool calls (they may have been answered already)"}})
	e.Err = errNothingPending
	return e
}

// errPending marks a new message refused because the session waits for answers.
var errPending = errors.New("the session waits for answers to pending tool calls")

// pendingConflict is the 409 of a new message while the session waits.
func pendingConflict(p *domain.PendingAction) error {
	ids := make([]string, len(p.ToolCalls))
	for i, c := range p.ToolCalls {
		ids[i] = c.ID
	}
	how := answerList(p.Type)
	return &domain.Error{Kind: domain.KindConflict, Err: errPending, Message: fmt.Sprintf(
		"The session is waiting for %s of execution %s (tool calls: %s); answer them with %q before sending a new message",
		p.Type, p.ExecutionID, strings.Join(ids, ", "), how)}
}

// resume continues the session's paused execution with the answer.
func (s *Service) resume(ctx context.Context, p domain.Principal, sess *domain.Session, leaseID, runID string, req ExecuteRequest, obs Observer) (*Result, error) {
	if err := req.Answer.permit(p); err != nil {
		return nil, err
	}
	pend := sess.Pending
	if pend == nil {
		return nil, nothingPending(req.Answer)
	}
	if err := req.Answer.match(pend); err != nil {
		return nil, err
	}
	g, err := s.parsed(sess)
	if err == nil {
		g, err = s.withFunctions(g, req.Functions)
	}
	if err != nil {
		return nil, err
	}
	exec, err := s.store.GetExecution(ctx, sess.ID, pend.ExecutionID)
	if err != nil {
		return nil, fmt.Errorf("paused execution %s: %w", pend.ExecutionID, err)
	}
	if len(exec.Checkpoint) == 0 {
		return nil, fmt.Errorf("paused execution %s has no checkpoint", exec.ID)
	}
	if runID == "" {
		// A synchronous answer learnt its execution from the session: the lease names it now
		// (one UpdateItem), so that a cancel finds the run.
		if err := s.store.ExtendLease(ctx, sess.ID, leaseID, exec.ID, s.now().Add(s.limits.RunLease)); err != nil {
			return nil, fmt.Errorf("lease of paused execution %s: %w", exec.ID, err)
		}
	}
	vars := map[string]any{}
	var history []engine.Message
	if g.PersistentState {
		for k, v := range sess.Variables {
			vars[k] = v
		}
		// The messages the paused execution stored are in its checkpoint; a stateless client
		// brings the conversation before it again.
		if req.History != nil {
			history = seedHistory(req.History, engine.HistoryBudget(g))
		} else if history, err = s.history(ctx, sess.ID, engine.HistoryBudget(g), exec.ID); err != nil {
			return nil, err
		}
	}
	req.CorrelationID = exec.CorrelationID
	t := &turn{sess: sess, g: g, leaseID: leaseID, vars: vars, req: req, start: s.now().UTC(), exec: exec, prices: s.prices,
		prior: time.Duration(exec.DurationMS) * time.Millisecond, queued: runID != "" && exec.Status == domain.ExecRunning}
	run := t.engineRun(p, history, []domain.Part{{Type: domain.PartText, Text: pend.Input}}, obs)
	tools := s.runTools(g)
	if tools != nil {
		tools.Resume()
		run.Tools = tools
		defer func() { _ = tools.Close() }()
	}
	if obs.OnStart != nil {
		obs.OnStart(exec.ID)
	}
	sv := s.supervise(ctx, sess.ID, leaseID, exec.ID)
	defer func() { _ = sv.stop() }() // settle stops it; this, should the engine panic
	out, err := s.engine.Resume(sv.ctx, run, exec.Checkpoint, req.Answer.engineAnswers())
	return s.settle(ctx, t, sv, out, err)
}

func answerField(a *Answer) string {
	switch {
	case a.HasApprovals:
		return "approvals"
	case a.HasElicitations:
		return "elicitations"
	}
	return "tool_results"
}

// toolCallMessages are the assistant turns of a paused run's nodes: the text before the calls
// and the calls, stored so that history shows what the run waits for.
func toolCallMessages(g *domain.AgentConfig, p *engine.Pending, execID string, at time.Time) []domain.Message {
	var out []domain.Message
	for _, name := range g.Order {
		var calls []domain.PendingToolCall
		for _, c := range p.Calls {
			if c.Node == name {
				calls = append(calls, c)
			}
		}
		if len(calls) == 0 {
			continue
		}
		visible := true
		if n := g.Nodes[name]; n != nil {
			visible = n.ShowOutput
		}
		out = append(out, domain.Message{ID: uuid.NewString(), Role: domain.RoleAssistant, Node: name, Content: p.Text[name],
			Visible: visible, ExecutionID: execID, CreatedAt: at, ToolCalls: calls})
	}
	return out
}
