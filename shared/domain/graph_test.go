package domain

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// agentsJSON is a list of n agents named prefix0, prefix1, ….
func agentsJSON(prefix string, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"name":"%s%d"}`, prefix, i)
	}
	return strings.Join(out, ",")
}

// twoDepths is a chain c0 … c(n-1) that __start__ reaches at depth 1 and, through p, at depth 2:
// every node of the chain runs in two steps, so an execution runs 2n+1 agents.
func twoDepths(n int) string {
	edges := []string{`{"from":"__start__","to":"c0"}`, `{"from":"__start__","to":"p"}`, `{"from":"p","to":"c0"}`}
	for i := 0; i+1 < n; i++ {
		edges = append(edges, fmt.Sprintf(`{"from":"c%d","to":"c%d"}`, i, i+1))
	}
	edges = append(edges, fmt.Sprintf(`{"from":"c%d","to":"__end__"}`, n-1))
	return `{"name":"g","agents":[{"name":"p"},` + agentsJSON("c", n) + `],"edges":[` + strings.Join(edges, ",") + `]}`
}

func TestGraphStructure(t *testing.T) {
	tests := []struct {
		name string
		cfg  string
		want []FieldError
	}{
		{"a chain longer than 25 agents", `{"name":"g","agents":[` + agentsJSON("a", 26) + `]}`, nil},
		{"a chain of the most agents", `{"name":"g","agents":[` + agentsJSON("a", MaxAgents) + `]}`, nil},
		{"more agents than one execution stores", `{"name":"g","agents":[` + agentsJSON("a", MaxAgents+1) + `]}`,
			[]FieldError{{Field: "agents", Message: "must have at most 97 agents: one execution stores the messages of at most 97 agent runs"}}},
		{"a cycle with a way out still never ends", `{"name":"g","agents":[{"name":"a"},{"name":"b"}],
			"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"a"},{"from":"b","to":"__end__"}]}`,
			[]FieldError{{Field: "edges.2", Message: "closes the cycle a → b → a, which never ends: edges are unconditional, so each step " +
				"runs every successor of the previous one and the cycle's nodes run again in every round; remove an edge of the cycle"}}},
		{"a self loop", `{"name":"g","agents":[{"name":"a"}],"edges":[{"from":"a","to":"a"},{"from":"a","to":"__end__"}]}`,
			[]FieldError{{Field: "edges.0", Message: "closes the cycle a → a, which never ends: edges are unconditional, so each step " +
				"runs every successor of the previous one and the cycle's nodes run again in every round; remove an edge of the cycle"}}},
		{"a cycle __start__ cannot reach never runs", `{"name":"g","agents":[{"name":"a"},{"name":"x"},{"name":"y"}],
			"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"__end__"},{"from":"x","to":"y"},{"from":"y","to":"x"}]}`, nil},
		{"no path to __end__ is reported before the cycle", `{"name":"g","agents":[{"name":"a"},{"name":"b"}],
			"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"a"}]}`,
			[]FieldError{{Field: "edges", Message: "no path leads from __start__ to __end__"}}},
		{"nodes reached at two depths run twice", twoDepths(48), nil},
		{"more runs than one execution stores", twoDepths(49),
			[]FieldError{{Field: "edges", Message: "an execution of this graph runs 99 agents (a node runs once in every step that reaches it); at most 97 fit in one execution"}}},
		{"entry_point without edges", `{"name":"g","entry_point":"b","agents":[{"name":"a"},{"name":"b"}]}`,
			[]FieldError{{Field: "entry_point", Message: `must name the first agent ("a"): without edges the agents run in configuration order`}}},
		{"edges into __start__ and out of __end__", `{"name":"g","agents":[{"name":"a"}],"edges":[{"from":"a","to":"__start__"},{"from":"__end__","to":"a"},{"from":"a","to":"__end__"}]}`,
			[]FieldError{{Field: "edges.0.to", Message: "__start__ cannot have incoming edges"}, {Field: "edges.1.from", Message: "__end__ cannot have outgoing edges"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidateAgentConfig(parse(t, tt.cfg), "")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGraphStructureUnderPrefix(t *testing.T) {
	cfg := parse(t, `{"name":"g","agents":[{"name":"a"}],"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"a"},{"from":"a","to":"__end__"}]}`)
	if got := fields(ValidateAgentConfig(cfg, "system_config")); !cmp.Equal(got, []string{"system_config.edges.1"}) {
		t.Errorf("fields = %v", got)
	}
}

func TestFlowSteps(t *testing.T) {
	tests := []struct {
		name  string
		cfg   string
		steps [][]string
		runs  int
	}{
		{"flat", `{"name":"bot"}`, [][]string{{"bot"}}, 1},
		{"chain", `{"name":"g","agents":[{"name":"a"},{"name":"b"}]}`, [][]string{{"a"}, {"b"}}, 2},
		{"fan-out and join, in configuration order", `{"name":"g","agents":[{"name":"a"},{"name":"c"},{"name":"b"},{"name":"d"}],
			"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"a","to":"c"},{"from":"b","to":"d"},{"from":"c","to":"d"},{"from":"d","to":"__end__"}]}`,
			[][]string{{"a"}, {"c", "b"}, {"d"}}, 4},
		{"a node reached at two depths", twoDepths(2), [][]string{{"p", "c0"}, {"c0", "c1"}, {"c1"}}, 5},
		{"entry_point starts edges without a start edge", `{"name":"g","entry_point":"b","agents":[{"name":"a"},{"name":"b"}],
			"edges":[{"from":"b","to":"a"},{"from":"a","to":"__end__"}]}`, [][]string{{"b"}, {"a"}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parse(t, tt.cfg)
			if errs := ValidateAgentConfig(cfg, ""); errs != nil {
				t.Fatalf("invalid: %v", errs)
			}
			f := FlowOf(cfg)
			steps, cycle := f.Steps()
			if cycle != nil {
				t.Fatalf("cycle %v", cycle)
			}
			if diff := cmp.Diff(tt.steps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if got := f.Runs(); got != tt.runs {
				t.Errorf("runs = %d, want %d", got, tt.runs)
			}
		})
	}
}
