package domain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseRerank: rerank true, false or {model, candidates}, and Atthene's enable_rerank with
// rerank_model, read into the option (nil: off) or refused field by field.
func TestParseRerank(t *testing.T) {
	tests := []struct {
		name, body string
		want       *Rerank
		wantFields []string
	}{
		{"absent", `{}`, nil, nil},
		{"false", `{"rerank":false}`, nil, nil},
		{"null", `{"rerank":null}`, nil, nil},
		{"true", `{"rerank":true}`, &Rerank{Field: "rerank", ModelField: "rerank.model"}, nil},
		{"object", `{"rerank":{"model":"cohere.rerank-v3-5:0","candidates":40}}`,
			&Rerank{Model: "cohere.rerank-v3-5:0", Candidates: 40, Field: "rerank", ModelField: "rerank.model"}, nil},
		{"empty object", `{"rerank":{}}`, &Rerank{Field: "rerank", ModelField: "rerank.model"}, nil},
		{"atthene", `{"enable_rerank":true,"rerank_model":"amazon.rerank-v1:0"}`,
			&Rerank{Model: "amazon.rerank-v1:0", Field: "enable_rerank", ModelField: "rerank_model"}, nil},
		{"atthene off", `{"enable_rerank":false,"rerank_model":"amazon.rerank-v1:0"}`, nil, nil},
		{"model alone does not turn it on", `{"rerank_model":"amazon.rerank-v1:0"}`, nil, nil},
		{"wrong type", `{"rerank":"yes"}`, nil, []string{"rerank"}},
		{"both forms", `{"rerank":true,"enable_rerank":true,"rerank_model":"m"}`, nil, []string{"enable_rerank", "rerank_model"}},
		{"bad object", `{"rerank":{"model":"","candidates":101,"top_n":3}}`, nil, []string{"rerank.top_n", "rerank.model", "rerank.candidates"}},
		{"fraction", `{"rerank":{"candidates":2.5}}`, nil, []string{"rerank.candidates"}},
		{"zero", `{"rerank":{"candidates":0}}`, nil, []string{"rerank.candidates"}},
		{"model not a string", `{"rerank":{"model":5}}`, nil, []string{"rerank.model"}},
		{"atthene wrong types", `{"enable_rerank":"true","rerank_model":1}`, nil, []string{"enable_rerank", "rerank_model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := ParseRerank(parse(t, tt.body), "")
			if diff := cmp.Diff(tt.wantFields, fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s (%v)", diff, errs)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("option (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRetrievalConfigRerank: an agent's retrieval_config takes the rerank option (either form)
// and names its errors under the entry's path.
func TestRetrievalConfigRerank(t *testing.T) {
	cfg := parse(t, `{"name":"a","knowledge_bases":[
		{"name":"k","knowledge_base_id":"x","retrieval_config":{"top_k":3,"rerank":{"candidates":30}}},
		{"name":"j","knowledge_base_id":"y","config":{"enable_rerank":true}},
		{"name":"i","knowledge_base_id":"z","config":{"rerank":{"candidates":"30"}}}]}`)
	if got := fields(ValidateAgentConfig(cfg, "")); !cmp.Equal(got, []string{"knowledge_bases.2.config.rerank.candidates"}) {
		t.Fatalf("errors %v", got)
	}
	m := cfg["knowledge_bases"].([]any)
	r := parseKnowledgeBase(m[0].(map[string]any), "knowledge_bases.0").Retrieval.Rerank
	if r == nil || r.Candidates != 30 || r.Model != "" {
		t.Errorf("entry 0: %+v", r)
	}
	if r := parseKnowledgeBase(m[1].(map[string]any), "knowledge_bases.1").Retrieval.Rerank; r == nil || r.Field != "enable_rerank" {
		t.Errorf("entry 1: %+v", r)
	}
}

// TestRerankCandidates: 4·top_k between 20 and 100 by default, never fewer than top_k.
func TestRerankCandidates(t *testing.T) {
	for _, tt := range []struct{ candidates, topK, want int }{
		{0, 1, 20}, {0, 5, 20}, {0, 10, 40}, {0, 25, 100}, {0, 50, 100}, {10, 5, 10}, {3, 8, 8}, {100, 50, 100},
	} {
		if got := (&Rerank{Candidates: tt.candidates}).RerankCandidates(tt.topK); got != tt.want {
			t.Errorf("candidates %d top_k %d: %d, want %d", tt.candidates, tt.topK, got, tt.want)
		}
	}
}

// TestCheckRerankModel: no reranker, an unknown model, the default and a listed one.
func TestCheckRerankModel(t *testing.T) {
	models := []string{"cohere.rerank-v3-5:0", "amazon.rerank-v1:0"}
	r := &Rerank{Field: "rerank", ModelField: "rerank.model"}
	if e := CheckRerankModel(r, nil); e == nil || e.Field != "rerank" || e.Message != RerankNotConfigured {
		t.Errorf("no reranker: %+v", e)
	}
	if e := CheckRerankModel(r, models); e != nil {
		t.Errorf("default: %+v", e)
	}
	if e := CheckRerankModel(&Rerank{Model: "amazon.rerank-v1:0"}, models); e != nil {
		t.Errorf("listed: %+v", e)
	}
	if e := CheckRerankModel(&Rerank{Model: "bge", ModelField: "rerank_model"}, models); e == nil || e.Field != "rerank_model" {
		t.Errorf("unknown: %+v", e)
	}
	if e := CheckRerankModel(nil, nil); e != nil {
		t.Errorf("off: %+v", e)
	}
}
