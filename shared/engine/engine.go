package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentorch/agentorch/shared/domain"
)

// Message is a stored conversation message; Role is RoleUser or RoleAssistant, Node the agent
// that wrote an assistant message and Visible whether the user is shown it.
type Message struct {
	ID        string
	Role      string
	Node      string
	Content   string
	Visible   bool
	CreatedAt time.Time
	// Citations are the knowledge base passages an assistant message drew on: nil when its
	// node did not retrieve, empty when it searched and gave the model nothing.
	Citations []domain.Citation
}

// Run is one execution: a new user message run through a graph after the earlier conversation.
type Run struct {
	Graph *Graph
	// Principal is the caller the run is for: tools are bound for it.
	Principal domain.Principal
	// History holds the earlier messages, oldest first, visible or not.
	History []Message
	// Input is the new user message (text, image and document parts).
	Input []domain.Part
	// Variables fill the {{ variables.name }} placeholders of the system prompts.
	Variables map[string]any
	// Emit, when set, receives every event as it happens; the engine sets Event.Time.
	Emit func(Event)
	// OnText, when set, receives assistant text as models produce it. It includes a react
	// agent's text before its tool calls, which is not part of its message.
	//
	// Emit and OnText are called one call at a time, the one never during the other, although
	// the nodes of a step run concurrently: a consumer sees a single sequence of events and
	// text, in the order it happened.
	OnText func(node, delta string)
	// NewID makes message ids; nil means random UUIDs.
	NewID func() string
	// Tools, when set, binds tools for this run only, after the engine's own binder: tools
	// that hold per-run state (a company's MCP servers, read once, with their connections).
	Tools ToolBinder
	// Trace names the run's invoke_agent span (the session, the agent, the execution).
	Trace TraceInfo
	// DeclineElicitations says that no person can answer an MCP server's question in this run
	// (elicitation): it is declined, and the call's result says so, instead of pausing the run.
	DeclineElicitations bool
	// Memory is the memory of the end user the run serves (with an engine WithMemory); nil:
	// none.
	Memory *MemoryRun
}

// Result is what an execution produced.
type Result struct {
	// Messages are the new assistant messages in the order produced: step by step, and within
	// a step in configuration order.
	Messages []Message
	Usage    domain.Usage
	// StopReason is end_turn when every node finished normally, else the stop reason of the
	// last node that did not (max_iterations, max_tokens, content_filtered).
	StopReason string
	Steps      int // supersteps run
	Events     int // events emitted
	// Pending is set when the run paused: a function tool's call waits for the client, or an
	// MCP call for a person's approval. Resume continues it.
	Pending *Pending
	// Resumed counts the leading Messages that earlier parts of a resumed run produced, which
	// the caller stored when the run paused; Messages[Resumed:] are new.
	Resumed int
	// Span is the span context of the run's invoke_agent span, for what is told of the run
	// after it (a webhook delivery joins the run's trace); not valid when the engine does not
	// trace.
	Span trace.SpanContext
}

// StopMaxIterations is the stop reason of a react agent that used all its model calls without
// reaching a final answer.
const StopMaxIterations = "max_iterations"

// Limits bound an execution; zero fields take their defaults.
type Limits struct {
	MaxIterations    int           // model calls per react node run, default 8
	MaxNodeRuns      int           // agent runs per execution, default domain.MaxNodeRuns
	MaxParallelTools int           // tool calls in flight per model turn, default 4
	ToolTimeout      time.Duration // per tool call, default 20 s
}

// Default limits.
const (
	DefaultMaxIterations    = 8
	DefaultMaxNodeRuns      = domain.MaxNodeRuns
	DefaultMaxParallelTools = 4
	DefaultToolTimeout      = 20 * time.Second
)

// NodeRunLimitError is returned before a step that would take an execution past MaxNodeRuns
// agent runs (a configuration that domain.ParseConfig accepted stays within domain.MaxNodeRuns).
type NodeRunLimitError struct{ Limit int }

func (e *NodeRunLimitError) Error() string {
	return fmt.Sprintf("the graph would run more than %d agents in one execution", e.Limit)
}

