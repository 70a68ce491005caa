package domain

import (
	"fmt"
	"slices"
	"strings"
)

// MaxNodeRuns bounds the agent runs of one execution. An execution commits in one DynamoDB
// transaction of at most 100 items: one message per agent run, the user message, the execution
// record and the session's checkpoint. A node runs once in every step that reaches it, so a
// graph whose branches join at different depths runs some nodes more than once.
const MaxNodeRuns = 97

// MaxAgents bounds the agents of a multi-node configuration; each reachable agent runs at least
// once per execution.
const MaxAgents = MaxNodeRuns

// Edge is a directed connection between two nodes; From may be NodeStart and To NodeEnd.
type Edge struct {
	From, To string
}

// Flow is the structure a configuration runs: its nodes, the edges the engine follows (with the
// edges out of __start__ that the configuration implies) and the first node.
type Flow struct {
	// Order lists the node names in configuration order.
	Order []string
	Edges []Edge
	Entry string
}

// Successors returns the distinct targets of the edges leaving name, in edge order.
func (f *Flow) Successors(name string) []string {
	var out []string
	for _, e := range f.Edges {
		if e.From == name && !slices.Contains(out, e.To) {
			out = append(out, e.To)
		}
	}
	return out
}

// Steps returns what an execution runs: each step's nodes in configuration order. Edges are
// unconditional, so the steps follow from the edges alone: the first step is the successors of
// __start__, each next one the successors of the previous step other than __end__, until none is
// left. When __start__ reaches a cycle there is no last step; Steps then returns the cycle
// (its first node repeated at the end) and no steps.
func (f *Flow) Steps() (steps [][]string, cycle []string) {
	if c := f.cycle(); c != nil {
		return nil, c
	}
	order := map[string]int{}
	for i, n := range f.Order {
		order[n] = i
	}
	frontier := []string{NodeStart}
	for {
		var next []string
		for _, n := range frontier {
			for _, s := range f.Successors(n) {
				if s != NodeEnd && !slices.Contains(next, s) {
					next = append(next, s)
				}
			}
		}
		if len(next) == 0 {
			return steps, nil
		}
		slices.SortFunc(next, func(a, b string) int { return order[a] - order[b] })
		steps = append(steps, next)
		frontier = next
	}
}

// Runs counts the agent runs of an execution: the nodes of all its steps. It is -1 when the run
// never ends.
func (f *Flow) Runs() int {
	steps, cycle := f.Steps()
	if cycle != nil {
		return -1
	}
	n := 0
	for _, s := range steps {
		n += len(s)
	}
	return n
}

// cycle returns a cycle that __start__ reaches, as a path whose last node is its first, or nil.
func (f *Flow) cycle() []string {
	const (
		open = 1
		done = 2
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = open
		path = append(path, n)
		for _, s := range f.Successors(n) {
			switch state[s] {
			case open:
				i := slices.Index(path, s)
				return append(slices.Clone(path[i:]), s)
			case 0:
				if c := visit(s); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	return visit(NodeStart)
}

// reaches reports whether a path of edges leads from one node to another.
func (f *Flow) reaches(from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, s := range f.Successors(n) {
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

// FlowOf returns the flow of a configuration that ValidateAgentConfig accepted, in either shape.
//
// The flat shape is one node wired __start__ → node → __end__. In the multi-node shape:
//   - without "edges", the agents run one after another in configuration order,
//     __start__ → a1 → a2 → … → __end__;
//   - with "edges", the edges are authoritative. When no edge leaves __start__, one is added
//     from __start__ to entry_point (or to the first agent); otherwise entry_point is only
//     informative. A node without outgoing edges ends its branch; nodes __start__ cannot reach
//     never run.
func FlowOf(cfg map[string]any) Flow {
	f, _ := buildFlow(cfg, "")
	return f
}

// buildFlow builds the flow of a configuration whose names and edges are well formed, and reports
// the structures that cannot run: edges into __start__ or out of __end__, an entry_point other
// than the first agent without edges, no path from __start__ to __end__, a cycle __start__
// reaches, and more agent runs than one execution can store.
func buildFlow(cfg map[string]any, prefix string) (Flow, []FieldError) {
	v := &validator{}
	var f Flow
	agents, multi := cfg["agents"].([]any)
	if !multi {
		name, _ := cfg["name"].(string)
		return Flow{Order: []string{name}, Edges: []Edge{{NodeStart, name}, {name, NodeEnd}}, Entry: name}, nil
	}
	for _, a := range agents {
		name, _ := a.(map[string]any)["name"].(string)
		f.Order = append(f.Order, name)
	}
	entry, _ := cfg["entry_point"].(string)
	list, hasEdges := cfg["edges"].([]any)
	if !hasEdges {
		if entry != "" && entry != f.Order[0] {
			v.add(join(prefix, "entry_point"), "must name the first agent (%q): without edges the agents run in configuration order", f.Order[0])
		}
		prev := NodeStart
		for _, name := range f.Order {
			f.Edges = append(f.Edges, Edge{prev, name})
			prev = name
		}
		f.Edges = append(f.Edges, Edge{prev, NodeEnd})
		f.Entry = f.Order[0]
		return f, v.errs
	}
	for i, x := range list {
		m := x.(map[string]any)
		e := Edge{From: m["from"].(string), To: m["to"].(string)}
		if e.From == NodeEnd {
			v.add(fmt.Sprintf("%s.%d.from", join(prefix, "edges"), i), "%s cannot have outgoing edges", NodeEnd)
		}
		if e.To == NodeStart {
			v.add(fmt.Sprintf("%s.%d.to", join(prefix, "edges"), i), "%s cannot have incoming edges", NodeStart)
		}
		f.Edges = append(f.Edges, e)
	}
	starts := f.Successors(NodeStart)
	switch {
	case len(starts) == 0:
		if entry == "" {
			entry = f.Order[0]
		}
		f.Edges = append([]Edge{{NodeStart, entry}}, f.Edges...)
		f.Entry = entry
	case slices.Contains(starts, entry):
		f.Entry = entry
	default:
		f.Entry = starts[0]
	}
	if len(v.errs) > 0 {
		return f, v.errs
	}
	if !f.reaches(NodeStart, NodeEnd) {
		v.add(join(prefix, "edges"), "no path leads from %s to %s", NodeStart, NodeEnd)
		return f, v.errs
	}
	if _, cycle := f.Steps(); cycle != nil {
		at := join(prefix, "edges")
		closing := Edge{cycle[len(cycle)-2], cycle[len(cycle)-1]}
		for i, x := range list {
			m := x.(map[string]any)
			if m["from"] == closing.From && m["to"] == closing.To {
				at = fmt.Sprintf("%s.%d", at, i)
				break
			}
		}
		v.add(at, "closes the cycle %s, which never ends: edges are unconditional, so each step runs every successor "+
			"of the previous one and the cycle's nodes run again in every round; remove an edge of the cycle",
			strings.Join(cycle, " → "))
		return f, v.errs
	}
	if runs := f.Runs(); runs > MaxNodeRuns {
		v.add(join(prefix, "edges"), "an execution of this graph runs %d agents (a node runs once in every step that reaches it); "+
			"at most %d fit in one execution", runs, MaxNodeRuns)
	}
	return f, v.errs
}
