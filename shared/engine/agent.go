package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// maxEventOutput bounds the tool output an event carries; the model always sees all of it.
const maxEventOutput = 2000

// outcome is what one node run produced.
type outcome struct {
	text       string
	stopReason string
	usage      domain.Usage
	finished   time.Time
	citations  []domain.Citation // nil: the node did not retrieve
	paused     *nodeState        // non-nil: the node waits for answers (Pending)
}

// runNode runs one node on the conversation turns and returns its final text. turns is shared
// with the other nodes of the step and is not modified; query is what an llm_agent searches its
// knowledge bases for.
//
// resume, when set, is the node's state from a paused run, continued with ans.
func (e *Engine) runNode(ctx context.Context, p domain.Principal, query string, n *Node, system string, turns []domain.Turn, em *emitter, bind ToolBinder, resume *nodeState, ans *Answers) (o *outcome, err error) {
	start := time.Now()
	ctx, span := e.startNode(ctx, n)
	if resume == nil {
		em.send(Event{Type: EventNodeStarted, Node: n.Name, Data: map[string]any{"agent_type": n.AgentType}})
	}
	o = &outcome{}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("agent %q: panic: %v", n.Name, r)
		}
		endNode(span, o, err)
		if err != nil || o.paused != nil {
			return
		}
		now := time.Now()
		o.finished = now.UTC()
		em.send(Event{Type: EventNodeFinished, Node: n.Name, Data: map[string]any{
			"duration_ms": now.Sub(start).Milliseconds(), "stop_reason": o.stopReason,
		}})
	}()
	model, err := e.models.Model(n.Provider)
	if err != nil {
		return o, fmt.Errorf("agent %q: %w", n.Name, err)
	}
	c := &call{e: e, node: n, model: model, em: em, company: p.Company, req: domain.ModelRequest{
		Provider: n.Provider, Model: n.Model, System: system, Turns: slices.Clip(turns),
		MaxTokens: n.MaxTokens, Temperature: n.Temperature, TopP: n.TopP, OnText: em.textFunc(n.Name),
	}, base: len(turns)}
	if c.req.MaxTokens <= 0 {
		c.req.MaxTokens = domain.DefaultMaxTokens
	}
	if kbs := enabledKnowledgeBases(n); e.retriever != nil && len(kbs) > 0 {
		c.retr = newRetrieval(kbs, RetrievalBudget(n.Provider, n.Model))
		if !p.Can(domain.ScopeKnowledgeRead) {
			c.denyRetrieval()
		}
	}
	if c.mem = em.mem; c.mem != nil {
		c.recallForPrompt(ctx, query)
	}
	if n.AgentType == domain.AgentTypeReact {
		if bind != nil {
			bn := n
			if len(n.MCP) > 0 && !p.Can(domain.ScopeAgentsRead) {
				bn = c.denyMCP()
			}
			bound, err := bind.Bind(ctx, p, bn)
			if err != nil {
				return o, fmt.Errorf("agent %q: tools: %w", n.Name, err)
			}
			c.addTools(bound)
		} else {
			c.addTools(nil)
		}
		if resume != nil {
			denied := len(n.MCP) > 0 && !p.Can(domain.ScopeAgentsRead) // as bound above
			for _, t := range resume.goneTools(func(name string) bool { _, ok := c.tools[name]; return ok }, denied) {
				c.addTool(t)
			}
			c.retr.restore(resume.Retrieval)
			c.req.Turns = append(slices.Clip(c.req.Turns), resume.Turns...)
		}
		err = c.react(ctx, o, resume, ans)
	} else {
		if c.retr != nil && query != "" {
			c.retrieveForPrompt(ctx, query)
		}
		err = c.llm(ctx, o)
	}
	if err != nil {
		return o, fmt.Errorf("agent %q: %w", n.Name, err)
	}
	if c.retr != nil && o.paused == nil {
		o.citations = c.retr.citations(o.text)
	}
	return o, nil
}

// call is one node run's conversation with its model.
type call struct {
	e       *Engine
	node    *Node
	model   domain.Model
	em      *emitter
	company string // the tenant whose knowledge bases are searched
	req     domain.ModelRequest
	tools   map[string]domain.Tool // bound for this run (react agents)
	retr    *retrieval             // nil: the node does not retrieve
	mem     *memoryState           // nil: the run has no memory
	base    int                    // turns shared with the step's other nodes; the node's own follow
}