// Engine runs graphs of agents against models and tools. It holds no per-run state and is safe
// for concurrent use.
type Engine struct {
	models    Models
	tools     ToolBinder
	retriever Retriever // nil: knowledge_bases are ignored
	memory    Memory    // nil: runs have no memory
	limits    Limits
	tracing   Tracing
	tracer    trace.Tracer // nil: a no-op tracer
}

// NewEngine returns an engine that resolves providers with models and binds each node's tools for
// each run with tools (nil when no tools are offered).
func NewEngine(models Models, tools ToolBinder, limits Limits) *Engine {
	if limits.MaxIterations <= 0 {
		limits.MaxIterations = DefaultMaxIterations
	}
	if limits.MaxNodeRuns <= 0 {
		limits.MaxNodeRuns = DefaultMaxNodeRuns
	}
	if limits.MaxParallelTools <= 0 {
		limits.MaxParallelTools = DefaultMaxParallelTools
	}
	if limits.ToolTimeout <= 0 {
		limits.ToolTimeout = DefaultToolTimeout
	}
	return &Engine{models: models, tools: tools, limits: limits}
}

// WithRetriever returns a copy of e whose agents search their knowledge_bases with r: an
// llm_agent before its model call, a react_agent through the knowledge_base_search tool.
func (e *Engine) WithRetriever(r Retriever) *Engine {
	cp := *e
	cp.retriever = r
	return &cp
}

// errSiblingFailed cancels the other nodes of a step when one fails.
var errSiblingFailed = errors.New("another node of the step failed")

// Run executes run.Graph in supersteps. The frontier starts with the successors of __start__;
// each step runs all frontier nodes concurrently on the same conversation, then appends their
// messages in configuration order; the next frontier is the union of their successors other than
// __end__. It ends when the frontier is empty, or pauses (Result.Pending) when a node waits for
// the client or a person: the other nodes of that step finish, and the next step waits.
//
// On error the returned Result is still non-nil: it holds the messages of the steps that
// completed and the usage and events so far, for callers that keep partial work.
// Missing variables give a domain invalid-request error, a failing model the model's error
// wrapped with the agent name, too many agent runs a *NodeRunLimitError.
func (e *Engine) Run(ctx context.Context, run Run) (*Result, error) {
	return e.run(ctx, run, nil, nil)
}

// Resume continues a paused run from its checkpoint (Pending.Checkpoint) with ans, which
// answers every call Pending listed. run is the same run: the same graph, history (without the
// messages the paused run stored) and input.
func (e *Engine) Resume(ctx context.Context, run Run, checkpoint []byte, ans Answers) (*Result, error) {
	cp, err := decodeCheckpoint(checkpoint)
	if err != nil {
		return &Result{StopReason: domain.StopEndTurn}, err
	}
	return e.run(ctx, run, cp, &ans)
}

