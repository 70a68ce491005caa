package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestCollectionPatch: PATCH /api/v1/collections/{collection_id}/ on the stack (DynamoDB Local,
// routed by template.yaml, every answer checked against the OpenAPI document): it changes the
// fields given and answers the collection as GET does, files kept; a knowledge base built from
// it still names it by id; bad bodies are 400s naming the field, another company's collection a
// 404, a read-only key a 403, and none of them changes anything.
func TestCollectionPatch(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	other := s.key("bob", "globex")
	reader := s.key("rita", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeKnowledgeRead} })

	file := s.uploadFile(key, "returns.txt", "text/plain", []byte(returnsPolicy))
	coll := s.created(key, "/api/v1/collections/", map[string]any{"name": "Support", "description": "answers"})
	id := coll["id"].(string)
	path := "/api/v1/collections/" + id + "/"
	s.ok("POST", path+"files/", key, map[string]any{"file_ids": []any{file["id"]}})
	kb := s.created(key, "/api/v1/knowledge-bases/", map[string]any{"name": "KB", "processing_engine": "opensearch",
		"selected_collections": []any{id}, "embedding_config": map[string]any{"provider": "local"}})
	s.waitKB(key, kb["id"].(string))

	got := s.ok("PATCH", path, key, map[string]any{"name": "  Help desk "}).json(t)
	if got["id"] != id || got["name"] != "Help desk" || got["description"] != "answers" || got["data_source_count"] != 1.0 ||
		len(got["datasources"].([]any)) != 1 || got["created_at"] != coll["created_at"] || got["updated_at"] == coll["updated_at"] {
		t.Errorf("patched = %v", got)
	}
	read := s.ok("GET", path, key, nil).json(t)
	if d := cmpJSON(got, read); d != "" {
		t.Errorf("PATCH's answer and GET differ: %s", d)
	}
	got = s.ok("PATCH", path, key, map[string]any{"description": nil}).json(t)
	if got["name"] != "Help desk" || got["description"] != "" {
		t.Errorf("description null = %v", got)
	}
	// The knowledge base still names the collection by id, and stays as it was.
	kbRead := s.ok("GET", "/api/v1/knowledge-bases/"+kb["id"].(string)+"/", key, nil).json(t)
	if sel, _ := kbRead["selected_collections"].([]any); len(sel) != 1 || sel[0] != id || kbRead["status"] != "completed" {
		t.Errorf("knowledge base after the rename = %v", kbRead)
	}

	for _, tt := range []struct {
		name   string
		r      req
		status int
		field  string
	}{
		{"null name", req{body: map[string]any{"name": nil}}, 400, "name"},
		{"empty name", req{body: map[string]any{"name": ""}}, 400, "name"},
		{"name a number", req{body: map[string]any{"name": 5}}, 400, "name"},
		{"name too long", req{body: map[string]any{"name": strings.Repeat("n", domain.MaxNameLength+1)}}, 400, "name"},
		{"description an array", req{body: map[string]any{"description": []any{"a"}}}, 400, "description"},
		{"unknown field", req{body: map[string]any{"name": "x", "file_ids": []any{}}}, 400, "file_ids"},
		{"not an object", req{body: `["x"]`}, 400, ""},
		{"read-only key", req{key: reader, body: map[string]any{"name": "x"}}, 403, ""},
		{"another company's", req{key: other, body: map[string]any{"name": "x"}}, 404, ""},
		{"unknown id", req{path: "/api/v1/collections/5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f/", body: map[string]any{"name": "x"}}, 404, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.method = "PATCH"
			if r.path == "" {
				r.path = path
			}
			if r.key == "" {
				r.key = key
			}
			res := s.do(r)
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			res.errorType(t)
			if tt.field != "" {
				var env struct {
					Error struct {
						Errors []domain.FieldError `json:"errors"`
					} `json:"error"`
				}
				if err := json.Unmarshal(res.body, &env); err != nil || len(env.Error.Errors) == 0 || env.Error.Errors[0].Field != tt.field {
					t.Errorf("errors = %+v, want field %s first: %s", env.Error.Errors, tt.field, res.body)
				}
			}
		})
	}
	if after := s.ok("GET", path, key, nil).json(t); after["name"] != "Help desk" || after["updated_at"] != got["updated_at"] {
		t.Errorf("after the refused changes: %v", after)
	}
}

// cmpJSON says how two decoded JSON objects differ ("" when they do not).
func cmpJSON(a, b map[string]any) string {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if string(x) == string(y) {
		return ""
	}
	return string(x) + " != " + string(y)
}