// addTool offers t to the model unless a tool of the same name is already bound.
// addTools adds a node's bound tools, then knowledge_base_search and the memory tools, and the
// MCP tools last: a name is bound once, so a built-in, a function, the search tool or a memory
// tool always keeps its name, and
// a server's tool that a refresh renamed onto one of them is left out rather than taking its
// place (configurations that bind such a server are refused from then on; sessions opened
// before keep the built-in).
func (c *call) addTools(bound []domain.Tool) {
	var remote []domain.Tool
	for _, t := range bound {
		if d, ok := t.(domain.DescribedTool); ok && d.Meta().Kind == domain.ToolKindMCP {
			remote = append(remote, t)
			continue
		}
		c.addTool(t)
	}
	if c.retr != nil {
		c.addTool(&searchTool{c: c})
	}
	if c.mem != nil {
		for _, t := range c.memoryTools() {
			c.addTool(t)
		}
	}
	for _, t := range remote {
		c.addTool(t)
	}
}

// denyMCP is the node without its MCP bindings, for a caller without agents:read (the scope
// that reads MCP servers, which binding one needs at configuration time too), and says so in
// one error event; the run goes on with the node's other tools, as retrieval does without
// knowledge:read.
func (c *call) denyMCP() *Node {
	servers := c.node.MCPRefs()
	c.em.send(Event{Type: EventError, Node: c.node.Name, Data: map[string]any{
		"message": MCPDenied, "mcp_servers": servers,
	}})
	bn := *c.node
	bn.MCP = nil
	return &bn
}

func (c *call) addTool(t domain.Tool) {
	name := t.Spec().Name
	if _, dup := c.tools[name]; dup {
		return
	}
	if c.tools == nil {
		c.tools = map[string]domain.Tool{}
	}
	c.tools[name] = t
	c.req.Tools = append(c.req.Tools, t.Spec())
}

// llm makes the single model call of an llm_agent, without tools.
func (c *call) llm(ctx context.Context, o *outcome) error {
	resp, err := c.converse(ctx, o, 1)
	if err != nil {
		return err
	}
	o.text, o.stopReason = resp.Text(), stopReason(resp)
	return nil
}

// react runs the model → tools → model loop of a react_agent until a response asks for no
// tool, or until MaxIterations model calls. It pauses (o.paused) when a call waits for the client
// or for a person; resume continues such a pause with ans.
func (c *call) react(ctx context.Context, o *outcome, resume *nodeState, ans *Answers) error {
	last, first := "", 1
	if resume != nil {
		last, first = resume.Last, resume.Iteration+1
		o.usage = resume.Usage
		if done, err := c.advance(ctx, o, resume, ans); err != nil || !done {
			return err
		}
	}
	for i := first; i <= c.e.limits.MaxIterations; i++ {
		resp, err := c.converse(ctx, o, i)
		if err != nil {
			return err
		}
		if t := resp.Text(); t != "" {
			last = t
		}
		var asked []domain.Part
		calls := 0
		for _, p := range resp.Parts {
			switch {
			case p.Type == domain.PartToolUse && p.ToolUse != nil:
				asked = append(asked, p)
				calls++
			case p.Type == domain.PartText && p.Text != "":
				asked = append(asked, p)
			}
		}
		if calls == 0 {
			o.text, o.stopReason = resp.Text(), stopReason(resp)
			return nil
		}
		st := &nodeState{Asked: asked, Results: make([]*domain.ToolResult, calls), Checked: make([]bool, calls),
			Approved: map[string]bool{}, Iteration: i, Last: last}
		if done, err := c.advance(ctx, o, st, nil); err != nil || !done {
			return err
		}
	}
	o.text, o.stopReason = last, StopMaxIterations
	if o.text == "" {
		o.text = fmt.Sprintf("Stopped after %d iterations without a final answer.", c.e.limits.MaxIterations)
	}
	return nil
}

