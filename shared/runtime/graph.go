package runtime

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
// graph is nil.
//
// The flat shape becomes one node wired __start__ → node → __end__; its edges and entry_point
// are ignored. In the multi-node shape:
//   - without "edges", the agents run one after another in configuration order,
//     __start__ → a1 → a2 → … → __end__, and entry_point, if given, must name the first agent;
//   - with "edges", the edges are authoritative. When no edge leaves __start__, one is added
//     from __start__ to entry_point (or to the first agent); otherwise entry_point is only
//     informative. Some path must lead from __start__ to __end__. A node without outgoing
//     edges ends its branch; nodes __start__ cannot reach never run.
//
// Every tool a node names must exist in tools, whatever the node's type.
func ParseGraph(cfg map[string]any, tools Tools) (*Graph, []domain.FieldError) {
	if errs := domain.ValidateAgentConfig(cfg, ""); len(errs) > 0 {
		return nil, errs
	}
	p := &parser{tools: tools}
	g := &Graph{
		Nodes:           map[string]*Node{},
		SaveMessages:    boolOr(cfg["save_messages"], true),
		PersistentState: boolOr(cfg["persistent_state"], true),
	}
	g.Name, _ = cfg["name"].(string)

	agents, multi := cfg["agents"].([]any)
	if !multi {
		n := p.node(cfg, "")
		g.Nodes[n.Name] = n
		g.Order = []string{n.Name}
		g.Entry = n.Name
		g.Edges = []Edge{{domain.NodeStart, n.Name}, {n.Name, domain.NodeEnd}}
		return p.result(g)
	}
	for i, a := range agents {
		path := fmt.Sprintf("agents.%d", i)
		n := p.node(a.(map[string]any), path) // ValidateAgentConfig checked each is an object
		if _, dup := g.Nodes[n.Name]; dup {
			p.add(path+".name", "duplicate node name %q", n.Name)
			continue
		}
		g.Nodes[n.Name] = n
		g.Order = append(g.Order, n.Name)
	}
	entry, _ := cfg["entry_point"].(string)
	if entry != "" && g.Nodes[entry] == nil {
		p.add("entry_point", "names no agent: %q", entry)
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}

	edges, hasEdges := cfg["edges"].([]any)
	if !hasEdges {
		if entry != "" && entry != g.Order[0] {
			p.add("entry_point", "must name the first agent (%q): without edges the agents run in configuration order", g.Order[0])
		}
		prev := domain.NodeStart
		for _, name := range g.Order {
			g.Edges = append(g.Edges, Edge{prev, name})
			prev = name
		}
		g.Edges = append(g.Edges, Edge{prev, domain.NodeEnd})
		g.Entry = g.Order[0]
		return p.result(g)
	}

	p.edges(g, edges)
	starts := g.Successors(domain.NodeStart)
	switch {
	case len(starts) == 0:
		if entry == "" {
			entry = g.Order[0]
		}
		g.Edges = append([]Edge{{domain.NodeStart, entry}}, g.Edges...)
		g.Entry = entry
	case slices.Contains(starts, entry):
		g.Entry = entry
	default:
		g.Entry = starts[0]
	}
	if len(p.errs) == 0 && !reaches(g, domain.NodeStart, domain.NodeEnd) {
		p.add("edges", "no path leads from %s to %s", domain.NodeStart, domain.NodeEnd)
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

// edges reads the edge list into g and rejects edges into __start__ or out of __end__.
func (p *parser) edges(g *Graph, list []any) {
	for i, x := range list {
		m := x.(map[string]any)
		e := Edge{From: m["from"].(string), To: m["to"].(string)}
		if e.From == domain.NodeEnd {
			p.add(fmt.Sprintf("edges.%d.from", i), "%s cannot have outgoing edges", domain.NodeEnd)
		}
		if e.To == domain.NodeStart {
			p.add(fmt.Sprintf("edges.%d.to", i), "%s cannot have incoming edges", domain.NodeStart)
		}
		g.Edges = append(g.Edges, e)
	}
}

// reaches reports whether a path of edges leads from one node to another.
func reaches(g *Graph, from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, s := range g.Successors(n) {
			if s == to {
				return true
			}
			if !seen[s] {
				seen[s] = true
				queue = append(queue, s)
			}
		}
	}
	return false
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
