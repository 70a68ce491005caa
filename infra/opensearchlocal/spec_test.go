package opensearchlocal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
)

// The OpenSearch API specification (github.com/opensearch-project/opensearch-api-specification)
// is not published to a package registry on its own, but its built, merged form
// (opensearch-openapi.yaml) ships inside the official Go client's module, which this package's
// tests already require: it is read from the module cache, so it always matches the client
// version in go.mod. The spec's test stories are not in that module; the ones for this slice are
// vendored under testdata/spec (see testdata/spec/README.md).

const specModule = "github.com/opensearch-project/opensearch-go/v4"

// apiSpec is the loaded specification with its compiled response schemas.
type apiSpec struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
	paths    []specPath
}

type specPath struct {
	template string
	segs     []string
}

const specURL = "https://opensearch.local/opensearch-openapi.json"

var (
	specOnce sync.Once
	spec     *apiSpec
	specErr  error
)

func loadSpec(t *testing.T) *apiSpec {
	t.Helper()
	specOnce.Do(func() { spec, specErr = readSpec() })
	if specErr != nil {
		t.Fatalf("load the OpenSearch API specification: %v", specErr)
	}
	return spec
}

func readSpec() (*apiSpec, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}", specModule).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m %s: %w", specModule, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return nil, fmt.Errorf("module %s is not in the module cache (go mod download)", specModule)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "opensearch-openapi.yaml"))
	if err != nil {
		return nil, err
	}
	var y any
	if err := yaml.Unmarshal(raw, &y); err != nil {
		return nil, fmt.Errorf("parse opensearch-openapi.yaml: %w", err)
	}
	js, err := json.Marshal(jsonCompatible(y))
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, err
	}
	if err := patchSpec(doc.(map[string]any)); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(specURL, doc); err != nil {
		return nil, err
	}
	s := &apiSpec{doc: doc.(map[string]any), compiler: c, schemas: map[string]*jsonschema.Schema{}}
	for p := range s.doc["paths"].(map[string]any) {
		s.paths = append(s.paths, specPath{template: p, segs: strings.Split(strings.Trim(p, "/"), "/")})
	}
	return s, nil
}

// specPatches correct two defects of the specification that reject what OpenSearch itself
// answers; each names the evidence. Everything else is checked as published.
var specPatches = []struct {
	schema, why string
	apply       func(schema map[string]any) error
}{
	{"#/components/schemas/_common___ShardFailure",
		"`primary` is required, but a search's failed_shards entries (ShardSearchFailure.toXContent) carry only shard, index, node and reason (e.g. opensearch-project/OpenSearch#20196)",
		func(sch map[string]any) error {
			req, _ := sch["required"].([]any)
			var kept []any
			for _, r := range req {
				if r != "primary" {
					kept = append(kept, r)
				}
			}
			if len(kept) == len(req) {
				return fmt.Errorf("no longer requires primary: drop this patch")
			}
			sch["required"] = kept
			return nil
		}},
	{"#/components/responses/delete_by_query___200/content/application~1json/schema",
		"oneOf [BulkByScrollResponseBase, {task}] where the second branch requires nothing, so every synchronous response matches both and oneOf fails; the branch is the wait_for_completion=false answer, which has a task",
		func(sch map[string]any) error {
			branches, _ := sch["oneOf"].([]any)
			if len(branches) != 2 {
				return fmt.Errorf("is no longer a two-branch oneOf: drop this patch")
			}
			task, _ := branches[1].(map[string]any)
			if _, ok := task["required"]; ok {
				return fmt.Errorf("task branch has required now: drop this patch")
			}
			task["required"] = []any{"task"}
			return nil
		}},
}

func patchSpec(doc map[string]any) error {
	for _, p := range specPatches {
		var cur any = doc
		for _, part := range strings.Split(strings.TrimPrefix(p.schema, "#/"), "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		sch, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("spec patch: %s not found", p.schema)
		}
		if err := p.apply(sch); err != nil {
			return fmt.Errorf("spec patch %s %w", p.schema, err)
		}
	}
	return nil
}

