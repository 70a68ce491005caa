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
}

// runNode runs one node on the conversation turns and returns its final text. turns is shared
// with the other nodes of the step and is not modified; query is what an llm_agent searches its
// knowledge bases for.
func (e *Engine) runNode(ctx context.Context, p domain.Principal, query string, n *Node, system string, turns []domain.Turn, em *emitter) (o *outcome, err error) {
	start := time.Now()
	em.send(Event{Type: EventNodeStarted, Node: n.Name, Data: map[string]any{"agent_type": n.AgentType}})
	o = &outcome{}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("agent %q: panic: %v", n.Name, r)
		}
		if err != nil {
			return
		}
		o.finished = time.Now().UTC()
		em.send(Event{Type: EventNodeFinished, Node: n.Name, Data: map[string]any{
			"duration_ms": time.Since(start).Milliseconds(), "stop_reason": o.stopReason,
		}})
	}()
	model, err := e.models.Model(n.Provider)
	if err != nil {
		return o, fmt.Errorf("agent %q: %w", n.Name, err)
	}
	c := &call{e: e, node: n, model: model, em: em, company: p.Company, req: domain.ModelRequest{
		Provider: n.Provider, Model: n.Model, System: system, Turns: slices.Clip(turns),
		MaxTokens: n.MaxTokens, Temperature: n.Temperature, TopP: n.TopP, OnText: em.textFunc(n.Name),
	}}
	if c.req.MaxTokens <= 0 {
		c.req.MaxTokens = domain.DefaultMaxTokens
	}
	if kbs := enabledKnowledgeBases(n); e.retriever != nil && len(kbs) > 0 {
		c.retr = newRetrieval(kbs, RetrievalBudget(n.Provider, n.Model))
		if !p.Can(domain.ScopeKnowledgeRead) {
			c.denyRetrieval()
		}
	}
	if n.AgentType == domain.AgentTypeReact {
		if e.tools != nil {
			bound, err := e.tools.Bind(ctx, p, n)
			if err != nil {
				return o, fmt.Errorf("agent %q: tools: %w", n.Name, err)
			}
			for _, t := range bound {
				c.addTool(t)
			}
		}
		if c.retr != nil {
			c.addTool(&searchTool{c: c})
		}
		err = c.react(ctx, o)
	} else {
		if c.retr != nil && query != "" {
			c.retrieveForPrompt(ctx, query)
		}
		err = c.llm(ctx, o)
	}
	if err != nil {
		return o, fmt.Errorf("agent %q: %w", n.Name, err)
	}
	if c.retr != nil {
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
}

// addTool offers t to the model unless a tool of the same name is already bound.
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
// tool, or until MaxIterations model calls.
func (c *call) react(ctx context.Context, o *outcome) error {
	var last string
	for i := 1; i <= c.e.limits.MaxIterations; i++ {
		resp, err := c.converse(ctx, o, i)
		if err != nil {
			return err
		}
		if t := resp.Text(); t != "" {
			last = t
		}
		var uses []*domain.ToolUse
		var asked []domain.Part
		for _, p := range resp.Parts {
			switch {
			case p.Type == domain.PartToolUse && p.ToolUse != nil:
				uses = append(uses, p.ToolUse)
				asked = append(asked, p)
			case p.Type == domain.PartText && p.Text != "":
				asked = append(asked, p)
			}
		}
		if len(uses) == 0 {
			o.text, o.stopReason = resp.Text(), stopReason(resp)
			return nil
		}
		results := c.runTools(ctx, uses)
		if err := ctx.Err(); err != nil {
			return err
		}
		c.req.Turns = append(c.req.Turns,
			domain.Turn{Role: domain.RoleAssistant, Parts: asked},
			domain.Turn{Role: domain.RoleUser, Parts: results})
	}
	o.text, o.stopReason = last, StopMaxIterations
	if o.text == "" {
		o.text = fmt.Sprintf("Stopped after %d iterations without a final answer.", c.e.limits.MaxIterations)
	}
	return nil
}

// converse makes one model call and records it as a model_call event.
func (c *call) converse(ctx context.Context, o *outcome, iteration int) (*domain.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := c.model.Converse(ctx, c.req)
	if err == nil && resp == nil {
		err = errors.New("model returned no response")
	}
	if err != nil {
		return nil, err
	}
	o.usage.Add(resp.Usage)
	c.em.send(Event{Type: EventModelCall, Node: c.node.Name, Data: map[string]any{
		"provider": c.node.Provider, "model": c.node.Model,
		"input_tokens": resp.Usage.InputTokens, "output_tokens": resp.Usage.OutputTokens,
		"stop_reason": resp.StopReason, "duration_ms": time.Since(start).Milliseconds(),
		"iteration": iteration,
	}})
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

// runTools runs the tool calls of one model turn concurrently, at most MaxParallelTools at a
// time, and returns their results in the order of uses. Failures become error results.
func (c *call) runTools(ctx context.Context, uses []*domain.ToolUse) []domain.Part {
	for _, u := range uses {
		c.em.send(Event{Type: EventToolCall, Node: c.node.Name, Data: map[string]any{
			"tool": u.Name, "tool_use_id": u.ID, "input": u.Input,
		}})
	}
	results := make([]domain.Part, len(uses))
	sem := make(chan struct{}, c.e.limits.MaxParallelTools)
	var wg sync.WaitGroup
	for i, u := range uses {
		wg.Go(func() {
			start := time.Now()
			var out string
			var err error
			select {
			case sem <- struct{}{}:
				out, err = c.callTool(ctx, u)
				<-sem
			case <-ctx.Done():
				err = ctx.Err()
			}
			if err != nil {
				out = err.Error()
			}
			results[i] = domain.Part{Type: domain.PartToolResult, ToolResult: &domain.ToolResult{ToolUseID: u.ID, Content: out, IsError: err != nil}}
			c.em.send(Event{Type: EventToolResult, Node: c.node.Name, Data: map[string]any{
				"tool": u.Name, "tool_use_id": u.ID, "is_error": err != nil,
				"output": domain.Clip(out, maxEventOutput), "duration_ms": time.Since(start).Milliseconds(),
			}})
			if err != nil {
				c.em.send(Event{Type: EventError, Node: c.node.Name, Data: map[string]any{
					"message": err.Error(), "tool": u.Name, "tool_use_id": u.ID,
				}})
			}
		})
	}
	wg.Wait()
	return results
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
