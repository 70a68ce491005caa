package opensearchlocal_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
)

func TestBulkRejectsMalformedLines(t *testing.T) {
	s := newStand(t)
	cases := []struct{ name, body, reason string }{
		{"unknown action", "{\"upsert\":{\"_index\":\"a\"}}\n{}\n", "Malformed action/metadata line [1], expected one of [create, delete, index, update] but found [upsert]"},
		{"unknown metadata", "{\"index\":{\"_index\":\"a\",\"_idx\":\"1\"}}\n{}\n", "Action/metadata line [1] contains an unknown parameter [_idx]"},
		{"array action", "[1]\n", "Malformed action/metadata line [1], expected START_OBJECT but found [START_ARRAY]"},
		{"string metadata", "{\"index\":\"a\"}\n{}\n", "Malformed action/metadata line [1], expected START_OBJECT or END_OBJECT but found [VALUE_STRING]"},
		{"no trailing newline", "{\"delete\":{\"_index\":\"a\",\"_id\":\"1\"}}", "The bulk request must be terminated by a newline [\\n]"},
		{"array metadata value", "{\"index\":{\"_index\":[\"a\"]}}\n{}\n", "Malformed action/metadata line [1], expected a simple value for field [_index] but found [START_ARRAY]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := s.raw(t, "POST", "/_bulk", "application/x-ndjson", c.body)
			e := errorOf(t, body)
			if code != 400 || e["type"] != "illegal_argument_exception" || e["reason"] != c.reason {
				t.Errorf("= %d %v %q, want 400 illegal_argument_exception %q", code, e["type"], e["reason"], c.reason)
			}
		})
	}
	code, body := s.raw(t, "POST", "/_bulk", "application/x-ndjson", "{\"index\":{}}\n{}\n")
	if e := errorOf(t, body); code != 400 || e["type"] != "action_request_validation_exception" || e["reason"] != "Validation Failed: 1: index is missing;" {
		t.Errorf("missing index = %d %v", code, e)
	}
}

func TestBulkItems(t *testing.T) {
	s := newStand(t)
	res, err := s.client.Bulk(ctx(t), opensearchapi.BulkReq{Body: strings.NewReader(`{"create":{"_index":"books","_id":"b1"}}
{"title":"To Kill a Mockingbird","year":1960}
{"create":{"_index":"books","_id":"b1"}}
{"title":"again"}
{"update":{"_index":"books","_id":"b1"}}
{"doc":{"pages":376}}
{"update":{"_index":"books","_id":"b1"}}
{"doc":{"pages":376}}
{"update":{"_index":"books","_id":"missing"}}
{"doc":{"pages":1}}
{"delete":{"_index":"books","_id":"nope"}}
{"index":{"_index":"books","_id":"b2"}}
{"year":"not a number"}
`), Params: opensearchapi.BulkParams{Refresh: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	type item struct {
		action, result string
		status         int
		errType        string
		version        int
	}
	var got []item
	for _, it := range res.Items {
		for a, r := range it {
			e := ""
			if r.Error != nil {
				e = r.Error.Type
			}
			got = append(got, item{a, r.Result, r.Status, e, r.Version})
		}
	}
	want := []item{
		{"create", "created", 201, "", 1},
		{"create", "", 409, "version_conflict_engine_exception", 0},
		{"update", "updated", 200, "", 2},
		{"update", "noop", 200, "", 2},
		{"update", "", 404, "document_missing_exception", 0},
		{"delete", "not_found", 404, "", 1},
		{"index", "", 400, "mapper_parsing_exception", 0},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(item{})); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if !res.Errors {
		t.Error("errors = false with failed items")
	}
	hits := s.search(t, "books", `{"query":{"term":{"_id":"b1"}}}`).Hits.Hits
	if len(hits) != 1 || !strings.Contains(string(hits[0].Source), `"pages":376`) {
		t.Errorf("updated document = %v", hits)
	}
}

func TestDeleteByQueryConflictsWithUnrefreshedDeletes(t *testing.T) {
	s := newStand(t)
	s.bulk(t, `{"create":{"_index":"books","_id":"b1"}}
{"title":"To Kill a Mockingbird","year":1960}
{"create":{"_index":"books","_id":"b2"}}
{"title":"Beauty and the Beast","year":1991}
`, opensearchapi.BulkParams{Refresh: "true"})
	res, err := s.client.Document.DeleteByQuery(ctx(t), opensearchapi.DocumentDeleteByQueryReq{Indices: []string{"books"},
		Body: strings.NewReader(`{"query":{"term":{"title":{"value":"BEAUTY","case_insensitive":true}}}}`)})
	if err != nil || res.Total != 1 || res.Deleted != 1 {
		t.Fatalf("first delete-by-query = %+v, %v", res, err)
	}
	// Not refreshed: the search still sees b2, whose delete is then a version conflict.
	res, err = s.client.Document.DeleteByQuery(ctx(t), opensearchapi.DocumentDeleteByQueryReq{Indices: []string{"books"},
		Body: strings.NewReader(`{"query":{"match_all":{}}}`), Params: opensearchapi.DocumentDeleteByQueryParams{Conflicts: "proceed", Refresh: new(true)}})
	if err != nil || res.Total != 2 || res.Deleted != 1 || res.VersionConflicts != 1 {
		t.Fatalf("proceed = %+v, %v; want total 2, deleted 1, 1 conflict", res, err)
	}
	// With the default conflicts=abort the conflict is a 409 that lists it.
	s.bulk(t, `{"index":{"_index":"books","_id":"x"}}
{"title":"x"}
{"index":{"_index":"books","_id":"y"}}
{"title":"y"}
`, opensearchapi.BulkParams{Refresh: "true"})
	s.bulk(t, `{"delete":{"_index":"books","_id":"x"}}`+"\n", opensearchapi.BulkParams{})
	code, body := s.json(t, "POST", "/books/_delete_by_query?refresh=true", `{"query":{"match_all":{}}}`)
	failures, _ := body["failures"].([]any)
	if code != 409 || body["version_conflicts"] != 1.0 || body["deleted"] != 0.0 || len(failures) != 1 ||
		failures[0].(map[string]any)["cause"].(map[string]any)["type"] != "version_conflict_engine_exception" {
		t.Fatalf("conflicts=abort = %d %v, want 409 with the conflict in failures", code, body)
	}
	s.refresh(t, "books")
	if n := s.search(t, "books", `{}`).Hits.Total.Value; n != 1 {
		t.Errorf("%d documents left, want y (abort stopped before it)", n)
	}
}

func TestDeleteByQueryDeletesEverythingMatched(t *testing.T) {
	s := newStand(t)
	s.bulk(t, `{"index":{"_index":"books","_id":"a"}}
{"kb":"1"}
{"index":{"_index":"books","_id":"b"}}
{"kb":"2"}
`, opensearchapi.BulkParams{Refresh: "true"})
	res, err := s.client.Document.DeleteByQuery(ctx(t), opensearchapi.DocumentDeleteByQueryReq{Indices: []string{"books"},
		Body: strings.NewReader(`{"query":{"term":{"kb.keyword":"1"}}}`), Params: opensearchapi.DocumentDeleteByQueryParams{Refresh: new(true)}})
	if err != nil || res.Deleted != 1 {
		t.Fatalf("= %+v, %v", res, err)
	}
	if diff := cmp.Diff([]string{"b"}, hitIDs(s.search(t, "books", `{}`))); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}
