package domain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateKnowledgeBases(t *testing.T) {
	tests := []struct {
		name, kbs string
		want      []string
	}{
		{"full entry", `[{"name":"k","knowledge_base_type":"opensearch","knowledge_base_id":"x","enabled":false,"description":"d",
			"retrieval_config":{"top_k":50,"score_threshold":0,"strategy":"hybrid_rrf","filter":{"file_ids":["f"],"tags":["t"]}}}]`, nil},
		{"aliases", `[{"name":"k","id":"x","config":{"top_k":1,"strategy":"bm25"}}]`, nil},
		{"not an array", `{"name":"k"}`, []string{"knowledge_bases"}},
		{"entry not an object", `["k"]`, []string{"knowledge_bases.0"}},
		{"missing id and name", `[{}]`, []string{"knowledge_bases.0.name", "knowledge_bases.0.knowledge_base_id"}},
		{"id and alias differ", `[{"name":"k","knowledge_base_id":"x","id":"y"}]`, []string{"knowledge_bases.0.id"}},
		{"id not a string", `[{"name":"k","knowledge_base_id":{}}]`, []string{"knowledge_bases.0.knowledge_base_id"}},
		{"unknown field", `[{"name":"k","knowledge_base_id":"x","knowledge_base_ids":["y"]}]`, []string{"knowledge_bases.0.knowledge_base_ids"}},
		{"duplicates", `[{"name":"k","knowledge_base_id":"x"},{"name":"k","knowledge_base_id":"x"}]`,
			[]string{"knowledge_bases.1.name", "knowledge_bases.1.knowledge_base_id"}},
		{"enabled not bool", `[{"name":"k","knowledge_base_id":"x","enabled":1}]`, []string{"knowledge_bases.0.enabled"}},
		{"retrieval not object", `[{"name":"k","knowledge_base_id":"x","retrieval_config":[]}]`, []string{"knowledge_bases.0.retrieval_config"}},
		{"both retrieval and config", `[{"name":"k","knowledge_base_id":"x","retrieval_config":{},"config":{}}]`, []string{"knowledge_bases.0.config"}},
		{"bad retrieval values", `[{"name":"k","knowledge_base_id":"x","retrieval_config":{"top_k":2.5,"score_threshold":-0.1,"strategy":"fuzzy","rerank":3}}]`,
			[]string{"knowledge_bases.0.retrieval_config.rerank", "knowledge_bases.0.retrieval_config.top_k",
				"knowledge_bases.0.retrieval_config.score_threshold", "knowledge_bases.0.retrieval_config.strategy"}},
		{"top_k bounds", `[{"name":"k","knowledge_base_id":"x","config":{"top_k":51}},{"name":"j","knowledge_base_id":"y","config":{"top_k":0}}]`,
			[]string{"knowledge_bases.0.config.top_k", "knowledge_bases.1.config.top_k"}},
		{"bad filter", `[{"name":"k","knowledge_base_id":"x","retrieval_config":{"filter":{"file_ids":"f","tags":[1],"owner":"x"}}}]`,
			[]string{"knowledge_bases.0.retrieval_config.filter.owner", "knowledge_bases.0.retrieval_config.filter.file_ids",
				"knowledge_bases.0.retrieval_config.filter.tags.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fields(ValidateAgentConfig(parse(t, `{"name":"a","knowledge_bases":`+tt.kbs+`}`), ""))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
	many := strings.Repeat(`{"name":"k","knowledge_base_id":"x"},`, MaxKnowledgeBases+1)
	errs := ValidateAgentConfig(parse(t, `{"name":"a","knowledge_bases":[`+strings.TrimSuffix(many, ",")+`]}`), "")
	if len(errs) == 0 || errs[0].Field != "knowledge_bases" {
		t.Errorf("too many entries: %v", errs)
	}
}

func TestParseKnowledgeBases(t *testing.T) {
	cfg := parse(t, `{"name":"g","agents":[{"name":"a","knowledge_bases":[{"name":"k","id":"x","config":{"top_k":3,"score_threshold":0.5,"strategy":"bm25","filter":{"tags":["t","t"]}}}]},
		{"name":"b","knowledge_bases":[{"name":"j","knowledge_base_id":"y","enabled":false}]}],
		"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"__end__"}]}`)
	g, errs := ParseConfig(cfg, nil, "system_config")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	half := 0.5
	want := []KnowledgeBaseRef{
		{Name: "k", Type: VectorEngine, ID: "x", Enabled: true, Path: "system_config.agents.0.knowledge_bases.0",
			Retrieval: RetrievalConfig{TopK: 3, ScoreThreshold: &half, Strategy: StrategyBM25, Tags: []string{"t"}}},
		{Name: "j", Type: VectorEngine, ID: "y", Enabled: false, Path: "system_config.agents.1.knowledge_bases.0"},
	}
	if diff := cmp.Diff(want, g.KnowledgeBaseRefs()); diff != "" {
		t.Errorf("refs (-want +got):\n%s", diff)
	}
	owners := map[string]string{"x": "acme", "y": "globex"}
	got := fields(CheckKnowledgeBaseAccess(g.KnowledgeBaseRefs(), owners, "acme", false))
	if diff := cmp.Diff([]string{"system_config.agents.1.knowledge_bases.0.knowledge_base_id"}, got); diff != "" {
		t.Errorf("foreign (-want +got):\n%s", diff)
	}
	delete(owners, "y")
	if got := CheckKnowledgeBaseAccess(g.KnowledgeBaseRefs(), owners, "acme", true); len(got) != 0 {
		t.Errorf("a deleted knowledge base with allowMissing: %v", got)
	}
	if got := CheckKnowledgeBaseAccess(g.KnowledgeBaseRefs(), owners, "acme", false); len(got) != 1 {
		t.Errorf("a deleted knowledge base: %v", got)
	}
}