// jsonCompatible turns YAML's map[any]any into map[string]any.
func jsonCompatible(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonCompatible(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonCompatible(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonCompatible(e)
		}
		return v
	}
	return v
}

// operation finds the spec operation for a concrete request path, preferring the template with
// the most literal segments (as the router does).
func (s *apiSpec) operation(method, path string) (string, map[string]any) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if strings.Trim(path, "/") == "" {
		segs = []string{""}
	}
	best, bestLiterals := "", -1
	for _, p := range s.paths {
		if len(p.segs) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for i, ps := range p.segs {
			if strings.HasPrefix(ps, "{") {
				continue
			}
			if ps != segs[i] {
				ok = false
				break
			}
			literals++
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = p.template, literals
		}
	}
	if best == "" {
		return "", nil
	}
	op, _ := s.doc["paths"].(map[string]any)[best].(map[string]any)[strings.ToLower(method)].(map[string]any)
	return best, op
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// responseSchema returns the compiled schema of an operation's response (nil when the spec
// documents no body for it), and a description of where it came from.
func (s *apiSpec) responseSchema(method, path string, status int, body []byte) (*jsonschema.Schema, string, error) {
	tmpl, op := s.operation(method, path)
	if op == nil {
		return nil, "", fmt.Errorf("the spec has no operation %s %s", method, path)
	}
	responses, _ := op["responses"].(map[string]any)
	resp, documented := responses[strconv.Itoa(status)].(map[string]any)
	ptr := "#/paths/" + pointerEscape(tmpl) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(status)
	where := fmt.Sprintf("%s %s %d (%v)", method, tmpl, status, op["operationId"])
	if !documented {
		// Undocumented statuses: errors are the spec's ErrorResponseBase; other bodies (the 409
		// of delete-by-query with conflicts=abort) are the operation's 200 body.
		var probe any
		if err := json.Unmarshal(body, &probe); err != nil {
			return nil, "", fmt.Errorf("%s: body is not JSON: %w", where, err)
		}
		obj, _ := probe.(map[string]any)
		if _, isErr := obj["error"]; isErr {
			return s.compile("#/components/schemas/_common___ErrorResponseBase", where+" undocumented: ErrorResponseBase")
		}
		resp, _ = responses["200"].(map[string]any)
		ptr = "#/paths/" + pointerEscape(tmpl) + "/" + strings.ToLower(method) + "/responses/200"
		where += " undocumented: the 200 body"
	}
	if ref, ok := resp["$ref"].(string); ok {
		ptr = ref
		resp = s.resolve(ref)
	}
	content, _ := resp["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	if _, ok := media["schema"]; !ok {
		return nil, where, nil
	}
	return s.compile(ptr+"/content/application~1json/schema", where)
}

func (s *apiSpec) resolve(ref string) map[string]any {
	var cur any = s.doc
	for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		cur = cur.(map[string]any)[p]
	}
	m, _ := cur.(map[string]any)
	return m
}

func (s *apiSpec) compile(ptr, where string) (*jsonschema.Schema, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.schemas[ptr]; ok {
		return sch, where, nil
	}
	sch, err := s.compiler.Compile(specURL + ptr)
	if err != nil {
		return nil, where, fmt.Errorf("compile %s: %w", ptr, err)
	}
	s.schemas[ptr] = sch
	return sch, where, nil
}

// validate checks one response against the spec.
func (s *apiSpec) validate(method, path string, status int, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	sch, where, err := s.responseSchema(method, path, status, body)
	if err != nil || sch == nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: body is not JSON: %w", where, err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s: response does not match the spec:\n%w\nbody: %s", where, err, body)
	}
	return nil
}

// specCheckingServer serves the stand-in and validates every response against the spec.
type specCheckingServer struct {
	t    *testing.T
	spec *apiSpec
	srv  *opensearchlocal.Server
	mu   sync.Mutex
	seen map[string]int // "<operationId> <status>" → count
}

