package vectors_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/shared/vectors"
)

func TestIndexName(t *testing.T) {
	s := newStand(t)
	st, err := vectors.New(s.client, vectors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model string
		dims  int
		want  string
	}{
		{"local-use-lite", 512, "agentorch-kb-local-use-lite-512-v2"},
		{"amazon.titan-embed-text-v2:0", 1024, "agentorch-kb-amazon-titan-embed-text-v2-0-1024-v2"},
		{"Cohere.Embed-Multilingual-V3", 1024, "agentorch-kb-cohere-embed-multilingual-v3-1024-v2"},
		{"text-embedding-3-small", 1536, "agentorch-kb-text-embedding-3-small-1536-v2"},
		{"__weird//model**", 8, "agentorch-kb-weird-model-8-v2"},
		{"", 8, "agentorch-kb-model-8-v2"},
	} {
		if got := st.IndexName(tc.model, tc.dims); got != tc.want {
			t.Errorf("IndexName(%q, %d) = %q, want %q", tc.model, tc.dims, got, tc.want)
		}
	}

	// Every name, even of an absurd model id, is one OpenSearch accepts: the stand-in enforces
	// OpenSearch's index name rules (lowercase, no special characters, at most 255 bytes).
	long := strings.Repeat("Very.Long/Model ", 40)
	name, err := st.EnsureIndex(ctx(t), long, 4)
	if err != nil {
		t.Fatalf("EnsureIndex of a long model name: %v", err)
	}
	if len(name) > 255 || !strings.HasSuffix(name, "-4-v2") || !regexp.MustCompile(`^[a-z0-9-]+$`).MatchString(name) {
		t.Errorf("long model's index name %q (%d bytes)", name, len(name))
	}
	if other := st.IndexName(long+"x", 4); other == name {
		t.Errorf("two long model names share index %q", name)
	}
}

func TestNewRejectsBadPrefix(t *testing.T) {
	s := newStand(t)
	for _, p := range []string{"Upper", "-dash", "has space", "a_b", "trailing-", "star*"} {
		if _, err := vectors.New(s.client, vectors.Options{Prefix: p}); err == nil {
			t.Errorf("prefix %q accepted", p)
		}
	}
	if _, err := vectors.New(nil, vectors.Options{}); err == nil {
		t.Error("nil client accepted")
	}
}

func TestEnsureIndexMapping(t *testing.T) {
	s := newStand(t)
	name := s.ensure(t, "local-use-lite", 512)
	if name != "test-kb-local-use-lite-512-v2" {
		t.Fatalf("index %q", name)
	}
	got, err := s.client.Indices.Get(ctx(t), opensearchapi.IndicesGetReq{Indices: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	var mapping struct {
		Dynamic    string                     `json:"dynamic"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal((*got.IndicesGetRespData)[name].Mappings, &mapping); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for f, raw := range mapping.Properties {
		var p struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("mapping of %s: %v", f, err)
		}
		types[f] = p.Type
	}
	want := map[string]string{"kb_id": "keyword", "company": "keyword", "file_id": "keyword", "file_name": "keyword",
		"chunk_index": "integer", "text": "text", "tags": "keyword", "content_hash": "keyword", "embedding": "knn_vector"}
	if d := cmp.Diff(want, types); d != "" || mapping.Dynamic != "strict" {
		t.Errorf("field types (-want +got):\n%s dynamic %q", d, mapping.Dynamic)
	}
	var text struct {
		Analyzer string `json:"analyzer"`
		Fields   map[string]struct {
			Type, Analyzer string
		} `json:"fields"`
	}
	if err := json.Unmarshal(mapping.Properties["text"], &text); err != nil {
		t.Fatal(err)
	}
	if en := text.Fields["en"]; text.Analyzer != "standard" || en.Type != "text" || en.Analyzer != "english" || len(text.Fields) != 1 {
		t.Errorf("text = %+v, want standard with the english sub-field en", text)
	}
	if s.store.Legacy(name) || !s.store.Legacy("agentorch-kb-local-use-lite-512") || s.store.Legacy("") {
		t.Error("Legacy: want today's names current, names without the schema suffix legacy")
	}
	var emb struct {
		Dimension int `json:"dimension"`
		Method    struct {
			Name, Engine string
			Space        string `json:"space_type"`
		} `json:"method"`
	}
	if err := json.Unmarshal(mapping.Properties["embedding"], &emb); err != nil {
		t.Fatal(err)
	}
	if emb.Dimension != 512 || emb.Method.Name != "hnsw" || emb.Method.Engine != "faiss" || emb.Method.Space != "cosinesimil" {
		t.Errorf("embedding = %+v", emb)
	}
	var settings struct {
		Index struct {
			KNN      string `json:"knn"`
			Shards   string `json:"number_of_shards"`
			Replicas string `json:"number_of_replicas"`
		} `json:"index"`
	}
	if err := json.Unmarshal((*got.IndicesGetRespData)[name].Settings, &settings); err != nil {
		t.Fatal(err)
	}
	if settings.Index.KNN != "true" || settings.Index.Shards != "1" || settings.Index.Replicas != "0" {
		t.Errorf("settings = %+v", settings.Index)
	}
}

func TestEnsureIndexIdempotent(t *testing.T) {
	s := newStand(t)
	s.count.take()
	s.ensure(t, "m", 4)
	if got := s.count.take(); !cmp.Equal(got, []string{"PUT /test-kb-m-4-v2"}) {
		t.Errorf("first EnsureIndex sent %v, want one PUT", got)
	}
	s.ensure(t, "m", 4)
	if got := s.count.take(); len(got) != 0 {
		t.Errorf("second EnsureIndex in the same process sent %v, want nothing", got)
	}

	// Many processes racing to create the same index: every one succeeds.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.newStore(t).EnsureIndex(ctx(t), "raced", 4)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}

	for _, dims := range []int{0, -1, vectors.MaxDimensions + 1} {
		if _, err := s.store.EnsureIndex(ctx(t), "m", dims); err == nil {
			t.Errorf("dimension %d accepted", dims)
		}
	}
}

func TestEnsurePipelines(t *testing.T) {
	s := newStand(t)
	s.count.take()
	if err := s.store.EnsurePipelines(ctx(t)); err != nil {
		t.Fatal(err)
	}
	want := []string{"PUT /_search/pipeline/" + s.store.RRFPipeline()}
	if got := s.count.take(); !cmp.Equal(got, want) {
		t.Errorf("EnsurePipelines sent %v, want %v", got, want)
	}
	if err := s.store.EnsurePipelines(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got := s.count.take(); len(got) != 0 {
		t.Errorf("second EnsurePipelines sent %v", got)
	}
	// Another process puts them again without harm.
	if err := s.newStore(t).EnsurePipelines(ctx(t)); err != nil {
		t.Fatal(err)
	}
}
