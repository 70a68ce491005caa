package opensearchlocal_test

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
)

// send makes a request with plain net/http and returns the status, the headers and the raw body.
func (s *stand) send(t *testing.T, method, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// TestHeadAnswersAreJSON: OpenSearch answers HEAD with the headers of its JSON answer and no
// body (the spec's tester checks the content type of _core/info and indices/index HEADs).
func TestHeadAnswersAreJSON(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex)
	for _, c := range []struct {
		path   string
		status int
	}{{"/", 200}, {"/kb", 200}, {"/nope", 404}, {"/kb?ignore_unavailable=true&cluster_manager_timeout=10s", 200}} {
		code, h, body := s.send(t, "HEAD", c.path, "")
		if code != c.status || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || body != "" {
			t.Errorf("HEAD %s = %d, Content-Type %q, body %q; want %d, application/json, no body", c.path, code, h.Get("Content-Type"), body, c.status)
		}
	}
}

// TestSizeZeroHasNoMaxScore: a search that returns no hits (size 0) answers max_score null, as
// OpenSearch does (_core/search/size.yaml), even when documents matched with scores.
func TestSizeZeroHasNoMaxScore(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex)
	s.bulk(t, `{"index":{"_index":"kb","_id":"a"}}
{"kb_id":"kb1","text":"brown fox","embedding":[1,0,0]}
{"index":{"_index":"kb","_id":"b"}}
{"kb_id":"kb1","text":"brown dog","embedding":[0,1,0]}
`, opensearchapi.BulkParams{Refresh: "true"})
	for _, c := range []struct {
		body string
		want any
	}{
		{`{"size":0,"query":{"match":{"text":"fox"}}}`, nil},
		{`{"size":0,"from":1,"query":{"knn":{"embedding":{"vector":[1,0,0],"k":2}}}}`, nil},
		{`{"size":1,"query":{"match_all":{}}}`, 1.0},
	} {
		code, body := s.json(t, "POST", "/kb/_search", c.body)
		hits, _ := body["hits"].(map[string]any)
		total, _ := hits["total"].(map[string]any)
		if code != 200 || total["value"] == 0.0 {
			t.Fatalf("%s = %d %v", c.body, code, body)
		}
		if got, ok := hits["max_score"]; !ok || got != c.want {
			t.Errorf("%s: max_score = %v (present %v), want %v", c.body, got, ok, c.want)
		}
	}
}

