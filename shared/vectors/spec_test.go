package vectors_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
	"github.com/agentorch/agentorch/infra/opensearchlocal/spectest"
	"github.com/agentorch/agentorch/shared/vectors"
)

// newSpecStand is a stand whose server checks every request the store sends against the
// official OpenSearch API specification before the stand-in answers it, and the answer after.
func newSpecStand(t *testing.T) (*stand, *spectest.Checker) {
	t.Helper()
	srv := opensearchlocal.New(opensearchlocal.Options{RefreshTick: 10 * time.Millisecond})
	chk := spectest.NewChecker(t, spectest.Must(t), srv, spectest.Requests|spectest.Responses)
	ts := httptest.NewServer(chk)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	c, err := vectors.NewClient(ts.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	st := &stand{url: ts.URL, client: c}
	st.store = st.newStore(t)
	return st, chk
}

// TestRequestsMatchSpec runs every request the store makes — index creation, the search
// pipeline, bulk puts, refresh, count, each strategy's search with and without filters, the
// deletes — through a checker of the specification (operation, path and query parameters,
// the body against the operation's requestBody schema with objects closed, as OpenSearch's
// parsers are), so that what passes the stand-in stays valid for OpenSearch itself.
func TestRequestsMatchSpec(t *testing.T) {
	s, chk := newSpecStand(t)
	const dims = 4
	ix := s.ensure(t, "m", dims)
	// Another process ensures the same index: OpenSearch answers resource_already_exists.
	if _, err := s.newStore(t).EnsureIndex(ctx(t), "m", dims); err != nil {
		t.Fatal(err)
	}
	s.put(t, ix, fileChunks("c1", "kb1", "f1", 6, dims))
	s.put(t, ix, fileChunks("c1", "kb1", "f2", 3, dims))
	s.put(t, ix, fileChunks("c1", "kb2", "f3", 2, dims))
	s.refresh(t, ix)
	if n := s.countKB(t, ix, "kb1"); n != 9 {
		t.Errorf("count kb1 = %d, want 9", n)
	}
	if n := s.countKB(t, s.store.IndexName("none", dims), "kb1"); n != 0 {
		t.Errorf("count in a missing index = %d", n)
	}

	// A hybrid search before any pipeline exists: OpenSearch reports it missing, the store
	// puts it and asks again.
	q := vectors.Query{KBIDs: []string{"kb1"}, Company: "c1", Vector: unit(1, 0.5, 0, 0), Text: "f1 part 1", TopK: 3, Strategy: vectors.Hybrid}
	if hits := s.search(t, ix, q); len(hits) == 0 {
		t.Error("hybrid search before the pipeline found nothing")
	}
	if err := s.store.EnsurePipelines(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.newStore(t).EnsurePipelines(ctx(t)); err != nil {
		t.Fatal(err)
	}

	for _, st := range vectors.Strategies {
		for _, q := range []vectors.Query{
			{KBIDs: []string{"kb1"}, Company: "c1", TopK: 5},
			{KBIDs: []string{"kb1", "kb2"}, Company: "c1", TopK: 2, FileIDs: []string{"f1", "f3"}, Tags: []string{"t", "u"},
				ExcludeFileIDs: []string{"f2"}, MinScore: ptr(0.1)},
			{KBIDs: []string{"kb1"}, Company: "c1", TopK: vectors.MaxTopK, ExcludeFileIDs: []string{"f1"}, MinScore: ptr(0.0)},
		} {
			q.Strategy, q.Text = st, "part 2 of kb1"
			if st != vectors.BM25 {
				q.Vector = unit(0, 1, 0.5, 0)
			}
			if hits := s.search(t, ix, q); len(hits) == 0 && q.ExcludeFileIDs == nil {
				t.Errorf("%s search %+v found nothing", st, q)
			}
		}
	}
	if hits := s.search(t, s.store.IndexName("none", dims), vectors.Query{KBIDs: []string{"kb1"}, Company: "c1", TopK: 1, Vector: unit(1, 0, 0, 0)}); len(hits) != 0 {
		t.Errorf("search of a missing index found %v", ids(hits))
	}

	if n, err := s.store.DeleteFile(ctx(t), ix, "c1", "kb1", "f1"); err != nil || n != 6 {
		t.Errorf("DeleteFile = %d, %v; want 6", n, err)
	}
	if n, err := s.store.DeleteFileEverywhere(ctx(t), "c1", "f3"); err != nil || n != 2 {
		t.Errorf("DeleteFileEverywhere = %d, %v; want 2", n, err)
	}
	if n, err := s.store.DeleteKB(ctx(t), s.store.AllIndices(), "c1", "kb1"); err != nil || n != 3 {
		t.Errorf("DeleteKB = %d, %v; want 3", n, err)
	}

	// Every kind of request was checked, the failures OpenSearch answers included.
	seen := chk.Seen()
	for _, want := range []string{"indices.create.0 200", "indices.create.0 400", "bulk.0 200", "indices.refresh.3 200",
		"count.3 200", "search.3 200", "search.3 400", "search_pipeline.put.0 200", "delete_by_query.0 200"} {
		if seen[want] == 0 {
			t.Errorf("no request of %s was checked (seen: %v)", want, seen)
		}
	}
}

// TestRequestCheckFails shows that the check of TestRequestsMatchSpec catches a wrong request:
// each case takes one request the store really sent and spoils it in one place.
func TestRequestCheckFails(t *testing.T) {
	s, chk := newSpecStand(t)
	ix := s.ensure(t, "m", 4)
	if err := s.store.EnsurePipelines(ctx(t)); err != nil {
		t.Fatal(err)
	}
	s.put(t, ix, fileChunks("c1", "kb1", "f1", 2, 4))
	s.countKB(t, ix, "kb1")
	s.search(t, ix, vectors.Query{KBIDs: []string{"kb1"}, Company: "c1", Vector: unit(1, 0, 0, 0), Text: "part", TopK: 3, Strategy: vectors.HybridRRF})
	s.search(t, ix, vectors.Query{KBIDs: []string{"kb1"}, Company: "c1", Vector: unit(1, 0, 0, 0), TopK: 3, Strategy: vectors.Dense})
	if _, err := s.store.DeleteKB(ctx(t), ix, "c1", "kb1"); err != nil {
		t.Fatal(err)
	}
	sent := map[string]spectest.Request{}
	for _, r := range chk.Recorded() {
		key := r.Operation
		if key == "search.3" && bytes.Contains(r.Body, []byte(`"hybrid"`)) {
			key = "hybrid"
		}
		sent[key] = r
	}
	hybrid := []any{"query", "hybrid"}
	match := append(hybrid, "queries", 0, "bool", "should", 0, "match", "text.en")
	rrf := []any{"phase_results_processors", 0, "score-ranker-processor", "combination"}
	cases := []struct {
		name, op string
		spoil    func(u *url.URL, body string) string // returns the body; may change u
		want     string                               // in the error (for unlisted fields: the summary naming exactly them)
	}{
		{"unknown field in the hybrid query", "hybrid", set(append(hybrid, "depth"), 3), "have: /query/hybrid/depth)"},
		{"hybrid filter, which came with OpenSearch 3.0", "hybrid", set(append(hybrid, "filter"), map[string]any{"term": map[string]any{"company": "c1"}}), "have: /query/hybrid/filter)"},
		{"hybrid pagination_depth not an integer", "hybrid", set(append(hybrid, "pagination_depth"), "8"), "/query/hybrid/pagination_depth"},
		{"unknown field in the english match", "hybrid", set(append(match, "operator_x"), "and"), "have: /query/hybrid/queries/0/bool/should/0/match/text.en/operator_x)"},
		{"unknown field in a knn query", "search.3", set([]any{"query", "knn", "embedding", "top"}, 3), "have: /query/knn/embedding/top)"},
		{"unknown query", "search.3", replace(`{"knn":`, `{"knnn":`), "have: /query/knnn)"},
		{"unknown field in the search body", "search.3", set([]any{"sise"}, 3), "have: /sise)"},
		{"unknown field in _source", "search.3", set([]any{"_source", "include"}, []string{"text"}), "have: /_source/include)"},
		{"rrf rank_constant below 1", "search_pipeline.put.0", set(append(rrf, "rank_constant"), 0), "/rank_constant"},
		{"unknown rrf combination field", "search_pipeline.put.0", set(append(rrf, "weights"), []float64{0.5, 0.5}), "have: /phase_results_processors/0/score-ranker-processor/combination/weights)"},
		{"unknown phase results processor", "search_pipeline.put.0", replace(`"score-ranker-processor"`, `"rrf-processor"`), "/phase_results_processors/0"},
		{"unknown mapping parameter", "indices.create.0", set([]any{"mappings", "dynamik"}, true), "have: /mappings/dynamik)"},
		{"unknown sub-field parameter", "indices.create.0", set([]any{"mappings", "properties", "text", "fields", "en", "analyser"}, "english"), "have: /mappings/properties/text/fields/en/analyser)"},
		{"unknown bulk action field", "bulk.0", replace(`"_id":`, `"_idx":"a","_id":`), "_idx"},
		{"unknown query parameter", "search.3", query("ignore_unavailable", "ignore_unavailabel", "true"), "ignore_unavailabel"},
		{"query parameter of OpenSearch 3.0", "hybrid", query("", "verbose_pipeline", "true"), "verbose_pipeline is not in OpenSearch 2.19"},
		{"query parameter out of its enum", "delete_by_query.0", query("conflicts", "conflicts", "skip"), "conflicts"},
		{"query parameter not a boolean", "count.3", query("ignore_unavailable", "ignore_unavailable", "yes"), "ignore_unavailable"},
		{"no body where one is required", "delete_by_query.0", func(*url.URL, string) string { return "" }, "requires a body"},
		{"a body the operation does not take", "indices.refresh.3", func(*url.URL, string) string { return `{}` }, "takes no body"},
	}
	spec := spectest.Must(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ok := sent[c.op]
			if !ok {
				t.Fatalf("the store sent no %s request (sent: %v)", c.op, keys(sent))
			}
			u := *r.URL
			if _, err := spec.ValidateRequest(r.Method, &u, r.ContentType, r.Body); err != nil {
				t.Fatalf("the request as sent fails: %v", err)
			}
			body := c.spoil(&u, string(r.Body))
			if body == string(r.Body) && u.String() == r.URL.String() && c.op != "indices.refresh.3" {
				t.Fatal("the spoiler changed nothing")
			}
			_, err := spec.ValidateRequest(r.Method, &u, r.ContentType, []byte(body))
			if err == nil {
				t.Fatalf("spoilt request passes: %s %s\n%s", r.Method, u.String(), body)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("the error does not name %q:\n%v", c.want, err)
			}
		})
	}
}

