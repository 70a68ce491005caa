package domain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parse(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func fields(errs []FieldError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func TestValidateAgentConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  string
		want []string
	}{
		{"minimal", `{"name":"a"}`, nil},
		{"full flat", `{"name":"a","agent_type":"react_agent","system_prompt":"p","llm_config":{"model":"m","temperature":0.5,"max_tokens":100},"tools":["calculator"],"knowledge_bases":[{"name":"k","knowledge_base_type":"opensearch","knowledge_base_id":"x"}]}`, nil},
		{"missing name", `{"agent_type":"llm_agent"}`, []string{"name"}},
		{"empty name", `{"name":"  "}`, []string{"name"}},
		{"name not string", `{"name":5}`, []string{"name"}},
		{"unknown type", `{"name":"a","agent_type":"robot"}`, []string{"agent_type"}},
		{"temperature too high", `{"name":"a","llm_config":{"temperature":2.5}}`, []string{"llm_config.temperature"}},
		{"temperature string", `{"name":"a","llm_config":{"temperature":"hot"}}`, []string{"llm_config.temperature"}},
		{"max_tokens zero", `{"name":"a","llm_config":{"max_tokens":0}}`, []string{"llm_config.max_tokens"}},
		{"max_tokens fraction", `{"name":"a","llm_config":{"max_tokens":1.5}}`, []string{"llm_config.max_tokens"}},
		{"llm_config not object", `{"name":"a","llm_config":[]}`, []string{"llm_config"}},
		{"tools not array", `{"name":"a","tools":"calculator"}`, []string{"tools"}},
		{"tool not string", `{"name":"a","tools":["ok",3]}`, []string{"tools.1"}},
		{"kb wrong engine", `{"name":"a","knowledge_bases":[{"name":"k","knowledge_base_type":"pinecone","knowledge_base_id":"x"}]}`, []string{"knowledge_bases.0.knowledge_base_type"}},
		{"several at once", `{"agent_type":"x","llm_config":{"temperature":-1,"max_tokens":-3}}`, []string{"name", "agent_type", "llm_config.temperature", "llm_config.max_tokens"}},
		{"graph ok", `{"name":"g","agents":[{"name":"a"},{"name":"b"}],"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"__end__"}],"entry_point":"a"}`, nil},
		{"graph bad", `{"name":"g","agents":[{"name":"a"},{"name":"a","agent_type":"x"}],"edges":[{"from":"a","to":"zz"},{"to":"a"}],"entry_point":"q"}`,
			[]string{"agents.1.agent_type", "agents.1.name", "entry_point", "edges.0.to", "edges.1.from"}},
		{"flags wrong type", `{"name":"a","save_messages":"yes"}`, []string{"save_messages"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fields(ValidateAgentConfig(parse(t, tt.cfg), ""))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatePrefix(t *testing.T) {
	got := fields(ValidateAgentConfig(parse(t, `{"llm_config":{"temperature":9}}`), "system_config"))
	want := []string{"system_config.name", "system_config.llm_config.temperature"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