func (h *specCheckingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if err := h.spec.validate(r.Method, r.URL.EscapedPath(), rec.Code, body); err != nil {
		h.t.Errorf("%s %s: %v", r.Method, r.URL.RequestURI(), err)
	}
	if _, op := h.spec.operation(r.Method, r.URL.EscapedPath()); op != nil {
		h.mu.Lock()
		h.seen[fmt.Sprintf("%v %d", op["operationId"], rec.Code)]++
		h.mu.Unlock()
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

func newSpecStand(t *testing.T) (*stand, *specCheckingServer) {
	t.Helper()
	srv := opensearchlocal.New(opensearchlocal.Options{RefreshTick: 10 * time.Millisecond})
	h := &specCheckingServer{t: t, spec: loadSpec(t), srv: srv, seen: map[string]int{}}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	s := &stand{url: ts.URL}
	return s, h
}

// TestResponsesMatchSpec drives every endpoint of the slice, successes and failures, and checks
// each response against the spec's schema for its operation and status.
func TestResponsesMatchSpec(t *testing.T) {
	s, h := newSpecStand(t)
	calls := []struct {
		method, path, ct, body string
		status                 int
	}{
		{"GET", "/", "", "", 200},
		{"HEAD", "/", "", "", 200},
		{"PUT", "/kb", "application/json", kbIndex, 200},
		{"PUT", "/kb", "application/json", kbIndex, 400},
		{"PUT", "/bad", "application/json", `{"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2,"foo":1}}}}`, 400},
		{"PUT", "/bad", "application/json", `{"settings":{"nope":1}}`, 400},
		{"HEAD", "/kb", "", "", 200},
		{"HEAD", "/nope", "", "", 404},
		{"GET", "/kb", "", "", 200},
		{"GET", "/kb?flat_settings=true", "", "", 200},
		{"GET", "/nope", "", "", 404},
		{"POST", "/kb/_doc?refresh=true", "application/json", `{"kb_id":"kb1","text":"The quick brown fox","embedding":[1,0,0]}`, 201},
		{"PUT", "/kb/_doc/d1", "application/json", `{"kb_id":"kb1","text":"a lazy dog sleeps","embedding":[0,1,0]}`, 201},
		{"PUT", "/kb/_doc/d1?refresh=true", "application/json", `{"kb_id":"kb2","text":"the lazy brown dog","embedding":[0,1,1]}`, 200},
		{"PUT", "/kb/_doc/d1?op_type=create", "application/json", `{"kb_id":"kb2"}`, 409},
		{"GET", "/kb/_doc/d1", "", "", 200},
		{"GET", "/kb/_doc/d1?_source_includes=kb_id&realtime=false", "", "", 200},
		{"GET", "/kb/_doc/zz", "", "", 404},
		{"HEAD", "/kb/_doc/d1", "", "", 200},
		{"PUT", "/kb/_doc/tmp", "application/json", `{"kb_id":"kb9"}`, 201},
		{"DELETE", "/kb/_doc/tmp?refresh=true", "", "", 200},
		{"DELETE", "/kb/_doc/tmp", "", "", 404},
		{"POST", "/kb/_doc", "application/json", `{"embedding":[1,2]}`, 400},
		{"POST", "/_bulk?refresh=true", "application/x-ndjson", "{\"index\":{\"_index\":\"kb\",\"_id\":\"b1\"}}\n{\"kb_id\":\"kb1\",\"text\":\"brown fox\",\"embedding\":[1,1,0]}\n{\"create\":{\"_index\":\"kb\",\"_id\":\"b1\"}}\n{\"kb_id\":\"x\"}\n{\"update\":{\"_index\":\"kb\",\"_id\":\"b1\"}}\n{\"doc\":{\"kb_id\":\"kb3\"}}\n{\"delete\":{\"_index\":\"kb\",\"_id\":\"zz\"}}\n{\"delete\":{\"_index\":\"missing\",\"_id\":\"zz\"}}\n", 200},
		{"POST", "/kb/_bulk", "application/x-ndjson", "{\"oops\":{}}\n{}\n", 400},
		{"POST", "/kb/_search", "application/json", `{"query":{"knn":{"embedding":{"vector":[1,0,0],"k":2,"filter":{"term":{"kb_id":"kb1"}}}}},"_source":{"excludes":["embedding"]}}`, 200},
		{"POST", "/kb/_search", "application/json", `{"query":{"bool":{"should":[{"match":{"text":{"query":"brown fox","_name":"m"}}}],"filter":[{"terms":{"kb_id":["kb1","kb3"]}}]}},"version":true,"seq_no_primary_term":true,"track_total_hits":true}`, 200},
		{"GET", "/kb/_search?size=0&track_total_hits=false", "", "", 200},
		{"POST", "/_search", "application/json", `{"query":{"match_all":{}},"_source":false}`, 200},
		{"POST", "/kb/_search", "application/json", `{"query":{"knn":{"embedding":{"vector":[1,0],"k":2}}}}`, 400},
		{"POST", "/kb/_search", "application/json", `{"query":{"nope":{}}}`, 400},
		{"POST", "/kb/_search", "application/json", `{"query":`, 400},
		{"POST", "/nope/_search", "application/json", `{}`, 404},
		{"PUT", "/_search/pipeline/hy", "application/json", `{"description":"hybrid","phase_results_processors":[{"normalization-processor":{"normalization":{"technique":"min_max"},"combination":{"technique":"arithmetic_mean","parameters":{"weights":[0.3,0.7]}}}}]}`, 200},
		{"GET", "/_search/pipeline/hy", "", "", 200},
		{"POST", "/kb/_search?search_pipeline=hy", "application/json", `{"query":{"hybrid":{"queries":[{"match":{"text":"brown"}},{"knn":{"embedding":{"vector":[1,0,0],"k":3}}}]}}}`, 200},
		{"DELETE", "/_search/pipeline/hy", "", "", 200},
		{"DELETE", "/_search/pipeline/hy", "", "", 404},
		{"GET", "/kb/_count", "", "", 200},
		{"POST", "/_count", "application/json", `{"query":{"term":{"kb_id":"kb1"}}}`, 200},
		{"POST", "/nope/_count", "application/json", `{}`, 404},
		{"POST", "/kb/_refresh", "", "", 200},
		{"GET", "/_refresh", "", "", 200},
		{"POST", "/kb/_delete_by_query", "application/json", `{"query":{"term":{"kb_id":"kb3"}}}`, 200},
		{"POST", "/kb/_delete_by_query", "application/json", `{"query":{"match_all":{}}}`, 409},
		{"POST", "/kb/_delete_by_query", "application/json", `{"query":{"match_al":{}}}`, 400},
		{"DELETE", "/kb", "", "", 200},
		{"DELETE", "/kb", "", "", 404},
	}
	for _, c := range calls {
		code, _ := s.raw(t, c.method, c.path, c.ct, c.body)
		if code != c.status {
			t.Errorf("%s %s = %d, want %d", c.method, c.path, code, c.status)
		}
	}
	// Every operation and documented outcome was validated against a schema, not skipped.
	for _, want := range []string{"info.0 200", "indices.create.0 200", "indices.create.0 400", "indices.get.0 200",
		"indices.delete.0 200", "indices.delete.0 404", "index.0 201", "index.2 200", "bulk.0 200", "search.3 200",
		"search.3 400", "search.3 404", "search.1 200", "count.2 200", "count.1 200", "delete_by_query.0 200",
		"delete_by_query.0 409", "indices.refresh.3 200", "search_pipeline.put.0 200", "get.0 200", "get.0 404", "delete.0 200", "delete.0 404"} {
		if h.seen[want] == 0 {
			t.Errorf("no response of %s was checked (seen: %v)", want, h.seen)
		}
	}
}
