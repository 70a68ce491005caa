package domain

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateMemory: the memory object's fields are checked under memory. (or
// system_config.memory.), unknown keys refused, in either shape.
func TestValidateMemory(t *testing.T) {
	blocks := func(n int) string {
		var b []string
		for i := range n {
			b = append(b, fmt.Sprintf(`{"label":"b%d"}`, i))
		}
		return "[" + strings.Join(b, ",") + "]"
	}
	tests := []struct {
		name, memory string
		want         []string
	}{
		{"full", `{"enabled":true,"shared":false,"blocks":[{"label":"human","description":"d","limit":2000}],"recall":{"top_k":5},"extract":{"enabled":true,"llm_config":{"provider":"local","model":"m"},"instructions":"x"}}`, nil},
		{"null", `null`, nil},
		{"empty object", `{}`, nil},
		{"not an object", `true`, []string{"memory"}},
		{"unknown key", `{"enabled":true,"recal":{}}`, []string{"memory.recal"}},
		{"flags", `{"enabled":"yes","shared":1}`, []string{"memory.enabled", "memory.shared"}},
		{"blocks not array", `{"blocks":{}}`, []string{"memory.blocks"}},
		{"block not object", `{"blocks":["human"]}`, []string{"memory.blocks.0"}},
		{"label missing", `{"blocks":[{"limit":5}]}`, []string{"memory.blocks.0.label"}},
		{"label bad", `{"blocks":[{"label":"Human"},{"label":"1x"},{"label":7}]}`, []string{"memory.blocks.0.label", "memory.blocks.1.label", "memory.blocks.2.label"}},
		{"label duplicate", `{"blocks":[{"label":"human"},{"label":"human"}]}`, []string{"memory.blocks.1.label"}},
		{"block unknown key", `{"blocks":[{"label":"human","value":"x"}]}`, []string{"memory.blocks.0.value"}},
		{"limit bounds", `{"blocks":[{"label":"a","limit":0},{"label":"b","limit":10001},{"label":"c","limit":1.5},{"label":"d","limit":10000}]}`,
			[]string{"memory.blocks.0.limit", "memory.blocks.1.limit", "memory.blocks.2.limit"}},
		{"description long", `{"blocks":[{"label":"a","description":"` + strings.Repeat("é", MaxBlockDescriptionLength+1) + `"}]}`, []string{"memory.blocks.0.description"}},
		{"description at limit", `{"blocks":[{"label":"a","description":"` + strings.Repeat("é", MaxBlockDescriptionLength) + `"}]}`, nil},
		{"too many blocks", `{"blocks":` + blocks(MaxMemoryBlocks+1) + `}`, []string{"memory.blocks"}},
		{"as many blocks as allowed", `{"blocks":` + blocks(MaxMemoryBlocks) + `}`, nil},
		{"top_k bounds", `{"recall":{"top_k":21}}`, []string{"memory.recall.top_k"}},
		{"top_k zero", `{"recall":{"top_k":0}}`, nil},
		{"top_k negative", `{"recall":{"top_k":-1}}`, []string{"memory.recall.top_k"}},
		{"recall unknown key", `{"recall":{"top_k":3,"min_score":1}}`, []string{"memory.recall.min_score"}},
		{"extract not object", `{"extract":true}`, []string{"memory.extract"}},
		{"extract fields", `{"extract":{"enabled":1,"llm_config":{"provider":"","model":3,"temperature":1},"instructions":5,"x":1}}`,
			[]string{"memory.extract.x", "memory.extract.enabled", "memory.extract.llm_config.temperature", "memory.extract.llm_config.provider",
				"memory.extract.llm_config.model", "memory.extract.instructions"}},
		{"instructions long", `{"extract":{"instructions":"` + strings.Repeat("a", MaxExtractInstructionsLength+1) + `"}}`, []string{"memory.extract.instructions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fields(ValidateAgentConfig(parse(t, `{"name":"a","memory":`+tt.memory+`}`), ""))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("flat: fields (-want +got):\n%s", diff)
			}
			var want []string
			for _, f := range tt.want {
				want = append(want, "system_config."+f)
			}
			graph := `{"name":"g","agents":[{"name":"a"}],"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"__end__"}],"memory":` + tt.memory + `}`
			got = fields(ValidateAgentConfig(parse(t, graph), "system_config"))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("graph: fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMemoryConfigOf: what a valid memory object means, defaults included.
func TestMemoryConfigOf(t *testing.T) {
	tests := []struct {
		name, memory string
		want         MemoryConfig
	}{
		{"absent", ``, MemoryConfig{}},
		{"null", `,"memory":null`, MemoryConfig{}},
		{"empty object turns it on", `,"memory":{}`, MemoryConfig{Enabled: true, RecallTopK: DefaultRecallTopK}},
		{"off", `,"memory":{"enabled":false,"blocks":[{"label":"a"}]}`, MemoryConfig{RecallTopK: DefaultRecallTopK,
			Blocks: []MemoryBlockSpec{{Label: "a", Limit: DefaultBlockLimit}}}},
		{"full", `,"memory":{"enabled":true,"shared":true,"blocks":[{"label":"human","description":"who","limit":300},{"label":"prefs"}],"recall":{"top_k":0},"extract":{"llm_config":{"provider":"local","model":"m"},"instructions":"only names"}}`,
			MemoryConfig{Enabled: true, Shared: true, RecallTopK: 0,
				Blocks:  []MemoryBlockSpec{{Label: "human", Description: "who", Limit: 300}, {Label: "prefs", Limit: DefaultBlockLimit}},
				Extract: MemoryExtract{Enabled: true, Provider: "local", Model: "m", Instructions: "only names"}}},
		{"extract off", `,"memory":{"extract":{"enabled":false}}`, MemoryConfig{Enabled: true, RecallTopK: DefaultRecallTopK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, errs := ParseConfig(parse(t, `{"name":"a"`+tt.memory+`}`), nil, "")
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tt.want, g.Memory); diff != "" {
				t.Errorf("Memory (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMemoryToolsNotInTools: a configuration cannot name a memory tool itself, as a built-in
// or as a function; with memory on, an MCP server's tool of that name collides with it.
func TestMemoryToolsNotInTools(t *testing.T) {
	for _, tools := range []string{`["memory_save"]`, `["calculator","memory_replace"]`, `[{"type":"function","name":"memory_search"}]`} {
		_, errs := parseTools(t, tools)
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Field, "system_config.tools.") || !strings.Contains(errs[0].Message, "memory tool") {
			t.Errorf("%s: %v, want one memory tool error", tools, errs)
		}
	}
	srv := &MCPServer{Name: "docs", Tools: []MCPTool{{Name: "memory_append"}}}
	servers := func(string) (*MCPServer, bool) { return srv, true }
	for _, tt := range []struct {
		memory string
		errs   int
	}{{`{"enabled":true}`, 1}, {`{"enabled":false}`, 0}, {`null`, 0}} {
		g, errs := ParseConfig(parse(t, `{"name":"a","agent_type":"react_agent","tools":[{"type":"mcp","server":"docs"}],"memory":`+tt.memory+`}`), nil, "")
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if got := g.CheckTools(servers); len(got) != tt.errs || tt.errs == 1 && got[0].Field != "tools.0" {
			t.Errorf("memory %s: CheckTools = %v, want %d errors", tt.memory, got, tt.errs)
		}
	}
}

// TestMemoryScopesNeeded: memory on needs memory:read, after the nodes' scopes; memory off or
// absent needs nothing.
func TestMemoryScopesNeeded(t *testing.T) {
	for _, tt := range []struct {
		cfg  string
		want []string
	}{
		{`{"name":"a","memory":{"enabled":true}}`, []string{ScopeMemoryRead}},
		{`{"name":"a","memory":{}}`, []string{ScopeMemoryRead}},
		{`{"name":"a","memory":{"enabled":false}}`, nil},
		{`{"name":"a"}`, nil},
		{`{"name":"a","knowledge_bases":[{"name":"k","knowledge_base_id":"x"}],"memory":{"enabled":true}}`, []string{ScopeKnowledgeRead, ScopeMemoryRead}},
	} {
		g, errs := ParseConfig(parse(t, tt.cfg), nil, "")
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if got := g.ScopesNeeded(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ScopesNeeded = %v, want %v", tt.cfg, got, tt.want)
		}
		if len(tt.want) == 0 {
			continue
		}
		if err := g.Permit(Principal{Scopes: []string{ScopeSessionsWrite, ScopeKnowledgeRead}}); KindOf(err) != KindPermission {
			t.Errorf("%s: Permit without memory:read = %v, want permission", tt.cfg, err)
		}
		if err := g.Permit(Principal{Scopes: []string{ScopeSessionsWrite, ScopeKnowledgeRead, ScopeMemoryRead}}); err != nil {
			t.Errorf("%s: Permit with memory:read = %v", tt.cfg, err)
		}
	}
}
