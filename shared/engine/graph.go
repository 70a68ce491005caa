package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// Node is one agent of a graph, with its configuration read from the session configuration.
type Node struct {
	Name         string
	AgentType    string // domain.AgentTypeLLM or domain.AgentTypeReact
	Description  string
	SystemPrompt string // may hold {{ variables.name }} placeholders
	Provider     string // llm_config.provider; empty means the deployment default
	Model        string
	MaxTokens    int
	Temperature  *float64
	TopP         *float64
	Tools        []string
	// ShowOutput is streaming_config.show_output_to_user (default true): whether the node's
	// messages are shown to the user.
	ShowOutput bool
}

// Edge is a directed connection between two nodes; From may be domain.NodeStart and To
// domain.NodeEnd.
type Edge struct {
	From, To string
}

// Graph is a parsed session configuration: the nodes to run and the edges between them.
type Graph struct {
	Name  string
	Nodes map[string]*Node
	// Order lists the node names in configuration order; nodes that run in the same step
	// contribute their messages in this order.
	Order []string
	Edges []Edge
	// Entry is the first node __start__ leads to.
	Entry string
	// SaveMessages and PersistentState are the configuration's flags (both default true).
	SaveMessages, PersistentState bool
}

// Successors returns the distinct targets of the edges leaving name, in edge order.
func (g *Graph) Successors(name string) []string {
	var out []string
	for _, e := range g.Edges {
		if e.From == name && !slices.Contains(out, e.To) {
			out = append(out, e.To)
		}
	}
	return out
}

// ParseGraph validates a session configuration of either shape and builds its graph. It reports
// every problem as a field error with a dotted path ("agents.1.tools.0"); when there are any, the
// graph is nil. The structure (which edges run, and that the run ends within
// domain.MaxNodeRuns agent runs) is domain.FlowOf's; in addition every tool a node names must
// exist in tools, whatever the node's type.
func ParseGraph(cfg map[string]any, tools Tools) (*Graph, []domain.FieldError) {
	if errs := domain.ValidateAgentConfig(cfg, ""); len(errs) > 0 {
		return nil, errs
	}
	p := &parser{tools: tools}
	flow := domain.FlowOf(cfg)
	g := &Graph{
		Nodes:           map[string]*Node{},
		Order:           flow.Order,
		Entry:           flow.Entry,
		SaveMessages:    boolOr(cfg["save_messages"], true),
		PersistentState: boolOr(cfg["persistent_state"], true),
	}
	g.Name, _ = cfg["name"].(string)
	for _, e := range flow.Edges {
		g.Edges = append(g.Edges, Edge{From: e.From, To: e.To})
	}
	agents, multi := cfg["agents"].([]any)
	if !multi {
		n := p.node(cfg, "")
		g.Nodes[n.Name] = n
		return p.result(g)
	}
	for i, a := range agents {
		n := p.node(a.(map[string]any), fmt.Sprintf("agents.%d", i)) // ValidateAgentConfig checked each is an object
		g.Nodes[n.Name] = n
	}
	return p.result(g)
}

// parser collects field errors while building nodes and edges of a validated configuration.
type parser struct {
	tools Tools
	errs  []domain.FieldError
}

func (p *parser) add(field, format string, args ...any) {
	p.errs = append(p.errs, domain.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) result(g *Graph) (*Graph, []domain.FieldError) {
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return g, nil
}

// node reads one node from a configuration that domain.ValidateAgentConfig accepted, so types
// are known to be right where the fields are present.
func (p *parser) node(m map[string]any, path string) *Node {
	n := &Node{AgentType: domain.AgentTypeLLM, MaxTokens: domain.DefaultMaxTokens, ShowOutput: true}
	n.Name, _ = m["name"].(string)
	if t, ok := m["agent_type"].(string); ok {
		n.AgentType = t
	}
	n.Description, _ = m["description"].(string)
	n.SystemPrompt, _ = m["system_prompt"].(string)
	if pc, ok := m["prompt_config"].(map[string]any); ok {
		if s, ok := pc["system_prompt"].(string); ok && s != "" {
			n.SystemPrompt = s
		}
	}
	if llm, ok := m["llm_config"].(map[string]any); ok {
		n.Provider, _ = llm["provider"].(string)
		n.Model, _ = llm["model"].(string)
		if f, ok := domain.Number(llm["max_tokens"]); ok {
			n.MaxTokens = int(math.Trunc(f))
		}
		n.Temperature = numberPtr(llm["temperature"])
		n.TopP = numberPtr(llm["top_p"])
	}
	if sc, ok := m["streaming_config"].(map[string]any); ok {
		n.ShowOutput = boolOr(sc["show_output_to_user"], true)
	}
	list, _ := m["tools"].([]any)
	for i, t := range list {
		name := t.(string)
		if p.tools == nil {
			p.add(joinPath(path, fmt.Sprintf("tools.%d", i)), "unknown tool %q; available: none", name)
			continue
		}
		if _, ok := p.tools.Tool(name); !ok {
			p.add(joinPath(path, fmt.Sprintf("tools.%d", i)), "unknown tool %q; available: %s", name, available(p.tools))
			continue
		}
		n.Tools = append(n.Tools, name)
	}
	return n
}

func available(tools Tools) string {
	names := slices.Sorted(slices.Values(tools.Names()))
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func boolOr(x any, def bool) bool {
	if b, ok := x.(bool); ok {
		return b
	}
	return def
}

func numberPtr(x any) *float64 {
	if f, ok := domain.Number(x); ok {
		return &f
	}
	return nil
}