// set returns a spoiler that sets the value at path (object keys and array indices) of a JSON
// body.
func set(path []any, value any) func(*url.URL, string) string {
	path = append([]any(nil), path...)
	return func(_ *url.URL, body string) string {
		var doc any
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			return "not JSON: " + err.Error()
		}
		cur := doc
		for i, p := range path {
			last := i == len(path)-1
			switch k := p.(type) {
			case string:
				m, _ := cur.(map[string]any)
				if m == nil {
					return "no object at " + fmt.Sprint(path[:i])
				}
				if last {
					m[k] = value
				}
				cur = m[k]
			case int:
				a, _ := cur.([]any)
				if k >= len(a) {
					return "no array element at " + fmt.Sprint(path[:i+1])
				}
				if last {
					a[k] = value
				}
				cur = a[k]
			}
		}
		out, _ := json.Marshal(doc)
		return string(out)
	}
}

// replace returns a spoiler that replaces the first old in the body by new.
func replace(old, new string) func(*url.URL, string) string {
	return func(_ *url.URL, body string) string { return strings.Replace(body, old, new, 1) }
}

// query returns a spoiler that drops the query parameter old (if named) and sets name=value.
func query(old, name, value string) func(*url.URL, string) string {
	return func(u *url.URL, body string) string {
		q := u.Query()
		if old != "" {
			q.Del(old)
		}
		q.Set(name, value)
		u.RawQuery = q.Encode()
		return body
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