func (e *Engine) run(ctx context.Context, run Run, cp *checkpoint, ans *Answers) (res *Result, err error) {
	ctx, span := e.startRun(ctx, run)
	em := &emitter{emit: run.Emit, onText: run.OnText, declineAsk: run.DeclineElicitations, mem: e.newMemoryState(run)}
	res = &Result{StopReason: domain.StopEndTurn, Span: span.SpanContext()}
	defer func() {
		res.Events = em.count()
		e.endRun(ctx, span, res, err)
	}()
	g := run.Graph
	if g == nil {
		return res, errors.New("run: no graph")
	}
	if len(run.Input) == 0 {
		return res, domain.Errorf(domain.KindInvalid, "The message has no content")
	}
	systems, err := resolveSystems(g, run.Variables)
	if err != nil {
		return res, err
	}
	newID := run.NewID
	if newID == nil {
		newID = uuid.NewString
	}
	base := historyTurns(run.History)
	base = appendTurn(base, domain.Turn{Role: domain.RoleUser, Parts: run.Input})
	query := retrievalQuery(run.Input)
	bind := e.tools
	if run.Tools != nil {
		bind = Binders{e.tools, run.Tools}
		if e.tools == nil {
			bind = run.Tools
		}
	}

	frontier := e.next(g, []string{domain.NodeStart})
	runs := 0
	if cp != nil {
		res.Steps, runs, frontier, res.Usage, res.StopReason, query = cp.Steps, cp.Runs, cp.Frontier, cp.Usage, cp.StopReason, cp.Query
		for _, m := range cp.Messages {
			res.Messages = append(res.Messages, m.message())
		}
		res.Resumed = cp.Stored
	}
	for len(frontier) > 0 {
		if cp == nil {
			if runs+len(frontier) > e.limits.MaxNodeRuns {
				return res, &NodeRunLimitError{Limit: e.limits.MaxNodeRuns}
			}
			runs += len(frontier)
			res.Steps++
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		turns := base // the nodes leave it as it is
		if len(res.Messages) > 0 {
			turns = slices.Clone(base)
			for _, m := range res.Messages {
				turns = appendTurn(turns, textTurn(domain.RoleAssistant, m.Content))
			}
		}
		outs, err := e.step(ctx, run.Principal, query, g, frontier, systems, turns, em, bind, cp, ans)
		cp, ans = nil, nil
		if err == nil && anyPaused(outs) {
			return e.pause(res, outs, frontier, runs, query, em)
		}
		for i, o := range outs {
			if o == nil {
				continue
			}
			res.Usage.Add(o.usage)
			if o.stopReason != domain.StopEndTurn {
				res.StopReason = o.stopReason
			}
			if err == nil {
				n := g.Nodes[frontier[i]]
				res.Messages = append(res.Messages, Message{
					ID: newID(), Role: domain.RoleAssistant, Node: n.Name, Content: o.text,
					Visible: n.ShowOutput, CreatedAt: o.finished, Citations: o.citations,
				})
			}
		}
		if err != nil {
			return res, err
		}
		frontier = e.next(g, frontier)
	}
	return res, nil
}

func anyPaused(outs []*outcome) bool {
	for _, o := range outs {
		if o != nil && o.paused != nil {
			return true
		}
	}
	return false
}

// pause ends a run whose step has paused nodes: res gets the Pending with the checkpoint, and its
// usage counts the step's work so far.
func (e *Engine) pause(res *Result, outs []*outcome, frontier []string, runs int, query string, em *emitter) (*Result, error) {
	cp := &checkpoint{Steps: res.Steps, Runs: runs, Frontier: frontier, Usage: res.Usage, StopReason: res.StopReason,
		Done: map[string]*savedDone{}, Paused: map[string]*nodeState{}, Query: query, Stored: len(res.Messages)}
	for _, m := range res.Messages {
		cp.Messages = append(cp.Messages, saveMessage(m))
	}
	p := &Pending{Text: map[string]string{}}
	// Call ids are the models'; two paused nodes may have used the same one (the offline model
	// numbers its calls), so such ids are qualified with their node for the client.
	seen := map[string]int{}
	for _, o := range outs {
		if o != nil && o.paused != nil {
			o.paused.External = nil // this pause's collisions only
			for id := range o.paused.Waiting {
				seen[id]++
			}
		}
	}
	var approvals, asked, calls []PendingCall
	for i, o := range outs {
		name := frontier[i]
		res.Usage.Add(o.usage)
		if o.paused == nil {
			cp.Done[name] = &savedDone{Text: o.text, StopReason: o.stopReason, Usage: o.usage, Finished: o.finished,
				Citations: o.citations, Retrieved: o.citations != nil}
			continue
		}
		cp.Paused[name] = o.paused
		if t := o.paused.text(); t != "" {
			p.Text[name] = t
		}
		for _, u := range o.paused.uses() {
			kind, waiting := o.paused.Waiting[u.ID]
			if !waiting {
				continue
			}
			id := u.ID
			if seen[u.ID] > 1 {
				id = name + "/" + u.ID
				if o.paused.External == nil {
					o.paused.External = map[string]string{}
				}
				o.paused.External[u.ID] = id
			}
			pc := PendingCall{ID: id, Name: u.Name, Arguments: u.Input, Node: name, Kind: domain.ToolKindFunction}
			switch kind {
			case PauseApproval:
				pc.Kind, pc.Server = domain.ToolKindMCP, o.paused.Servers[u.ID]
				approvals = append(approvals, pc)
			case PauseElicitation:
				pc.Kind, pc.Server = domain.ToolKindMCP, o.paused.Servers[u.ID]
				if es := o.paused.Elicit[u.ID]; es != nil && es.Asked != nil {
					q := *es.Asked
					pc.Elicitation = &q
				}
				asked = append(asked, pc)
			default:
				calls = append(calls, pc)
			}
		}
	}
	// Approvals come before anything of their turn runs; questions arise as calls run, and
	// the function calls of the turn wait on until they are answered.
	p.Type, p.Calls = PauseToolCalls, calls
	if len(asked) > 0 {
		p.Type, p.Calls = PauseElicitation, asked
	}
	if len(approvals) > 0 {
		p.Type, p.Calls = PauseApproval, approvals
	}
	for i := range p.Calls {
		if p.Calls[i].Arguments == nil {
			p.Calls[i].Arguments = map[string]any{}
		}
	}
	b, err := cp.encode()
	if err != nil {
		return res, err
	}
	p.Checkpoint = b
	ids := make([]string, len(p.Calls))
	for i, c := range p.Calls {
		ids[i] = c.ID
	}
	em.send(Event{Type: EventRequiresAction, Data: map[string]any{"type": p.Type, "tool_call_ids": ids}})
	res.Pending = p
	return res, nil
}

func saveMessage(m Message) savedMessage {
	return savedMessage{ID: m.ID, Node: m.Node, Content: m.Content, Visible: m.Visible, CreatedAt: m.CreatedAt,
		Citations: m.Citations, Retrieved: m.Citations != nil}
}

func (m savedMessage) message() Message {
	cites := m.Citations
	if m.Retrieved && cites == nil {
		cites = []domain.Citation{}
	}
	return Message{ID: m.ID, Role: domain.RoleAssistant, Node: m.Node, Content: m.Content, Visible: m.Visible,
		CreatedAt: m.CreatedAt, Citations: cites}
}

// step runs the frontier nodes concurrently and waits for all of them. The outcomes are in
// frontier order; on error the first failure is returned and the other nodes are cancelled.
// query is what the nodes' knowledge bases are searched for (the new message's text).
// A resumed step (cp set) takes the outcome of its finished nodes from cp and continues its
// paused ones with ans.
func (e *Engine) step(ctx context.Context, p domain.Principal, query string, g *Graph, frontier []string, systems []string, turns []domain.Turn, em *emitter, bind ToolBinder, cp *checkpoint, ans *Answers) ([]*outcome, error) {
	if len(frontier) == 1 {
		// A step of one node (every step of a flat agent) runs on this goroutine, as no other
		// node is there to cancel: a new goroutine would start on a small stack that the model
		// call grows by copying, and the wait would wake another thread.
		o, err := e.stepNode(ctx, p, query, g, frontier[0], systems, turns, em, bind, cp, ans)
		if err != nil {
			em.send(Event{Type: EventError, Node: frontier[0], Data: map[string]any{"message": err.Error()}})
		}
		return []*outcome{o}, err
	}
	return e.stepConcurrent(ctx, p, query, g, frontier, systems, turns, em, bind, cp, ans)
}

// stepConcurrent is a step of several nodes: each on its own goroutine, the others cancelled when
// one fails.
func (e *Engine) stepConcurrent(ctx context.Context, p domain.Principal, query string, g *Graph, frontier []string, systems []string, turns []domain.Turn, em *emitter, bind ToolBinder, cp *checkpoint, ans *Answers) ([]*outcome, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	outs := make([]*outcome, len(frontier))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for i, name := range frontier {
		wg.Go(func() {
			o, err := e.stepNode(ctx, p, query, g, name, systems, turns, em, bind, cp, ans)
			outs[i] = o
			if err == nil {
				return
			}
			if errors.Is(context.Cause(ctx), errSiblingFailed) {
				return // cancelled because of another node's failure, which is reported
			}
			em.send(Event{Type: EventError, Node: name, Data: map[string]any{"message": err.Error()}})
			mu.Lock()
			if firstErr == nil {
				firstErr = err
				cancel(errSiblingFailed)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return outs, firstErr
}

// stepNode runs the frontier node name of a step; in a resumed step a node that had finished
// gives its saved outcome and a paused one continues.
func (e *Engine) stepNode(ctx context.Context, p domain.Principal, query string, g *Graph, name string, systems []string, turns []domain.Turn, em *emitter, bind ToolBinder, cp *checkpoint, ans *Answers) (*outcome, error) {
	var resume *nodeState
	if cp != nil {
		if d := cp.Done[name]; d != nil {
			return d.outcome(), nil
		}
		resume = cp.Paused[name]
	}
	system := ""
	if i := slices.Index(g.Order, name); i >= 0 {
		system = systems[i]
	}
	return e.runNode(ctx, p, query, g.Nodes[name], system, turns, em, bind, resume, ans)
}

// next returns the distinct successors of nodes other than __end__, in configuration order.
func (e *Engine) next(g *Graph, nodes []string) []string {
	var out []string
	for _, n := range nodes {
		for _, s := range g.Successors(n) {
			if s != domain.NodeEnd && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	if len(out) > 1 {
		slices.SortFunc(out, func(a, b string) int { return slices.Index(g.Order, a) - slices.Index(g.Order, b) })
	}
	return out
}

// historyTurns turns stored messages into text turns, merging consecutive messages of one role
// so that providers that require alternating roles accept them.
func historyTurns(history []Message) []domain.Turn {
	// As appendTurn would build them, without its copies: every part here is this call's own.
	turns := make([]domain.Turn, 0, len(history)+1)
	// One text part per turn, from one allocation; a turn's parts are capped so that appending
	// to them copies.
	parts := make([]domain.Part, len(history))
	for _, m := range history {
		if m.Role != domain.RoleUser && m.Role != domain.RoleAssistant {
			continue
		}
		text := strings.TrimSpace(m.Content)
		if text == "" {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].Role == m.Role {
			last := &turns[n-1].Parts[0] // history turns hold one text part
			last.Text += "\n\n" + text
			continue
		}
		k := len(turns)
		parts[k] = domain.Part{Type: domain.PartText, Text: text}
		turns = append(turns, domain.Turn{Role: m.Role, Parts: parts[k : k+1 : k+1]})
	}
	return turns
}

// textTurn is a turn of one text part; the text is trimmed because some providers reject
// trailing whitespace in a final assistant turn.
func textTurn(role, text string) domain.Turn {
	text = strings.TrimSpace(text)
	if text == "" {
		return domain.Turn{Role: role}
	}
	return domain.Turn{Role: role, Parts: []domain.Part{{Type: domain.PartText, Text: text}}}
}

// appendTurn appends t to turns, merging it into the last turn when both have the same role;
// adjacent text parts are joined with a blank line. Turns without parts are dropped.
func appendTurn(turns []domain.Turn, t domain.Turn) []domain.Turn {
	if len(t.Parts) == 0 {
		return turns
	}
	if len(turns) == 0 || turns[len(turns)-1].Role != t.Role {
		return append(turns, domain.Turn{Role: t.Role, Parts: slices.Clone(t.Parts)})
	}
	last := &turns[len(turns)-1]
	parts := slices.Clone(last.Parts)
	for _, p := range t.Parts {
		if k := len(parts) - 1; p.Type == domain.PartText && parts[k].Type == domain.PartText {
			parts[k].Text += "\n\n" + p.Text
			continue
		}
		parts = append(parts, p)
	}
	last.Parts = parts
	return turns
}

// emitter serializes the event and text callbacks of concurrent nodes under one lock, so that
// neither kind ever runs during the other, and counts the events.
type emitter struct {
	mu     sync.Mutex
	emit   func(Event)
	onText func(node, delta string)
	n      int
	// declineAsk is the run's DeclineElicitations, which the nodes see with their emitter.
	declineAsk bool
	// mem is the run's memory, which its nodes share with their emitter; nil: none.
	mem *memoryState
}

func (em *emitter) send(ev Event) {
	em.mu.Lock()
	defer em.mu.Unlock()
	ev.Time = time.Now().UTC()
	em.n++
	if em.emit != nil {
		em.emit(ev)
	}
}

func (em *emitter) count() int {
	em.mu.Lock()
	defer em.mu.Unlock()
	return em.n
}

// textFunc returns the OnText callback for a node's model requests, or nil when none is wanted.
func (em *emitter) textFunc(node string) func(string) {
	if em.onText == nil {
		return nil
	}
	return func(delta string) {
		em.mu.Lock()
		defer em.mu.Unlock()
		em.onText(node, delta)
	}
}
