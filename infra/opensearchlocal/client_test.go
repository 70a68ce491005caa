package opensearchlocal_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
)

const kbIndex = `{"settings":{"index":{"knn":true,"refresh_interval":"-1"}},
 "mappings":{"properties":{
   "embedding":{"type":"knn_vector","dimension":3,"method":{"name":"hnsw","engine":"faiss","space_type":"l2","parameters":{"m":16,"ef_construction":128}}},
   "kb_id":{"type":"keyword"},"text":{"type":"text"}}}}`

func TestInfoReportsVersion(t *testing.T) {
	s := newStand(t)
	res, err := s.client.Info(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version.Number != "2.19.0" || res.Version.Distribution != "opensearch" {
		t.Errorf("version = %+v, want OpenSearch 2.19.0", res.Version)
	}
}

func TestIndexLifecycle(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex)

	exists, err := s.client.Indices.Exists(ctx(t), opensearchapi.IndicesExistsReq{Indices: []string{"kb"}})
	if err != nil || exists.StatusCode != http.StatusOK {
		t.Fatalf("HEAD /kb = %v, %v; want 200", exists, err)
	}
	missing, _ := s.client.Indices.Exists(ctx(t), opensearchapi.IndicesExistsReq{Indices: []string{"nope"}})
	if missing == nil || missing.StatusCode != http.StatusNotFound {
		t.Fatalf("HEAD /nope = %v; want 404", missing)
	}

	got, err := s.client.Indices.Get(ctx(t), opensearchapi.IndicesGetReq{Indices: []string{"kb"}})
	if err != nil {
		t.Fatal(err)
	}
	var mapping map[string]any
	if err := json.Unmarshal((*got.IndicesGetRespData)["kb"].Mappings, &mapping); err != nil {
		t.Fatal(err)
	}
	emb := mapping["properties"].(map[string]any)["embedding"].(map[string]any)
	if emb["type"] != "knn_vector" || emb["dimension"] != 3.0 {
		t.Errorf("embedding mapping = %v", emb)
	}

	// Creating it again: OpenSearch's resource_already_exists_exception naming the index's uuid.
	_, err = s.client.Indices.Create(ctx(t), opensearchapi.IndicesCreateReq{Index: "kb", Body: strings.NewReader(kbIndex)})
	se := osErr(t, err, 400, "resource_already_exists_exception")
	var settings struct {
		Index struct {
			UUID string `json:"uuid"`
		} `json:"index"`
	}
	if err := json.Unmarshal((*got.IndicesGetRespData)["kb"].Settings, &settings); err != nil {
		t.Fatal(err)
	}
	if want := "index [kb/" + settings.Index.UUID + "] already exists"; se.Err.Reason != want || se.Err.Index != "kb" || se.Err.IndexUUID != settings.Index.UUID {
		t.Errorf("reason = %q (index %q, uuid %q), want %q", se.Err.Reason, se.Err.Index, se.Err.IndexUUID, want)
	}

	if _, err := s.client.Indices.Delete(ctx(t), opensearchapi.IndicesDeleteReq{Indices: []string{"kb"}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.client.Indices.Delete(ctx(t), opensearchapi.IndicesDeleteReq{Indices: []string{"kb"}})
	se = osErr(t, err, 404, "index_not_found_exception")
	if se.Err.Reason != "no such index [kb]" || se.Err.Index != "kb" || se.Err.IndexUUID != "_na_" {
		t.Errorf("missing index error = %+v", se.Err)
	}
}

func TestCreateIndexRejections(t *testing.T) {
	s := newStand(t)
	cases := []struct {
		name, index, body  string
		status             int
		typ, reason, cause string
	}{
		{"unknown knn_vector parameter", "a", `{"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2,"foo":1}}}}`,
			400, "mapper_parsing_exception", "Failed to parse mapping [_doc]: unknown parameter [foo] on mapper [v] of type [knn_vector]",
			"unknown parameter [foo] on mapper [v] of type [knn_vector]"},
		{"unknown text parameter", "a", `{"mappings":{"properties":{"t":{"type":"text","analyser":"standard"}}}}`,
			400, "mapper_parsing_exception", "Failed to parse mapping [_doc]: unknown parameter [analyser] on mapper [t] of type [text]", ""},
		{"unknown field type", "a", `{"mappings":{"properties":{"t":{"type":"txt"}}}}`,
			400, "mapper_parsing_exception", "Failed to parse mapping [_doc]: No handler for type [txt] declared on field [t]", ""},
		{"unknown root mapping parameter", "a", `{"mappings":{"propertiez":{}}}`,
			400, "mapper_parsing_exception", "Failed to parse mapping [_doc]: Root mapping definition has unsupported parameters:  [propertiez : {}]", ""},
		{"unknown setting", "a", `{"settings":{"index":{"knnn":true}}}`,
			400, "illegal_argument_exception", "unknown setting [index.knnn] did you mean [index.knn]?", ""},
		{"unknown top-level key", "a", `{"setting":{}}`, 400, "parse_exception", "unknown key [setting] for create index", ""},
		{"upper-case name", "KB", `{}`, 400, "invalid_index_name_exception", "Invalid index name [KB], must be lowercase", ""},
		{"engine without the space", "a", `{"settings":{"index.knn":true},"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2,"method":{"name":"hnsw","engine":"lucene","space_type":"l1"}}}}}`,
			400, "mapper_parsing_exception", "", ""},
		{"method without index.knn", "a", `{"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2,"method":{"name":"hnsw"}}}}}`,
			400, "mapper_parsing_exception", "Failed to parse mapping [_doc]: Cannot set modelId or method parameters when index.knn setting is false", ""},
		{"malformed JSON", "a", `{"mappings":`, 400, "json_parse_exception", "", ""},
		{"out-of-slice analyzer", "a", `{"mappings":{"properties":{"t":{"type":"text","analyzer":"french"}}}}`, 400, "mapper_parsing_exception", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.client.Indices.Create(ctx(t), opensearchapi.IndicesCreateReq{Index: c.index, Body: strings.NewReader(c.body)})
			se := osErr(t, err, c.status, c.typ)
			if c.reason != "" && se.Err.Reason != c.reason {
				t.Errorf("reason = %q, want %q", se.Err.Reason, c.reason)
			}
			if c.cause != "" {
				if se.Err.CausedBy == nil || se.Err.CausedBy.Reason != c.cause {
					t.Errorf("caused_by = %+v, want %q", se.Err.CausedBy, c.cause)
				}
				if len(se.Err.RootCause) != 1 || se.Err.RootCause[0].Reason != c.cause {
					t.Errorf("root_cause = %+v, want the inner cause", se.Err.RootCause)
				}
			}
		})
	}
	// None of the rejected requests created an index.
	if code, _ := s.json(t, "GET", "/a", ""); code != 404 {
		t.Errorf("GET /a after rejected creates = %d, want 404", code)
	}
}

func TestNearRealTimeVisibility(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex) // refresh_interval -1: only explicit refreshes
	s.bulk(t, `{"index":{"_index":"kb","_id":"c1"}}
{"kb_id":"kb1","text":"refunds within thirty days","embedding":[1,0,0]}
`, opensearchapi.BulkParams{})

	count := func() int {
		res, err := s.client.Indices.Count(ctx(t), &opensearchapi.IndicesCountReq{Indices: []string{"kb"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Count
	}
	if n := len(s.search(t, "kb", `{"query":{"match_all":{}}}`).Hits.Hits); n != 0 || count() != 0 {
		t.Fatalf("before a refresh: %d hits, count %d; want nothing visible", n, count())
	}
	time.Sleep(100 * time.Millisecond) // several refresher ticks: -1 means none of them refreshes
	if count() != 0 {
		t.Fatal("refresh_interval -1 still refreshed periodically")
	}
	s.refresh(t, "kb")
	if count() != 1 {
		t.Fatalf("after _refresh: count %d, want 1", count())
	}

	// refresh=true on the index API makes the write visible at once and says so.
	res, err := s.client.Index(ctx(t), opensearchapi.IndexReq{Index: "kb", DocumentID: "c2",
		Body: strings.NewReader(`{"kb_id":"kb1","text":"x","embedding":[0,1,0]}`), Params: opensearchapi.IndexParams{Refresh: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ForcedRefresh || res.Result != "created" || count() != 2 {
		t.Fatalf("refresh=true: %+v, count %d", res, count())
	}
	// A delete is invisible until the next refresh as well.
	s.bulk(t, `{"delete":{"_index":"kb","_id":"c1"}}`+"\n", opensearchapi.BulkParams{})
	if count() != 2 {
		t.Fatalf("deleted document vanished before a refresh")
	}
	s.bulk(t, `{"delete":{"_index":"kb","_id":"c2"}}`+"\n", opensearchapi.BulkParams{Refresh: "true"})
	if count() != 0 {
		t.Fatalf("after bulk refresh=true: count %d, want 0", count())
	}
}

func TestPeriodicRefreshAndWaitFor(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "p", `{"settings":{"index":{"refresh_interval":"200ms"}}}`)
	if code, _ := s.json(t, "POST", "/p/_doc/1", `{"a":1}`); code != 201 {
		t.Fatalf("index = %d", code)
	}
	deadline := time.Now().Add(30 * time.Second) // generous: the interval is 200ms
	for {
		if len(s.search(t, "p", `{}`).Hits.Hits) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the periodic refresh never made the document visible")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// refresh=wait_for returns only once a refresh made the write visible.
	start := time.Now()
	res, err := s.client.Index(ctx(t), opensearchapi.IndexReq{Index: "p", DocumentID: "2", Body: strings.NewReader(`{"a":2}`),
		Params: opensearchapi.IndexParams{Refresh: "wait_for"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ForcedRefresh {
		t.Error("wait_for reported a forced refresh")
	}
	if n := len(s.search(t, "p", `{}`).Hits.Hits); n != 2 {
		t.Fatalf("after wait_for (%s): %d hits, want 2", time.Since(start), n)
	}
}

func TestKNNSearchWithFilterAndSource(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex)
	s.bulk(t, `{"index":{"_index":"kb","_id":"a"}}
{"kb_id":"kb1","text":"alpha","embedding":[1,0,0]}
{"index":{"_index":"kb","_id":"b"}}
{"kb_id":"kb2","text":"beta","embedding":[0.9,0.1,0]}
{"index":{"_index":"kb","_id":"c"}}
{"kb_id":"kb1","text":"gamma","embedding":[0,1,0]}
{"index":{"_index":"kb","_id":"d"}}
{"kb_id":"kb1","text":"delta","embedding":[0.8,0.3,0]}
`, opensearchapi.BulkParams{Refresh: "true"})

	res := s.search(t, "kb", `{"size":5,"query":{"knn":{"embedding":{"vector":[1,0,0],"k":2,"filter":{"term":{"kb_id":"kb1"}}}}},"_source":{"excludes":["embedding"]}}`)
	if diff := cmp.Diff([]string{"a", "d"}, hitIDs(res)); diff != "" {
		t.Fatalf("filtered top 2 (-want +got):\n%s", diff)
	}
	// l2 on faiss: score 1/(1+squared distance).
	wantScores := []float32{1, float32(1 / (1 + (0.2*0.2 + 0.3*0.3)))}
	for i, h := range res.Hits.Hits {
		if d := h.Score - wantScores[i]; d > 1e-6 || d < -1e-6 {
			t.Errorf("hit %s score %v, want %v", h.ID, h.Score, wantScores[i])
		}
		var src map[string]any
		if err := json.Unmarshal(h.Source, &src); err != nil {
			t.Fatalf("hit %s _source %s: %v", h.ID, h.Source, err)
		}
		if _, ok := src["embedding"]; ok || src["kb_id"] != "kb1" {
			t.Errorf("hit %s _source = %v, want kb_id without embedding", h.ID, src)
		}
	}
	if res.Hits.Total.Value != 2 || res.Hits.Total.Relation != "eq" {
		t.Errorf("total = %+v, want 2 eq", res.Hits.Total)
	}

	// min_score: radial search returns every vector at least that close.
	res = s.search(t, "kb", `{"query":{"knn":{"embedding":{"vector":[1,0,0],"min_score":0.9}}}}`)
	if diff := cmp.Diff([]string{"a", "b"}, hitIDs(res)); diff != "" {
		t.Errorf("min_score 0.9 (-want +got):\n%s", diff)
	}
	// max_distance: squared l2 distance <= 0.1.
	res = s.search(t, "kb", `{"query":{"knn":{"embedding":{"vector":[1,0,0],"max_distance":0.1}}}}`)
	if diff := cmp.Diff([]string{"a", "b"}, hitIDs(res)); diff != "" {
		t.Errorf("max_distance 0.1 (-want +got):\n%s", diff)
	}
	// size cuts k's results.
	res = s.search(t, "kb", `{"size":1,"query":{"knn":{"embedding":{"vector":[0,1,0],"k":3}}}}`)
	if diff := cmp.Diff([]string{"c"}, hitIDs(res)); diff != "" || res.Hits.Total.Value != 3 {
		t.Errorf("size 1, k 3: ids %v total %d (-want +got):\n%s", hitIDs(res), res.Hits.Total.Value, diff)
	}
}

func TestKNNRejections(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex)

	// Indexing a vector of the wrong dimension: the item fails with OpenSearch's wording.
	res, err := s.client.Bulk(ctx(t), opensearchapi.BulkReq{Body: strings.NewReader(`{"index":{"_index":"kb","_id":"c1"}}
{"embedding":[1,2]}
{"index":{"_index":"kb","_id":"c2"}}
{"embedding":[1,2,3]}
`)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Errors || len(res.Items) != 2 {
		t.Fatalf("bulk = %+v, want one failed item of two", res)
	}
	item := res.Items[0]["index"]
	if item.Status != 400 || item.Error == nil || item.Error.Type != "mapper_parsing_exception" ||
		item.Error.Reason != "failed to parse field [embedding] of type [knn_vector] in document with id 'c1'. Preview of field's value: 'null'" ||
		item.Error.Cause.Type != "illegal_argument_exception" || item.Error.Cause.Reason != "Vector dimension mismatch. Expected: 3, Given: 2" {
		t.Errorf("dimension mismatch item = %+v (error %+v)", item, item.Error)
	}
	if ok := res.Items[1]["index"]; ok.Status != 201 || ok.Result != "created" {
		t.Errorf("second item = %+v, want created", ok)
	}

	queries := []struct {
		name, body, typ, reason string
	}{
		{"query vector dimension", `{"query":{"knn":{"embedding":{"vector":[1,2],"k":1}}}}`,
			"search_phase_execution_exception", "failed to create query: Query vector has invalid dimension: 2. Dimension should be: 3"},
		{"k and min_score", `{"query":{"knn":{"embedding":{"vector":[1,2,3],"k":1,"min_score":0.5}}}}`,
			"illegal_argument_exception", "[knn] requires exactly one of k, distance or score to be set"},
		{"k too large", `{"query":{"knn":{"embedding":{"vector":[1,2,3],"k":10001}}}}`,
			"illegal_argument_exception", "[knn] requires k to be in the range (0, 10000]"},
		{"unknown knn field", `{"query":{"knn":{"embedding":{"vectr":[1,2,3],"k":1}}}}`,
			"x_content_parse_exception", "[1:31] [knn] unknown field [vectr] did you mean [vector]?"},
		{"not a vector field", `{"query":{"knn":{"kb_id":{"vector":[1,2,3],"k":1}}}}`,
			"search_phase_execution_exception", "failed to create query: Field 'kb_id' is not knn_vector type."},
	}
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			_, err := s.client.Search(ctx(t), &opensearchapi.SearchReq{Indices: []string{"kb"}, Body: strings.NewReader(q.body)})
			se := osErr(t, err, 400, q.typ)
			reason := se.Err.Reason
			if q.typ == "search_phase_execution_exception" {
				if len(se.Err.RootCause) != 1 || se.Err.RootCause[0].Type != "query_shard_exception" {
					t.Fatalf("root_cause = %+v, want one query_shard_exception", se.Err.RootCause)
				}
				reason = se.Err.RootCause[0].Reason
			}
			if reason != q.reason {
				t.Errorf("reason = %q, want %q", reason, q.reason)
			}
		})
	}
}

func TestUnknownParametersAndEndpoints(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex)
	code, body := s.json(t, "POST", "/kb/_search?sise=3", `{}`)
	if e := errorOf(t, body); code != 400 || e["reason"] != "request [/kb/_search] contains unrecognized parameter: [sise] -> did you mean [size]?" {
		t.Errorf("unknown parameter = %d %v", code, e)
	}
	code, body = s.json(t, "POST", "/kb/_search", `{"query":{"match_all":{}},"sizes":3}`)
	if e := errorOf(t, body); code != 400 || e["type"] != "parsing_exception" || e["reason"] != "Unknown key for a VALUE_NUMBER in [sizes]." {
		t.Errorf("unknown body key = %d %v", code, e)
	}
	code, body = s.json(t, "POST", "/kb/_search", `{"query":{"matchall":{}}}`)
	if e := errorOf(t, body); code != 400 || e["type"] != "parsing_exception" || e["reason"] != "unknown query [matchall] did you mean any of [match_all, match]?" {
		t.Errorf("unknown query = %d %v", code, e)
	}
	// The hybrid query's own filter is neural-search 3.0's: 2.19 refuses it as an unknown field.
	code, body = s.json(t, "POST", "/kb/_search", `{"query":{"hybrid":{"queries":[{"match_all":{}}],"filter":{"match_all":{}}}}}`)
	if e := errorOf(t, body); code != 400 || e["type"] != "parsing_exception" || e["reason"] != "[hybrid] query does not support [filter]" {
		t.Errorf("hybrid filter = %d %v", code, e)
	}
	code, body = s.json(t, "POST", "/kb/_search", `{"query":{"match_all":{}},"aggs":{}}`)
	if e := errorOf(t, body); code != 400 || !strings.HasPrefix(e["reason"].(string), "opensearchlocal: ") {
		t.Errorf("out-of-slice key = %d %v", code, e)
	}
	code, body = s.json(t, "GET", "/_cluster/health", "")
	if code != 400 || body["error"] != "no handler found for uri [/_cluster/health] and method [GET]" {
		t.Errorf("out-of-slice endpoint = %d %v", code, body)
	}
	code, body = s.json(t, "DELETE", "/_refresh", "")
	if code != 405 || !strings.Contains(fmt.Sprint(body["error"]), "Incorrect HTTP method") {
		t.Errorf("wrong method = %d %v", code, body)
	}
	code, _ = s.raw(t, "POST", "/kb/_search", "", `{}`)
	if code != 406 {
		t.Errorf("body without Content-Type = %d, want 406", code)
	}
}

func TestStrictDynamicMapping(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "strict", `{"mappings":{"dynamic":"strict","properties":{"a":{"type":"keyword"}}}}`)
	code, body := s.json(t, "POST", "/strict/_doc", `{"a":"x","b":1}`)
	if e := errorOf(t, body); code != 400 || e["type"] != "strict_dynamic_mapping_exception" ||
		e["reason"] != "mapping set to strict, dynamic introduction of [b] within [_doc] is not allowed" {
		t.Errorf("= %d %v", code, e)
	}
	// Dynamic mapping elsewhere: a string becomes text with a keyword sub-field.
	if code, _ := s.json(t, "POST", "/dyn/_doc?refresh=true", `{"title":"Hello World","n":3}`); code != 201 {
		t.Fatalf("auto-create = %d", code)
	}
	for _, q := range []string{`{"query":{"match":{"title":"hello"}}}`, `{"query":{"term":{"title.keyword":"Hello World"}}}`, `{"query":{"term":{"n":"3"}}}`} {
		if n := len(s.search(t, "dyn", q).Hits.Hits); n != 1 {
			t.Errorf("%s: %d hits, want 1", q, n)
		}
	}
}

func TestConcurrentWritesAndSearches(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "c", `{"settings":{"index":{"knn":true,"refresh_interval":"20ms"}},"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2}}}}`)
	var wg sync.WaitGroup
	const writers, perWriter = 4, 25
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				body := fmt.Sprintf("{\"index\":{\"_index\":\"c\",\"_id\":\"%d-%d\"}}\n{\"v\":[%d,%d],\"w\":%d}\n", w, i, w, i, w)
				if _, err := s.client.Bulk(ctx(t), opensearchapi.BulkReq{Body: strings.NewReader(body)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				if _, err := s.client.Search(ctx(t), &opensearchapi.SearchReq{Indices: []string{"c"},
					Body: strings.NewReader(`{"query":{"knn":{"v":{"vector":[1,1],"k":5}}}}`)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	s.refresh(t, "c")
	res, err := s.client.Indices.Count(ctx(t), &opensearchapi.IndicesCountReq{Indices: []string{"c"}})
	if err != nil || res.Count != writers*perWriter {
		t.Fatalf("count = %v, %v; want %d", res, err, writers*perWriter)
	}
}

func TestIndexAPIVersionsAndIDs(t *testing.T) {
	s := newStand(t)
	res, err := s.client.Index(ctx(t), opensearchapi.IndexReq{Index: "v", Body: strings.NewReader(`{"a":1}`)})
	if err != nil || len(res.ID) != 20 || res.Version != 1 || res.Result != "created" || res.SeqNo != 0 {
		t.Fatalf("auto id = %+v, %v; want a 20-character id, version 1, seq_no 0", res, err)
	}
	put := func(body string) *opensearchapi.IndexResp {
		r, err := s.client.Index(ctx(t), opensearchapi.IndexReq{Index: "v", DocumentID: "x", Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := put(`{"a":1}`); r.Version != 1 || r.Result != "created" {
		t.Errorf("first put = %+v", r)
	}
	if r := put(`{"a":2}`); r.Version != 2 || r.Result != "updated" || r.SeqNo != 2 {
		t.Errorf("second put = %+v", r)
	}
	// A delete leaves a tombstone: the id's next version continues from it.
	s.bulk(t, `{"delete":{"_index":"v","_id":"x"}}`+"\n", opensearchapi.BulkParams{})
	if r := put(`{"a":3}`); r.Version != 4 || r.Result != "created" {
		t.Errorf("put after delete = %+v, want version 4 created", r)
	}
	// if_seq_no guards a write.
	_, err = s.client.Index(ctx(t), opensearchapi.IndexReq{Index: "v", DocumentID: "x", Body: strings.NewReader(`{}`),
		Params: opensearchapi.IndexParams{IfSeqNo: new(0), IfPrimaryTerm: new(1)}})
	_ = osErr(t, err, 409, "version_conflict_engine_exception")
}

func TestStandInRejectsOutOfSlice(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "plain", `{"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2}}}}`)
	cases := []struct{ method, path, body, typ, prefix string }{
		{"POST", "/plain/_search", `{"query":{"knn":{"v":{"vector":[1,2],"k":1}}}}`, "search_phase_execution_exception", ""},
		{"POST", "/plain/_search", `{"query":{"range":{"n":{"gte":1}}}}`, "illegal_argument_exception", "opensearchlocal: the [range] query"},
		{"POST", "/plain/_search", `{"query":{"match_all":{}},"sort":["_score"]}`, "illegal_argument_exception", "opensearchlocal: the search body key [sort]"},
		{"PUT", "/n", `{"mappings":{"properties":{"o":{"type":"nested"}}}}`, "mapper_parsing_exception", "Failed to parse mapping [_doc]: opensearchlocal: field type [nested]"},
		{"PUT", "/n", `{"settings":{"analysis":{"analyzer":{"a":{"type":"standard"}}}}}`, "illegal_argument_exception", "opensearchlocal: the index setting [index.analysis"},
		{"POST", "/plain/_delete_by_query?refresh=wait_for", `{"query":{"match_all":{}}}`, "illegal_argument_exception", "Failed to parse value [wait_for] as only [true] or [false] are allowed."},
		{"POST", "/plain/_search?q=x", `{}`, "illegal_argument_exception", "opensearchlocal: the query parameter [q]"},
	}
	for _, c := range cases {
		code, body := s.json(t, c.method, c.path, c.body)
		e := errorOf(t, body)
		reason := fmt.Sprint(e["reason"])
		if rc, ok := e["root_cause"].([]any); ok && c.typ == "search_phase_execution_exception" && len(rc) > 0 {
			reason = fmt.Sprint(rc[0].(map[string]any)["reason"])
			c.prefix = "opensearchlocal: k-NN search on an index without index.knn: true"
		}
		if code != 400 || e["type"] != c.typ || !strings.HasPrefix(reason, c.prefix) {
			t.Errorf("%s %s %s = %d %v %q, want 400 %s %q…", c.method, c.path, c.body, code, e["type"], reason, c.typ, c.prefix)
		}
	}
}
