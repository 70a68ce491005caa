package api_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
)

var updateDecode = flag.Bool("update-decode", false, "rewrite testdata/decode_golden.json")

// validating is the knowledge feature's validation behind the real handlers: the real
// library and knowledge services over no stores, so that a body the edge and the feature
// accept reaches the first store call, which answers errValidated in its place.
type validating struct {
	fakeKnowledge
	lib *library.Service
	kb  *knowledge.Service
}

// goldenEmbedders take every embedding_config (resolving it is the embedders' own, tested in
// embeddings) and build an embedder that reads 512 tokens, so that a knowledge base's body is
// checked to its end, chunking included, by the real splitter.
type goldenEmbedders struct{}

func (goldenEmbedders) Resolve(cfg domain.Embedding) (domain.Embedding, []domain.FieldError) {
	return cfg, nil
}

func (goldenEmbedders) Embedder(context.Context, domain.Embedding) (knowledge.Embedder, error) {
	return goldenEmbedder{}, nil
}

type goldenEmbedder struct{}

func (goldenEmbedder) Embed(context.Context, []string) ([][]float32, error) { return nil, errValidated }
func (goldenEmbedder) Dimensions() int                                      { return 8 }
func (goldenEmbedder) MaxTokens() int                                       { return 512 }
func (goldenEmbedder) Tokens(text string) int                               { return len(text) }
func (goldenEmbedder) Name() string                                         { return "golden" }

// goldenSplitter is the splitter the knowledge functions build (app/kb).
func goldenSplitter(c domain.Chunking) (knowledge.Splitter, error) {
	s, err := chunk.New(c)
	if err != nil {
		return nil, err
	}
	return s, nil
}

var errValidated = domain.Errorf(domain.KindConflict, "valid: the feature went on to its stores")

// guard turns the nil store's panic into errValidated.
func guard(err *error) {
	if recover() != nil {
		*err = errValidated
	}
}

func (v *validating) BulkFiles(ctx context.Context, p domain.Principal, in library.FileBulkInput) (_ []library.BulkItem, err error) {
	defer guard(&err)
	return v.lib.BulkFiles(ctx, p, in)
}

func (v *validating) CreateCollection(ctx context.Context, p domain.Principal, in library.CollectionInput) (_ *library.Collection, err error) {
	defer guard(&err)
	return v.lib.CreateCollection(ctx, p, in)
}

func (v *validating) AddFiles(ctx context.Context, p domain.Principal, id string, in library.FileIDsInput) (_ []library.BulkItem, err error) {
	defer guard(&err)
	return v.lib.AddFiles(ctx, p, id, in)
}

func (v *validating) BulkCollection(ctx context.Context, p domain.Principal, id string, in library.CollectionBulkInput) (_ []library.BulkItem, err error) {
	defer guard(&err)
	return v.lib.BulkCollection(ctx, p, id, in)
}

func (v *validating) CreateKB(ctx context.Context, p domain.Principal, in knowledge.KBInput) (_ *knowledge.KB, err error) {
	defer guard(&err)
	return v.kb.CreateKB(ctx, p, in)
}

func (v *validating) Search(ctx context.Context, p domain.Principal, id string, in knowledge.SearchInput) (_ []domain.Hit, err error) {
	defer guard(&err)
	return v.kb.Search(ctx, p, id, in)
}

