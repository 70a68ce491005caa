package opensearchlocal_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
	"github.com/agentorch/agentorch/infra/opensearchlocal/spectest"
)

// The OpenSearch API specification and its loader are in spectest (shared with shared/vectors,
// whose tests check the requests the product sends); the spec's test stories are not in its
// module, and the ones for this slice are vendored under testdata/spec (see
// testdata/spec/README.md).

// jsonCompatible turns YAML's map[any]any into map[string]any.
func jsonCompatible(v any) any { return spectest.JSONCompatible(v) }

// newSpecStand serves the stand-in behind a checker of every response against the spec.
func newSpecStand(t *testing.T) (*stand, *spectest.Checker) {
	t.Helper()
	srv := opensearchlocal.New(opensearchlocal.Options{RefreshTick: 10 * time.Millisecond})
	h := spectest.NewChecker(t, spectest.Must(t), srv, spectest.Responses)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return &stand{url: ts.URL}, h
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
	seen := h.Seen()
	for _, want := range []string{"info.0 200", "indices.create.0 200", "indices.create.0 400", "indices.get.0 200",
		"indices.delete.0 200", "indices.delete.0 404", "index.0 201", "index.2 200", "bulk.0 200", "search.3 200",
		"search.3 400", "search.3 404", "search.1 200", "count.2 200", "count.1 200", "delete_by_query.0 200",
		"delete_by_query.0 409", "indices.refresh.3 200", "search_pipeline.put.0 200", "get.0 200", "get.0 404", "delete.0 200", "delete.0 404"} {
		if seen[want] == 0 {
			t.Errorf("no response of %s was checked (seen: %v)", want, seen)
		}
	}
}