// advance answers the calls of one model turn as far as it can: tools that need no one run,
// approvals and client results in ans are applied. It reports done when every call has its
// result (the turn and its results are then in the conversation), or pauses the node: o.paused
// holds what it waits for. Approvals come first: nothing of the turn runs before they are given.
func (c *call) advance(ctx context.Context, o *outcome, st *nodeState, ans *Answers) (bool, error) {
	uses := st.uses()
	for i, u := range uses {
		if st.Checked[i] {
			continue
		}
		st.Checked[i] = true
		meta := c.meta(u.Name)
		c.em.send(Event{Type: EventToolCall, Node: c.node.Name, Data: toolData(meta, map[string]any{
			"tool": u.Name, "tool_use_id": u.ID, "input": u.Input,
		})})
		if (meta.Kind == domain.ToolKindFunction || meta.NeedsApproval) && meta.Check != nil {
			if err := meta.Check(u.Input); err != nil {
				c.settle(st, i, u, meta, err.Error(), true, 0)
			}
		}
	}
	if ans != nil {
		for i, u := range uses {
			if st.Results[i] != nil {
				continue
			}
			meta := c.meta(u.Name)
			switch st.Waiting[u.ID] {
			case PauseApproval:
				d, ok := ans.Approvals[st.external(u.ID)]
				if !ok {
					continue
				}
				data := map[string]any{"tool": u.Name, "tool_use_id": u.ID, "approve": d.Approve}
				if d.Reason != "" {
					data["reason"] = d.Reason
				}
				c.em.send(Event{Type: EventApproval, Node: c.node.Name, Data: toolData(meta, data)})
				if d.Approve && st.replaced(u.ID, meta) {
					c.settle(st, i, u, meta, c.notMade(st, u), true, 0)
					continue
				}
				if d.Approve {
					st.Approved[u.ID] = true
					continue
				}
				msg := "A person denied this call."
				if d.Reason != "" {
					msg += " Reason: " + d.Reason
				}
				c.settle(st, i, u, meta, msg, true, 0)
			case PauseToolCalls:
				if r, ok := ans.Results[st.external(u.ID)]; ok {
					c.settle(st, i, u, meta, r.Content, r.IsError, 0)
				}
			case PauseElicitation:
				if a, ok := ans.Elicitations[st.external(u.ID)]; ok {
					c.answerElicitation(st, u, a) // the call is made again below
				}
			}
		}
	}
	st.Waiting = map[string]string{}
	for i, u := range uses {
		if meta := c.meta(u.Name); st.Results[i] == nil && meta.NeedsApproval && !st.Approved[u.ID] {
			st.waitApproval(u.ID, meta)
		}
	}
	if len(st.Waiting) > 0 {
		return false, c.pause(o, st)
	}
	var runnable []int
	for i, u := range uses {
		if st.Results[i] == nil && c.meta(u.Name).Kind != domain.ToolKindFunction {
			runnable = append(runnable, i)
		}
	}
	c.runTools(ctx, st, uses, runnable)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	for i, u := range uses {
		if _, asked := st.Waiting[u.ID]; st.Results[i] == nil && !asked {
			st.Waiting[u.ID] = PauseToolCalls
		}
	}
	if len(st.Waiting) > 0 {
		return false, c.pause(o, st)
	}
	results := make([]domain.Part, len(uses))
	for i, r := range st.Results {
		results[i] = domain.Part{Type: domain.PartToolResult, ToolResult: r}
	}
	c.req.Turns = append(c.req.Turns,
		domain.Turn{Role: domain.RoleAssistant, Parts: st.Asked},
		domain.Turn{Role: domain.RoleUser, Parts: results})
	return true, nil
}

// pause records the node's state in o for the checkpoint.
func (c *call) pause(o *outcome, st *nodeState) error {
	st.Turns = slices.Clone(c.req.Turns[c.base:])
	st.Usage = o.usage
	st.Retrieval = c.retr.save()
	o.paused = st
	return nil
}

// settle gives call i its result and records the tool_result event (and an error event for a
// failure that is not the client's or a person's answer).
func (c *call) settle(st *nodeState, i int, u *domain.ToolUse, meta domain.ToolMeta, out string, isErr bool, took time.Duration) {
	st.Results[i] = &domain.ToolResult{ToolUseID: u.ID, Content: out, IsError: isErr}
	c.em.send(Event{Type: EventToolResult, Node: c.node.Name, Data: toolData(meta, map[string]any{
		"tool": u.Name, "tool_use_id": u.ID, "is_error": isErr,
		"output": domain.Clip(out, maxEventOutput), "duration_ms": took.Milliseconds(),
	})})
}

// meta is what the bound tool name is; an unknown or plain tool is a built-in.
func (c *call) meta(name string) domain.ToolMeta {
	if t, ok := c.tools[name].(domain.DescribedTool); ok {
		return t.Meta()
	}
	return domain.ToolMeta{Kind: domain.ToolKindBuiltin}
}

