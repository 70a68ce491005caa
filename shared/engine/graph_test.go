package engine

import (
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/google/go-cmp/cmp"
)

func testTools() toolSet {
	return toolSet{"calc": constTool("calc", "4"), "search": constTool("search", "found")}
}

func ptr(f float64) *float64 { return &f }

// parseGraph parses as sessions do: domain.ParseConfig with the tool catalog (none when nil).
func parseGraph(cfg map[string]any, tools toolSet) (*Graph, []domain.FieldError) {
	var catalog domain.ToolCatalog
	if tools != nil {
		catalog = tools
	}
	return domain.ParseConfig(cfg, catalog, "")
}

func TestParseGraph(t *testing.T) {
	tests := []struct {
		name string
		cfg  string
		want *Graph
	}{
		{
			name: "flat",
			cfg: `{"name":"bot","agent_type":"react_agent","system_prompt":"Be brief.","tools":["calc"],
				"llm_config":{"provider":"fake","model":"m1","max_tokens":100,"temperature":0.2,"top_p":0.9}}`,
			want: &Graph{
				Name: "bot",
				Nodes: map[string]*Node{"bot": {Name: "bot", AgentType: domain.AgentTypeReact, SystemPrompt: "Be brief.",
					Provider: "fake", Model: "m1", MaxTokens: 100, Temperature: ptr(0.2), TopP: ptr(0.9),
					Tools: []string{"calc"}, ShowOutput: true}},
				Order: []string{"bot"},
				Edges: []Edge{{From: "__start__", To: "bot"}, {From: "bot", To: "__end__"}},
				Entry: "bot", SaveMessages: true, PersistentState: true,
			},
		},
		{
			name: "knowledge bases are typed",
			cfg: `{"name":"kb","knowledge_bases":[{"name":"docs","knowledge_base_type":"opensearch","knowledge_base_id":"k1",
				"enabled":false,"retrieval_config":{"top_k":3}},{"name":"faq","knowledge_base_id":"k2"}]}`,
			want: &Graph{
				Name: "kb",
				Nodes: map[string]*Node{"kb": {Name: "kb", AgentType: domain.AgentTypeLLM, MaxTokens: domain.DefaultMaxTokens, ShowOutput: true,
					KnowledgeBases: []domain.KnowledgeBaseRef{
						{Name: "docs", Type: "opensearch", ID: "k1", Enabled: false, Retrieval: domain.RetrievalConfig{TopK: 3}, Path: "knowledge_bases.0"},
						{Name: "faq", Type: "opensearch", ID: "k2", Enabled: true, Path: "knowledge_bases.1"},
					}}},
				Order: []string{"kb"},
				Edges: []Edge{{From: "__start__", To: "kb"}, {From: "kb", To: "__end__"}},
				Entry: "kb", SaveMessages: true, PersistentState: true,
			},
		},
		{
			name: "agents without edges run in config order",
			cfg: `{"name":"g","save_messages":false,"persistent_state":false,"agents":[
				{"name":"a","description":"first","prompt_config":{"system_prompt":"A"},"streaming_config":{"show_output_to_user":false}},
				{"name":"b"}]}`,
			want: &Graph{
				Name: "g",
				Nodes: map[string]*Node{
					"a": {Name: "a", AgentType: domain.AgentTypeLLM, Description: "first", SystemPrompt: "A", MaxTokens: domain.DefaultMaxTokens},
					"b": {Name: "b", AgentType: domain.AgentTypeLLM, MaxTokens: domain.DefaultMaxTokens, ShowOutput: true},
				},
				Order: []string{"a", "b"},
				Edges: []Edge{{From: "__start__", To: "a"}, {From: "a", To: "b"}, {From: "b", To: "__end__"}},
				Entry: "a",
			},
		},
		{
			name: "edges without a start edge begin at entry_point",
			cfg: `{"name":"g","entry_point":"b","agents":[{"name":"a"},{"name":"b"}],
				"edges":[{"from":"b","to":"a"},{"from":"a","to":"__end__"}]}`,
			want: &Graph{
				Name: "g",
				Nodes: map[string]*Node{
					"a": {Name: "a", AgentType: domain.AgentTypeLLM, MaxTokens: domain.DefaultMaxTokens, ShowOutput: true},
					"b": {Name: "b", AgentType: domain.AgentTypeLLM, MaxTokens: domain.DefaultMaxTokens, ShowOutput: true},
				},
				Order: []string{"a", "b"},
				Edges: []Edge{{From: "__start__", To: "b"}, {From: "b", To: "a"}, {From: "a", To: "__end__"}},
				Entry: "b", SaveMessages: true, PersistentState: true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := parseGraph(mustConfig(t, tt.cfg), testTools())
			if errs != nil {
				t.Fatalf("errors: %v", errs)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("graph (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGraphErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  string
		want []domain.FieldError
	}{
		{"unknown tool in flat config", `{"name":"a","tools":["calc","nope"]}`,
			[]domain.FieldError{{Field: "tools.1", Message: `unknown tool "nope"; available: calc, search`}}},
		{"unknown tool in a node", `{"name":"g","agents":[{"name":"a"},{"name":"b","tools":["web"]}]}`,
			[]domain.FieldError{{Field: "agents.1.tools.0", Message: `unknown tool "web"; available: calc, search`}}},
		{"edge to a missing node", `{"name":"g","agents":[{"name":"a"}],"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"zz"}]}`,
			[]domain.FieldError{{Field: "edges.1.to", Message: `names no agent: "zz"`}}},
		{"no path from start to end", `{"name":"g","agents":[{"name":"a"},{"name":"b"}],"edges":[{"from":"__start__","to":"a"},{"from":"b","to":"__end__"}]}`,
			[]domain.FieldError{{Field: "edges", Message: "no path leads from __start__ to __end__"}}},
		{"duplicate node name", `{"name":"g","agents":[{"name":"a"},{"name":"a"}]}`,
			[]domain.FieldError{{Field: "agents.1.name", Message: `duplicate node name "a"`}}},
		{"entry_point names no agent", `{"name":"g","entry_point":"x","agents":[{"name":"a"}]}`,
			[]domain.FieldError{{Field: "entry_point", Message: `names no agent: "x"`}}},
		{"entry_point not first without edges", `{"name":"g","entry_point":"b","agents":[{"name":"a"},{"name":"b"}]}`,
			[]domain.FieldError{{Field: "entry_point", Message: `must name the first agent ("a"): without edges the agents run in configuration order`}}},
		{"edge into start and out of end", `{"name":"g","agents":[{"name":"a"}],"edges":[{"from":"a","to":"__start__"},{"from":"__end__","to":"a"},{"from":"a","to":"__end__"}]}`,
			[]domain.FieldError{
				{Field: "edges.0.to", Message: "__start__ cannot have incoming edges"},
				{Field: "edges.1.from", Message: "__end__ cannot have outgoing edges"},
			}},
		{"field types come from domain validation", `{"name":"g","agents":[{"name":"a","agent_type":"robot"}]}`,
			[]domain.FieldError{{Field: "agents.0.agent_type", Message: `must be one of "llm_agent", "react_agent" (got "robot")`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, errs := parseGraph(mustConfig(t, tt.cfg), testTools())
			if g != nil {
				t.Errorf("graph = %+v, want nil", g)
			}
			if diff := cmp.Diff(tt.want, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGraphWithoutToolRegistry(t *testing.T) {
	_, errs := parseGraph(mustConfig(t, `{"name":"a","tools":["calc"]}`), nil)
	want := []domain.FieldError{{Field: "tools.0", Message: `unknown tool "calc"; available: none`}}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
