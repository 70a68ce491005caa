package sessions

import (
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
)

// What a stateless client brings to one run (the OpenAI API's requests, shared/api/openaiserve):
// the conversation it holds and the function tools it runs itself. Neither is stored with the
// session; a paused run is answered with the same tools again, as such clients send them with
// every request.

// MaxClientFunctions bounds the function tools one run is given by its request.
const MaxClientFunctions = 128

// withFunctions is g with fns offered to each of its react_agent nodes beside the node's own
// tools (a copy: g is shared through the configuration cache). A function whose name is not a
// valid tool name, is a built-in's, or is a tool the node already has is refused under
// functions.N.
func (s *Service) withFunctions(g *domain.AgentConfig, fns []domain.FunctionTool) (*domain.AgentConfig, error) {
	if len(fns) == 0 {
		return g, nil
	}
	var errs []domain.FieldError
	add := func(i int, f, m string) {
		errs = append(errs, domain.FieldError{Field: fmt.Sprintf("functions.%d%s", i, f), Message: m})
	}
	if len(fns) > MaxClientFunctions {
		return nil, field("functions", fmt.Sprintf("must have at most %d entries", MaxClientFunctions))
	}
	seen := map[string]bool{}
	for i, f := range fns {
		switch {
		case !domain.ValidToolName(f.Name):
			add(i, ".name", "must be 1-64 letters, digits, _ or -")
		case seen[f.Name]:
			add(i, ".name", fmt.Sprintf("names %q a second time", f.Name))
		case s.tools != nil && s.tools.Has(f.Name):
			add(i, ".name", fmt.Sprintf("%q is a built-in tool's name; choose another", f.Name))
		}
		seen[f.Name] = true
		if f.Parameters == nil {
			continue
		}
		if t, ok := f.Parameters["type"]; ok && t != "object" {
			add(i, ".parameters.type", `must be "object": a function's arguments are an object`)
		} else if s.tools != nil {
			if err := s.tools.CheckSchema(f.Parameters); err != nil {
				add(i, ".parameters", "is not a valid JSON Schema: "+err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	out := *g
	out.Nodes = make(map[string]*domain.NodeConfig, len(g.Nodes))
	for name, n := range g.Nodes {
		out.Nodes[name] = n
		if n.AgentType != domain.AgentTypeReact {
			continue
		}
		taken := map[string]bool{}
		for _, t := range n.Tools {
			taken[t] = true
		}
		for _, f := range n.Functions {
			taken[f.Name] = true
		}
		if len(n.KnowledgeBases) > 0 {
			taken[domain.KnowledgeSearchTool] = true
		}
		c := *n
		c.Functions = append(c.Functions[:len(c.Functions):len(c.Functions)], make([]domain.FunctionTool, 0, len(fns))...)
		for i, f := range fns {
			if taken[f.Name] {
				add(i, ".name", fmt.Sprintf("the agent's node %q already has a tool %q", name, f.Name))
				continue
			}
			if f.Parameters == nil {
				f.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			f.Path = fmt.Sprintf("functions.%d", i)
			c.Functions = append(c.Functions, f)
		}
		out.Nodes[name] = &c
	}
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	return &out, nil
}

// seedHistory is the run's history from a client's conversation: its user and assistant
// messages, the most recent whole ones whose estimated tokens fit budget (as the stored history
// is cut), starting with a user message.
func seedHistory(msgs []domain.Message, budget int) []engine.Message {
	used, from := 0, len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		used += engine.EstimateTokens(msgs[i].Content)
		if used > budget {
			break
		}
		from = i
	}
	msgs = msgs[from:]
	for len(msgs) > 0 && msgs[0].Role != domain.RoleUser {
		msgs = msgs[1:]
	}
	out := make([]engine.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != domain.RoleUser && m.Role != domain.RoleAssistant {
			continue
		}
		out = append(out, engine.Message{ID: m.ID, Role: m.Role, Content: m.Content, Visible: true, CreatedAt: m.CreatedAt})
	}
	return out
}