// toolData adds the tool's kind (and an MCP tool's server) to an event's data.
func toolData(meta domain.ToolMeta, data map[string]any) map[string]any {
	data["kind"] = meta.Kind
	if meta.Server != "" {
		data["server"] = meta.Server
	}
	return data
}

// converse makes one model call and records it as a model_call event.
func (c *call) converse(ctx context.Context, o *outcome, iteration int) (*domain.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	ctx, span := c.startChat(ctx)
	resp, err := c.model.Converse(ctx, c.req)
	if err == nil && resp == nil {
		err = errors.New("model returned no response")
	}
	c.endChat(span, resp, err)
	if err != nil {
		return nil, err
	}
	o.usage.Add(resp.Usage)
	data := map[string]any{
		"provider": c.node.Provider, "model": c.node.Model,
		"input_tokens": resp.Usage.InputTokens, "output_tokens": resp.Usage.OutputTokens,
		"stop_reason": resp.StopReason, "duration_ms": time.Since(start).Milliseconds(),
		"iteration": iteration, "output": domain.Clip(resp.Text(), maxEventOutput),
	}
	if c.e.tracing.CaptureContent {
		data["prompt"] = promptData(c.req)
	}
	c.em.send(Event{Type: EventModelCall, Node: c.node.Name, Data: data})
	return resp, nil
}

func stopReason(resp *domain.ModelResponse) string {
	if resp.StopReason == "" || resp.StopReason == domain.StopToolUse {
		return domain.StopEndTurn
	}
	return resp.StopReason
}

func (c *call) toolsLookup(name string) (domain.Tool, bool) {
	t, ok := c.tools[name]
	return t, ok
}

// runTools runs the calls of one model turn listed in which concurrently, at most
// MaxParallelTools at a time, and settles their results in st. Failures become error results.
func (c *call) runTools(ctx context.Context, st *nodeState, uses []*domain.ToolUse, which []int) {
	sem := make(chan struct{}, c.e.limits.MaxParallelTools)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, i := range which {
		u := uses[i]
		wg.Go(func() {
			start := time.Now()
			var out string
			var err error
			mu.Lock()
			ce := c.elicitor(st, u.ID)
			mu.Unlock()
			select {
			case sem <- struct{}{}:
				tctx, span := c.startTool(ctx, u)
				out, err = c.callTool(domain.WithElicitor(tctx, ce), u)
				c.endTool(span, out, err)
				<-sem
			case <-ctx.Done():
				err = ctx.Err()
			}
			if err != nil {
				out = err.Error()
			}
			mu.Lock()
			out, waits := c.asked(st, u, ce, out)
			if !waits {
				c.settle(st, i, u, c.meta(u.Name), out, err != nil, time.Since(start))
			}
			mu.Unlock()
			if waits {
				return // its result is set aside: the call is made again once a person answered
			}
			if err != nil {
				c.em.send(Event{Type: EventError, Node: c.node.Name, Data: map[string]any{
					"message": err.Error(), "tool": u.Name, "tool_use_id": u.ID,
				}})
			}
		})
	}
	wg.Wait()
}

// callTool calls one tool within ToolTimeout. The call runs in its own goroutine so that a tool
// that ignores its context cannot hold up the run, and a panic becomes an error.
func (c *call) callTool(ctx context.Context, u *domain.ToolUse) (string, error) {
	t, ok := c.toolsLookup(u.Name)
	if !ok {
		return "", fmt.Errorf("unknown tool %q", u.Name)
	}
	tctx, cancel := context.WithTimeout(ctx, c.e.limits.ToolTimeout)
	defer cancel()
	tctx = context.WithValue(tctx, toolUseIDKey{}, u.ID)
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("tool %q failed: panic: %v", u.Name, r)}
			}
		}()
		out, err := t.Call(tctx, u.Input)
		done <- result{out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-tctx.Done():
		r.err = tctx.Err()
	}
	if r.err != nil && ctx.Err() != nil {
		return "", ctx.Err() // the run itself was cancelled
	}
	if r.err != nil && tctx.Err() != nil {
		return "", fmt.Errorf("tool %q timed out after %s", u.Name, c.e.limits.ToolTimeout)
	}
	return r.out, r.err
}