// TestUnknownRouteHasNoHandler: a route the stand-in does not serve answers as OpenSearch
// answers a route it has no handler for; a known path with another method answers 405.
func TestUnknownRouteHasNoHandler(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex)
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/_cluster/health", `{"error":"no handler found for uri [/_cluster/health] and method [GET]"}`},
		{"POST", "/kb/_update/1?refresh=true", `{"error":"no handler found for uri [/kb/_update/1?refresh=true] and method [POST]"}`},
		{"GET", "/a/b/c/d/e", `{"error":"no handler found for uri [/a/b/c/d/e] and method [GET]"}`},
	} {
		code, h, body := s.send(t, c.method, c.path, "")
		if code != 400 || strings.TrimSpace(body) != c.want || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s = %d %s; want 400 %s", c.method, c.path, code, body, c.want)
		}
	}
	code, h, body := s.send(t, "PATCH", "/kb/_doc/1", "")
	var got struct {
		Error  string `json:"error"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("PATCH /kb/_doc/1 = %d %s: %v", code, body, err)
	}
	allowed, ok := strings.CutPrefix(got.Error, "Incorrect HTTP method for uri [/kb/_doc/1] and method [PATCH], allowed: [")
	methods := strings.Split(strings.TrimSuffix(allowed, "]"), ", ")
	sort.Strings(methods)
	if code != 405 || got.Status != 405 || !ok || !cmp.Equal(methods, []string{"DELETE", "GET", "HEAD", "POST", "PUT"}) || h.Get("Allow") == "" {
		t.Errorf("PATCH /kb/_doc/1 = %d %s (Allow %q); want 405 allowing DELETE, GET, HEAD, POST, PUT", code, body, h.Get("Allow"))
	}
}

// TestDocumentGetHeadDelete serves the document APIs at /{index}/_doc/{id} with OpenSearch's
// shapes: GET is real-time (no refresh needed) and returns _source as it was sent.
func TestDocumentGetHeadDelete(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", kbIndex)
	// (Insignificant whitespace inside _source comes back compacted: encoding/json compacts
	// embedded raw JSON. The vector's digits come back as sent.)
	src := `{"kb_id":"kb1","text":"brown fox","embedding":[0.5,0.25,-1.000]}`
	if code, _ := s.json(t, "PUT", "/kb/_doc/d1", src); code != 201 {
		t.Fatalf("PUT = %d", code)
	}
	code, _, body := s.send(t, "GET", "/kb/_doc/d1", "")
	want := `{"_index":"kb","_id":"d1","_version":1,"_seq_no":0,"_primary_term":1,"found":true,"_source":` + src + `}`
	if code != 200 || strings.TrimSpace(body) != want {
		t.Errorf("GET found = %d %s\nwant 200 %s", code, body, want)
	}
	code, _, body = s.send(t, "GET", "/kb/_doc/d1?_source_excludes=embedding", "")
	if want := `{"_index":"kb","_id":"d1","_version":1,"_seq_no":0,"_primary_term":1,"found":true,"_source":{"kb_id":"kb1","text":"brown fox"}}`; code != 200 || strings.TrimSpace(body) != want {
		t.Errorf("GET _source_excludes = %d %s\nwant 200 %s", code, body, want)
	}
	code, _, body = s.send(t, "GET", "/kb/_doc/d1?_source=false", "")
	if want := `{"_index":"kb","_id":"d1","_version":1,"_seq_no":0,"_primary_term":1,"found":true}`; code != 200 || strings.TrimSpace(body) != want {
		t.Errorf("GET _source=false = %d %s\nwant 200 %s", code, body, want)
	}
	code, _, body = s.send(t, "GET", "/kb/_doc/zz", "")
	if want := `{"_index":"kb","_id":"zz","found":false}`; code != 404 || strings.TrimSpace(body) != want {
		t.Errorf("GET missing = %d %s, want 404 %s", code, body, want)
	}
	code, _, body = s.send(t, "GET", "/nope/_doc/zz", "")
	if code != 404 || !strings.Contains(body, "index_not_found_exception") {
		t.Errorf("GET in a missing index = %d %s", code, body)
	}
	for _, c := range []struct {
		path   string
		status int
	}{{"/kb/_doc/d1", 200}, {"/kb/_doc/zz", 404}, {"/nope/_doc/d1", 404}} {
		if code, _, body := s.send(t, "HEAD", c.path, ""); code != c.status || body != "" {
			t.Errorf("HEAD %s = %d %q, want %d and no body", c.path, code, body, c.status)
		}
	}

	code, body2 := s.json(t, "DELETE", "/kb/_doc/d1?refresh=true", "")
	wantDel := map[string]any{"_index": "kb", "_id": "d1", "_version": 2.0, "result": "deleted", "forced_refresh": true,
		"_shards": map[string]any{"total": 2.0, "successful": 1.0, "failed": 0.0}, "_seq_no": 1.0, "_primary_term": 1.0}
	if diff := cmp.Diff(wantDel, body2); code != 200 || diff != "" {
		t.Errorf("DELETE = %d (-want +got):\n%s", code, diff)
	}
	code, body2 = s.json(t, "DELETE", "/kb/_doc/d1", "")
	if code != 404 || body2["result"] != "not_found" || body2["_version"] != 3.0 {
		t.Errorf("DELETE again = %d %v, want 404 not_found, version 3", code, body2)
	}
	code, body2 = s.json(t, "DELETE", "/nope/_doc/d1", "")
	if e := errorOf(t, body2); code != 404 || e["type"] != "index_not_found_exception" {
		t.Errorf("DELETE in a missing index = %d %v", code, body2)
	}
	if code, _ := s.json(t, "HEAD", "/nope", ""); code != 404 {
		t.Errorf("a delete created the missing index: HEAD /nope = %d", code)
	}
	if res := s.search(t, "kb", `{"query":{"match_all":{}}}`); len(res.Hits.Hits) != 0 {
		t.Errorf("deleted document still found: %v", hitIDs(res))
	}
	code, _, body = s.send(t, "GET", "/kb/_doc/d1", "")
	if code != 404 || !strings.Contains(body, `"found":false`) {
		t.Errorf("GET deleted = %d %s", code, body)
	}
}