// decodeCases are bodies of the library and knowledge groups with what is wrong in their
// shape and values, alone and together, as the conformance suite sends them.
var decodeCases = []struct{ name, path, body string }{
	// POST /collections/
	{"collection ok", "/api/v1/collections/", `{"name":"Support","description":"d"}`},
	{"collection no name", "/api/v1/collections/", `{"description":"x"}`},
	{"collection null name", "/api/v1/collections/", `{"name":null,"description":null}`},
	{"collection name a number", "/api/v1/collections/", `{"name":5}`},
	{"collection name of spaces", "/api/v1/collections/", `{"name":" \u200b "}`},
	{"collection name too long", "/api/v1/collections/", `{"name":"` + strings.Repeat("n", domain.MaxNameLength+1) + `"}`},
	{"collection description an array", "/api/v1/collections/", `{"name":"x","description":["a"]}`},
	{"collection description too long", "/api/v1/collections/", `{"name":"x","description":"` + strings.Repeat("d", library.MaxDescriptionLength+1) + `"}`},
	{"collection unknown fields", "/api/v1/collections/", `{"name":"x","owner":"mallory","Name":"y"}`},
	{"collection all wrong", "/api/v1/collections/", `{"zz":1,"name":true,"description":"` + strings.Repeat("d", library.MaxDescriptionLength+1) + `"}`},
	{"collection wrong with value errors", "/api/v1/collections/", `{"name":"","description":5}`},
	// POST /collections/{id}/files/
	{"add files ok", "/api/v1/collections/c9/files/", `{"file_ids":["a"]}`},
	{"add files a string", "/api/v1/collections/c9/files/", `{"file_ids":"a"}`},
	{"add files of numbers", "/api/v1/collections/c9/files/", `{"file_ids":["a",1,true]}`},
	{"add files missing", "/api/v1/collections/c9/files/", `{}`},
	{"add files null", "/api/v1/collections/c9/files/", `{"file_ids":null}`},
	{"add files empty", "/api/v1/collections/c9/files/", `{"file_ids":[]}`},
	{"add files too many", "/api/v1/collections/c9/files/", `{"file_ids":[` + strings.Repeat(`"a",`, library.MaxRequestIDs) + `"a"]}`},
	{"add files too many with a number", "/api/v1/collections/c9/files/", `{"file_ids":[` + strings.Repeat(`"a",`, library.MaxRequestIDs) + `5]}`},
	{"add files null item", "/api/v1/collections/c9/files/", `{"file_ids":["a",null,5]}`},
	{"add files unknown field", "/api/v1/collections/c9/files/", `{"file_ids":["a"],"collection_id":"c9"}`},
	{"add files unknown and wrong", "/api/v1/collections/c9/files/", `{"file_ids":5,"zz":1,"aa":2}`},
	// POST /collections/{id}/bulk/
	{"collection bulk ok", "/api/v1/collections/c9/bulk/", `{"operation":"add_files","file_ids":["a"],"parameters":{}}`},
	{"collection bulk unknown operation", "/api/v1/collections/c9/bulk/", `{"operation":"purge","file_ids":["a"]}`},
	{"collection bulk no operation", "/api/v1/collections/c9/bulk/", `{"file_ids":["a"]}`},
	{"collection bulk operation a number", "/api/v1/collections/c9/bulk/", `{"operation":7,"file_ids":["a"]}`},
	{"collection bulk operation null", "/api/v1/collections/c9/bulk/", `{"operation":null,"file_ids":["a"]}`},
	{"collection bulk file_ids of numbers", "/api/v1/collections/c9/bulk/", `{"operation":"add_files","file_ids":[1,2]}`},
	{"collection bulk file_ids a string", "/api/v1/collections/c9/bulk/", `{"operation":"remove_files","file_ids":"all"}`},
	{"collection bulk parameters", "/api/v1/collections/c9/bulk/", `{"operation":"add_files","file_ids":["a"],"parameters":{"position":0,"b":1}}`},
	{"collection bulk parameters bad op", "/api/v1/collections/c9/bulk/", `{"operation":"x","file_ids":["a"],"parameters":{"position":0}}`},
	{"collection bulk parameters not an object", "/api/v1/collections/c9/bulk/", `{"operation":"add_files","file_ids":["a"],"parameters":[1]}`},
	{"collection bulk null item", "/api/v1/collections/c9/bulk/", `{"operation":"remove_files","file_ids":[null]}`},
	{"collection bulk unknown field", "/api/v1/collections/c9/bulk/", `{"operation":"add_files","file_ids":["a"],"company":"globex"}`},
	{"collection bulk everything wrong", "/api/v1/collections/c9/bulk/", `{"operation":1,"file_ids":[],"company":"g","parameters":"p"}`},
	// POST /files/bulk/
	{"file bulk ok", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a"]}`},
	{"file bulk unknown operation", "/api/v1/files/bulk/", `{"operation":"shred","file_ids":["a"]}`},
	{"file bulk no operation", "/api/v1/files/bulk/", `{"file_ids":["a"]}`},
	{"file bulk operation a number", "/api/v1/files/bulk/", `{"operation":1,"file_ids":["a"]}`},
	{"file bulk file_ids a string", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":"a"}`},
	{"file bulk file_ids of numbers", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a",1,2]}`},
	{"file bulk file_ids missing", "/api/v1/files/bulk/", `{"operation":"delete"}`},
	{"file bulk file_ids empty", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":[]}`},
	{"file bulk file_ids too many", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":[` + strings.Repeat(`"a",`, library.MaxRequestIDs) + `"a"]}`},
	{"file bulk parameters not an object", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a"],"parameters":"x"}`},
	{"file bulk parameters null", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a"],"parameters":null}`},
	{"file bulk delete with parameters", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a"],"parameters":{"force":true,"tags":5}}`},
	{"file bulk unknown field", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a"],"dry_run":true}`},
	{"file bulk update_tags ok", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a"],"parameters":{"tags":["x"]}}`},
	{"file bulk update_tags without tags", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a"]}`},
	{"file bulk update_tags null tags", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a"],"parameters":{"tags":null}}`},
	{"file bulk update_tags tags a string", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a"],"parameters":{"tags":"x"}}`},
	{"file bulk update_tags of numbers", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a"],"parameters":{"tags":["a",1,{}]}}`},
	{"file bulk update_tags too long", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a"],"parameters":{"tags":["` + strings.Repeat("t", 65) + `"]}}`},
	{"file bulk update_tags mode", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a"],"parameters":{"tags":["a"],"mode":"append","status":"x"}}`},
	{"file bulk change_status ok", "/api/v1/files/bulk/", `{"operation":"change_status","file_ids":["a"],"parameters":{"status":"archived"}}`},
	{"file bulk change_status to error", "/api/v1/files/bulk/", `{"operation":"change_status","file_ids":["a"],"parameters":{"status":"error"}}`},
	{"file bulk change_status a number", "/api/v1/files/bulk/", `{"operation":"change_status","file_ids":["a"],"parameters":{"status":5}}`},
	{"file bulk change_status without status", "/api/v1/files/bulk/", `{"operation":"change_status","file_ids":["a"]}`},
	{"file bulk change_status with tags", "/api/v1/files/bulk/", `{"operation":"change_status","file_ids":["a"],"parameters":{"status":"archived","tags":[]}}`},
	{"file bulk everything wrong", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":[1],"zz":0,"parameters":{"tags":[2],"q":1}}`},
	{"file bulk everything wrong, no operation", "/api/v1/files/bulk/", `{"file_ids":"x","zz":0,"parameters":7}`},
	{"file bulk bad operation drops parameters", "/api/v1/files/bulk/", `{"operation":"x","file_ids":["a"],"parameters":{"q":1,"tags":5}}`},
	{"file bulk change_status null tags", "/api/v1/files/bulk/", `{"operation":"change_status","file_ids":["a"],"parameters":{"status":"active","tags":null}}`},
	{"file bulk update_tags tags an object", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a"],"parameters":{"tags":{"a":1}}}`},
	{"file bulk update_tags empty", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":[],"parameters":{"tags":[]}}`},
	{"file bulk update_tags null item", "/api/v1/files/bulk/", `{"operation":"update_tags","file_ids":["a",null],"parameters":{"tags":["x",null]}}`},
	{"file bulk wrong case keys", "/api/v1/files/bulk/", `{"Operation":"delete","File_IDs":["a"],"parameters":{"Tags":[]}}`},
	{"file bulk parameters wrong and operation wrong", "/api/v1/files/bulk/", `{"operation":true,"file_ids":[true],"parameters":[]}`},
	{"file bulk too many with a number", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":[` + strings.Repeat(`"a",`, library.MaxRequestIDs) + `5]}`},
	// POST /knowledge-bases/{id}/search/
	{"search ok", "/api/v1/knowledge-bases/kb9/search/", `{"query":"refunds","top_k":3,"strategy":"bm25"}`},
	{"search no query", "/api/v1/knowledge-bases/kb9/search/", `{}`},
	{"search query a number", "/api/v1/knowledge-bases/kb9/search/", `{"query":5}`},
	{"search query empty", "/api/v1/knowledge-bases/kb9/search/", `{"query":"  "}`},
	{"search query too long", "/api/v1/knowledge-bases/kb9/search/", `{"query":"` + strings.Repeat("q", knowledge.MaxQueryLength+1) + `"}`},
	{"search options wrong", "/api/v1/knowledge-bases/kb9/search/", `{"query":1,"top_k":"3","score_threshold":2,"strategy":"x","filter":{"file_ids":[1],"tags":"t","zz":1},"yy":2}`},
	{"search top_k a fraction", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","top_k":1.5}`},
	{"search filter not an object", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","filter":[]}`},
	{"search strategy a number", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","strategy":5,"score_threshold":"x"}`},
	{"search nulls", "/api/v1/knowledge-bases/kb9/search/", `{"query":null,"top_k":null,"score_threshold":null,"strategy":null,"filter":null}`},
	{"search top_k forms", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","top_k":3.0,"score_threshold":1e0,"strategy":"hybrid","filter":{"file_ids":null,"tags":["a","a"]}}`},
	{"search top_k an exponent", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","top_k":1e3,"score_threshold":-0.5}`},
	{"search top_k huge", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","top_k":1e400,"score_threshold":1e400}`},
	{"search top_k wrong types", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","top_k":true,"score_threshold":{},"strategy":[],"filter":"f"}`},
	{"search top_k zero", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","top_k":0,"strategy":""}`},
	{"search rerank wrong", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","rerank":{"model":"","candidates":0,"top_n":1},"top_k":0}`},
	{"search rerank a string", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","rerank":"yes","enable_rerank":1}`},
	{"search rerank both forms", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","rerank":false,"enable_rerank":true,"rerank_model":5}`},
	{"search rerank without a reranker", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","rerank":{"candidates":30}}`},
	{"search Atthene rerank without a reranker", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","enable_rerank":true,"rerank_model":"cohere.rerank-v3-5:0"}`},
	{"search filter values", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","filter":{"file_ids":["", " ", 5, null],"tags":` + `[` + strings.Repeat(`"t",`, knowledge.MaxFilterValues) + `"t"]}}`},
	{"search filter lists wrong", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","filter":{"file_ids":{},"tags":7,"Tags":1,"a":2}}`},
	{"search unknown keys", "/api/v1/knowledge-bases/kb9/search/", `{"Query":"q","extra":1,"query":["q"]}`},
	{"search query a long number", "/api/v1/knowledge-bases/kb9/search/", `{"query":{"a":1},"top_k":"x"}`},
	// POST /knowledge-bases/ (errors found before any store call)
	{"kb shape", "/api/v1/knowledge-bases/", `{"name":5,"description":[],"processing_engine":"x","selected_collections":"c","selected_datasources":[1,""],"zz":1,"save_as_collection":true,"new_collection_name":3,"llm_config":"m","embedding_config":{"provider":1,"dimensions":1.5,"q":1},"chunking_strategy":{"chunk_size":"5","recursive_separators":[1],"split_by":3,"x":1}}`},
	{"kb alias", "/api/v1/knowledge-bases/", `{"name":"k","selected_collections":["a"],"collection_ids":["b"],"processing_engine":5,"embedding_config":"e","chunking_strategy":7}`},
	{"kb empty", "/api/v1/knowledge-bases/", `{}`},
	{"kb nulls", "/api/v1/knowledge-bases/", `{"name":null,"description":null,"processing_engine":null,"selected_collections":null,"collection_ids":null,"selected_datasources":null,"save_as_collection":null,"new_collection_name":null,"new_collection_description":null,"llm_config":null,"embedding_config":null,"chunking_strategy":null}`},
	{"kb values", "/api/v1/knowledge-bases/", `{"name":" ","description":"` + strings.Repeat("d", knowledge.MaxKBDescriptionLength+1) + `","processing_engine":"opensearch","collection_ids":[""," ",true,"a","a"],"save_as_collection":false,"new_collection_name":"n","new_collection_description":5,"llm_config":{}}`},
	{"kb contextual_headers a string", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":["a"],"chunking_strategy":{"contextual_headers":"yes","chunk_size":100}}`},
	{"kb contextual_headers null", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":["a"],"chunking_strategy":{"contextual_headers":null,"chunk_size":1}}`},
	{"kb save_as_collection a string", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":["a"],"save_as_collection":"yes","llm_config":[]}`},
	{"kb name too long", "/api/v1/knowledge-bases/", `{"name":"` + strings.Repeat("n", domain.MaxNameLength+1) + `","selected_datasources":[]}`},
	{"kb datasources too many", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":[` + strings.Repeat(`"a",`, knowledge.MaxSelectedDatasources) + `"a"]}`},
	{"kb many errors", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":[` + strings.Repeat(`1,`, 30) + `1]}`},
	{"kb embedding and chunking", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":[5],"embedding_config":{"provider":" ","model":[],"dimensions":"7"},"chunking_strategy":{"strategy":null,"chunk_size":1e10,"chunk_overlap":2.5,"split_by":"","recursive_separators":"x"}}`},
	{"kb chunking values", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":[5],"chunking_strategy":{"chunk_size":"` + strings.Repeat("9", 60) + `","chunk_overlap":true,"recursive_separators":[null,"a",{}],"Strategy":1}}`},
	{"kb embedding a list", "/api/v1/knowledge-bases/", `{"name":"k","selected_collections":[],"embedding_config":[1],"chunking_strategy":null,"selected_datasources":"x"}`},
	{"search long unknown key", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","` + strings.Repeat("k", 70) + `":1,"filter":{"` + strings.Repeat("f", 70) + `":1}}`},
	{"kb long unknown key", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":["a"],"` + strings.Repeat("k", 70) + `":1,"embedding_config":{"` + strings.Repeat("e", 70) + `":1},"chunking_strategy":{"` + strings.Repeat("c", 70) + `":1}}`},
	{"file bulk long unknown key", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a"],"` + strings.Repeat("k", 70) + `":1,"parameters":{"` + strings.Repeat("p", 70) + `":1}}`},
	{"collection field names of Go", "/api/v1/collections/", `{"name":"x","Shape":{},"Unknown":[],"Wrong":1,"shape":{}}`},
	{"add files field names of Go", "/api/v1/collections/c9/files/", `{"file_ids":["a"],"Shape":{"Unknown":[]}}`},
	{"collection bulk field names of Go", "/api/v1/collections/c9/bulk/", `{"operation":"add_files","file_ids":["a"],"Shape":{},"Wrong":[]}`},
	{"file bulk field names of Go", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a"],"Shape":{},"Unknown":[{"field":"x"}]}`},
	{"search field names of Go", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","Shape":{},"Wrong":[]}`},
	{"kb field names of Go", "/api/v1/knowledge-bases/", `{"name":"k","selected_datasources":["a"],"Shape":{},"Unknown":[],"sent":{}}`},
	{"search dotted keys", "/api/v1/knowledge-bases/kb9/search/", `{"query":"q","filter.x":1,"top_k":0,"filter":{"y":1,"a.b":2}}`},
	{"file bulk dotted keys", "/api/v1/files/bulk/", `{"operation":"delete","file_ids":["a"],"parameters.x":1,"parameters":{"q.r":1}}`},
	{"file bulk dotted keys, bad operation", "/api/v1/files/bulk/", `{"operation":"x","file_ids":["a"],"parameters.x":1}`},
	{"kb dotted keys", "/api/v1/knowledge-bases/", `{"name":"k","selected_collections":["a"],"embedding_config.x":1,"chunking_strategy.y":2,"embedding_config":{"a.b":1}}`},
	{"collection bulk dotted keys", "/api/v1/collections/c9/bulk/", `{"operation":"add_files","file_ids":["a"],"parameters.x":1,"parameters":{"q.r":1}}`},
}

// TestDecodeGolden holds the status and body of each bad body of the library and knowledge
// groups (field paths, messages and their order) to testdata/decode_golden.json, written from
// the code before the one decoder took these groups over (-update-decode rewrites it).
func TestDecodeGolden(t *testing.T) {
	p := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1"}
	opts := api.Options{Auth: openapiAuth{p: p}}
	v := &validating{lib: library.New(library.Deps{}, library.Limits{}),
		kb: knowledge.New(knowledge.Deps{Embedders: goldenEmbedders{}, NewSplitter: goldenSplitter}, knowledge.Limits{})}
	groups := map[string]http.Handler{
		"/api/v1/files/":           api.NewFiles(v, opts),
		"/api/v1/collections/":     api.NewCollections(v, opts),
		"/api/v1/knowledge-bases/": api.NewKnowledge(v, opts),
	}
	got := map[string]answer{}
	for _, tc := range decodeCases {
		for _, yaml := range []bool{false, true} {
			r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			r.Header.Set("X-API-Key", "k")
			name := tc.name
			if yaml {
				// YAML is a superset of JSON: the same body read as YAML answers the same.
				r.Header.Set("Content-Type", "application/yaml")
			}
			w := httptest.NewRecorder()
			for prefix, h := range groups {
				if strings.HasPrefix(tc.path, prefix) {
					h.ServeHTTP(w, r)
				}
			}
			a := answer{Status: w.Code, Body: json.RawMessage(strings.TrimSpace(w.Body.String()))}
			if yaml {
				if want := got[name]; want.Status != a.Status || string(want.Body) != string(a.Body) {
					t.Errorf("%s: as YAML %d %s, as JSON %d %s", name, a.Status, a.Body, want.Status, want.Body)
				}
				continue
			}
			if _, dup := got[name]; dup {
				t.Fatalf("two cases named %q", name)
			}
			got[name] = a
		}
	}
	checkGolden(t, filepath.Join("testdata", "decode_golden.json"), *updateDecode, got)
}

// answer is a golden case's answer: its status and body.
type answer struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// checkGolden holds the answers got to those in the golden file, as status and canonical JSON
// (or, with update, writes them there: the pin is taken from the code of the day).
func checkGolden(t *testing.T, file string, update bool, got map[string]answer) {
	t.Helper()
	if update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]answer
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	canon := func(m map[string]answer) map[string]string {
		out := map[string]string{}
		for k, a := range m {
			var body any
			if err := json.Unmarshal(a.Body, &body); err != nil {
				t.Errorf("%s: the answer is not JSON: %v", k, err)
			}
			c, _ := json.Marshal(body)
			out[k] = fmt.Sprintf("%d %s", a.Status, c)
		}
		return out
	}
	if d := cmp.Diff(canon(want), canon(got)); d != "" {
		t.Errorf("answers (-want +got):\n%s", d)
	}
}
