package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// listLen returns the length of the bare array a list endpoint answers.
func (s *stack) listLen(key, path string) int {
	s.t.Helper()
	var list []any
	if err := json.Unmarshal(s.ok("GET", path, key, nil).body, &list); err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	return len(list)
}

// TestKnowledgeBadInput sends the list of bad input, each of which must answer a clear
// 4xx in the envelope and change nothing: afterwards the company still has exactly the files,
// collections and knowledge base it had, and the collection its files.
func TestKnowledgeBadInput(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	other := s.key("bob", "globex")

	file := s.uploadFile(key, "returns.txt", "text/plain", []byte(returnsPolicy))
	fileID := file["id"].(string)
	foreignFile := s.uploadFile(other, "secret.txt", "text/plain", []byte("globex internal notes"))["id"].(string)
	coll := s.created(key, "/api/v1/collections/", map[string]any{"name": "Support"})
	collID := coll["id"].(string)
	s.ok("POST", "/api/v1/collections/"+collID+"/files/", key, map[string]any{"file_ids": []any{fileID}})
	foreignColl := s.created(other, "/api/v1/collections/", map[string]any{"name": "Globex"})["id"].(string)
	kb := s.created(key, "/api/v1/knowledge-bases/", map[string]any{"name": "KB", "processing_engine": "opensearch",
		"selected_collections": []any{collID}, "embedding_config": map[string]any{"provider": "local"}})
	kbID := kb["id"].(string)
	s.waitKB(key, kbID)
	pending := s.created(key, "/api/v1/files/uploads/", map[string]any{"name": "big.txt", "size": 1000, "media_type": "text/plain"})
	pendingID := pending["file_id"].(string)

	const unknown = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	noFileCT, noFileBody := form(t, formPart{name: "tags", data: []byte("a,b")})
	emptyCT, emptyBody := form(t, formPart{name: "file", filename: "empty.txt", contentType: "text/plain"})
	bigCT, bigBody := form(t, formPart{name: "file", filename: "big.txt", contentType: "text/plain", data: bytes.Repeat([]byte("a"), library.MaxUploadBytes+1)})
	okCT, okBody := form(t, formPart{name: "file", filename: "x.txt", data: []byte("hello")}, formPart{name: "collection_id", data: []byte(foreignColl)})
	kbBody := func(extra map[string]any) map[string]any {
		b := map[string]any{"name": "New KB", "processing_engine": "opensearch", "selected_collections": []any{collID}}
		for k, v := range extra {
			if v == nil {
				delete(b, k)
				continue
			}
			b[k] = v
		}
		return b
	}
	search := "/api/v1/knowledge-bases/" + kbID + "/search/"
	tests := []struct {
		name   string
		r      req
		status int
		field  string // the field errors[0] names, when the answer names one
	}{
		{"upload without a file part", req{method: "POST", path: "/api/v1/files/", body: noFileBody, header: map[string]string{"Content-Type": noFileCT}}, 400, "file"},
		{"upload of an empty file", req{method: "POST", path: "/api/v1/files/", body: emptyBody, header: map[string]string{"Content-Type": emptyCT}}, 400, "file"},
		{"upload over the limit", req{method: "POST", path: "/api/v1/files/", body: bigBody, header: map[string]string{"Content-Type": bigCT}}, 413, ""},
		{"upload as JSON", req{method: "POST", path: "/api/v1/files/", body: `{"file":"aGVsbG8="}`}, 400, "file"},
		{"upload into a foreign collection", req{method: "POST", path: "/api/v1/files/", body: okBody, header: map[string]string{"Content-Type": okCT}}, 404, ""},
		{"complete before the PUT", req{method: "POST", path: "/api/v1/files/" + pendingID + "/complete/"}, 409, ""},
		{"unknown file", req{method: "GET", path: "/api/v1/files/" + unknown + "/"}, 404, ""},
		{"foreign file", req{method: "GET", path: "/api/v1/files/" + foreignFile + "/"}, 404, ""},
		{"malformed file id", req{method: "DELETE", path: "/api/v1/files/not-an-id/"}, 404, ""},
		{"unknown collection", req{method: "GET", path: "/api/v1/collections/" + unknown + "/"}, 404, ""},
		{"foreign collection", req{method: "DELETE", path: "/api/v1/collections/" + foreignColl + "/"}, 404, ""},
		{"malformed collection id", req{method: "POST", path: "/api/v1/collections/x/files/", body: map[string]any{"file_ids": []any{fileID}}}, 404, ""},
		{"file_ids not an array", req{method: "POST", path: "/api/v1/collections/" + collID + "/files/", body: map[string]any{"file_ids": fileID}}, 400, "file_ids"},
		{"file_ids of numbers", req{method: "POST", path: "/api/v1/collections/" + collID + "/bulk/", body: map[string]any{"operation": "remove_files", "file_ids": []any{1, 2}}}, 400, "file_ids"},
		{"unknown collection bulk operation", req{method: "POST", path: "/api/v1/collections/" + collID + "/bulk/", body: map[string]any{"operation": "purge", "file_ids": []any{fileID}}}, 400, "operation"},
		{"unknown file bulk operation", req{method: "POST", path: "/api/v1/files/bulk/", body: map[string]any{"operation": "shred", "file_ids": []any{fileID}}}, 400, "operation"},
		{"file bulk with file_ids not an array", req{method: "POST", path: "/api/v1/files/bulk/", body: map[string]any{"operation": "delete", "file_ids": "all"}}, 400, "file_ids"},
		{"knowledge base without sources", req{method: "POST", path: "/api/v1/knowledge-bases/", body: kbBody(map[string]any{"selected_collections": nil})}, 400, ""},
		{"knowledge base of a foreign collection", req{method: "POST", path: "/api/v1/knowledge-bases/", body: kbBody(map[string]any{"selected_collections": []any{foreignColl}})}, 400, "selected_collections.0"},
		{"knowledge base of a foreign file", req{method: "POST", path: "/api/v1/knowledge-bases/", body: kbBody(map[string]any{"selected_collections": nil, "selected_datasources": []any{foreignFile}})}, 400, "selected_datasources.0"},
		{"another engine", req{method: "POST", path: "/api/v1/knowledge-bases/", body: kbBody(map[string]any{"processing_engine": "milvus"})}, 400, "processing_engine"},
		{"unknown embedding provider", req{method: "POST", path: "/api/v1/knowledge-bases/", body: kbBody(map[string]any{"embedding_config": map[string]any{"provider": "mistral"}})}, 400, "embedding_config.provider"},
		{"dimension the model lacks", req{method: "POST", path: "/api/v1/knowledge-bases/", body: kbBody(map[string]any{"embedding_config": map[string]any{"provider": "local", "dimensions": 256}})}, 400, "embedding_config.dimensions"},
		{"overlap not below the size", req{method: "POST", path: "/api/v1/knowledge-bases/", body: kbBody(map[string]any{"chunking_strategy": map[string]any{"strategy": "recursive", "chunk_size": 50, "chunk_overlap": 50, "split_by": "word"}})}, 400, "chunking_strategy.chunk_overlap"},
		{"size not positive", req{method: "POST", path: "/api/v1/knowledge-bases/", body: kbBody(map[string]any{"chunking_strategy": map[string]any{"chunk_size": 0}})}, 400, "chunking_strategy.chunk_size"},
		{"search with an empty query", req{method: "POST", path: search, body: map[string]any{"query": "  ", "top_k": 3}}, 400, "query"},
		{"search with top_k 0", req{method: "POST", path: search, body: map[string]any{"query": "returns", "top_k": 0}}, 400, "top_k"},
		{"search with top_k too large", req{method: "POST", path: search, body: map[string]any{"query": "returns", "top_k": 101}}, 400, "top_k"},
		{"search of a foreign knowledge base", req{method: "POST", path: "/api/v1/knowledge-bases/" + unknown + "/search/", body: map[string]any{"query": "returns"}}, 404, ""},
		{"list with an unknown status", req{method: "GET", path: "/api/v1/knowledge-bases/?status=done"}, 400, "status"},
		{"list with another engine", req{method: "GET", path: "/api/v1/knowledge-bases/?processing_engine=milvus"}, 400, "processing_engine"},
		{"file list with an unknown type", req{method: "GET", path: "/api/v1/files/?file_type=spreadsheet"}, 400, "file_type"},
		{"collection as text", req{method: "POST", path: "/api/v1/collections/", body: "name: x", header: map[string]string{"Content-Type": "text/plain"}}, 415, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.key = key
			res := s.do(tt.r)
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

	// Nothing changed: the same files (the pending upload included), collection and knowledge base.
	if n := s.listLen(key, "/api/v1/files/"); n != 2 {
		t.Errorf("%d files, want 2 (the upload and the pending one)", n)
	}
	if n := s.listLen(key, "/api/v1/collections/"); n != 1 {
		t.Errorf("%d collections, want 1", n)
	}
	if n := s.listLen(key, "/api/v1/collections/"+collID+"/files/"); n != 1 {
		t.Errorf("the collection has %d files, want 1", n)
	}
	if n := s.listLen(key, "/api/v1/knowledge-bases/"); n != 1 {
		t.Errorf("%d knowledge bases, want 1", n)
	}
	if n := s.listLen(other, "/api/v1/collections/"); n != 1 {
		t.Errorf("globex has %d collections, want 1", n)
	}
	if got := s.ok("GET", "/api/v1/files/"+fileID+"/", key, nil).json(t); got["status"] != "active" {
		t.Errorf("file after the bad input = %v", got)
	}
}

// TestKnowledgePresignedUpload: a large file's way through a presigned PUT to S3 and complete.
func TestKnowledgePresignedUpload(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	data := []byte(strings.Repeat(returnsPolicy, 10))
	up := s.created(key, "/api/v1/files/uploads/", map[string]any{"name": "policy.txt", "size": len(data), "media_type": "text/plain", "tags": []any{"policy"}})
	id, _ := up["file_id"].(string)
	if id == "" || up["method"] != "PUT" || up["upload_url"] == "" {
		t.Fatalf("pending upload = %v", up)
	}
	if got := s.ok("GET", "/api/v1/files/"+id+"/", key, nil).json(t); got["status"] != "uploading" {
		t.Errorf("file before the PUT = %v", got)
	}
	put, err := http.NewRequest(http.MethodPut, up["upload_url"].(string), bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	headers, _ := up["headers"].(map[string]any)
	for k, v := range headers {
		put.Header.Set(k, v.(string))
	}
	res, err := http.DefaultClient.Do(put)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT to the upload URL: %d", res.StatusCode)
	}
	got := s.ok("POST", "/api/v1/files/"+id+"/complete/", key, nil).json(t)
	if got["status"] != "active" || got["size_bytes"] != float64(len(data)) || got["original_filename"] != "policy.txt" || got["media_type"] != "text/plain" {
		t.Errorf("completed file = %v", got)
	}
	if tags, _ := got["tags"].([]any); len(tags) != 1 || tags[0] != "policy" {
		t.Errorf("tags = %v", got["tags"])
	}
	// Only the caller's company sees it; a second complete changes nothing.
	if r := s.do(req{method: "POST", path: "/api/v1/files/" + id + "/complete/", key: s.key("bob", "globex")}); r.status != http.StatusNotFound {
		t.Errorf("complete by another company: %d %s", r.status, r.body)
	}
}

// TestKnowledgeScopes: knowledge:read reads and searches but cannot change anything;
// knowledge:write includes read; keys of other scopes reach none of it. The scopes are known to
// the key API, so keys can be limited to them.
func TestKnowledgeScopes(t *testing.T) {
	s := newStack(t)
	admin := s.key("alice", "acme")
	for _, sc := range []string{domain.ScopeKnowledgeRead, domain.ScopeKnowledgeWrite} {
		res := s.do(req{method: "POST", path: "/api/v1/api-keys/", key: admin, body: map[string]any{"name": sc, "scopes": []any{sc}}})
		if res.status != http.StatusCreated {
			t.Fatalf("create a key with scope %s: %d %s", sc, res.status, res.body)
		}
	}
	reader := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeKnowledgeRead} })
	writer := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeKnowledgeWrite} })
	agentsOnly := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeAgentsWrite} })

	file := s.uploadFile(writer, "returns.txt", "text/plain", []byte(returnsPolicy))
	coll := s.created(writer, "/api/v1/collections/", map[string]any{"name": "c"})
	for _, tt := range []struct {
		key    string
		r      req
		status int
	}{
		{reader, req{method: "GET", path: "/api/v1/files/"}, 200},
		{reader, req{method: "GET", path: "/api/v1/files/" + file["id"].(string) + "/"}, 200},
		{reader, req{method: "GET", path: "/api/v1/collections/" + coll["id"].(string) + "/files/"}, 200},
		{reader, req{method: "GET", path: "/api/v1/knowledge-bases/"}, 200},
		{reader, req{method: "DELETE", path: "/api/v1/files/" + file["id"].(string) + "/"}, 403},
		{reader, req{method: "POST", path: "/api/v1/collections/", body: map[string]any{"name": "x"}}, 403},
		{reader, req{method: "POST", path: "/api/v1/files/bulk/", body: map[string]any{"operation": "delete", "file_ids": []any{file["id"]}}}, 403},
		{reader, req{method: "POST", path: "/api/v1/knowledge-bases/", body: map[string]any{"name": "x", "processing_engine": "opensearch", "selected_collections": []any{coll["id"]}}}, 403},
		{writer, req{method: "GET", path: "/api/v1/collections/"}, 200},
		{agentsOnly, req{method: "GET", path: "/api/v1/files/"}, 403},
		{agentsOnly, req{method: "GET", path: "/api/v1/knowledge-bases/"}, 403},
	} {
		tt.r.key = tt.key
		if res := s.do(tt.r); res.status != tt.status {
			t.Errorf("%s %s: %d, want %d: %s", tt.r.method, tt.r.path, res.status, tt.status, res.body)
		}
	}
	// The file is untouched by the refused delete.
	s.ok("GET", "/api/v1/files/"+file["id"].(string)+"/", reader, nil)
}

// TestKnowledgeHandlersWithoutService: what the handlers refuse before any service call (the
// body's type and size, scopes) is answered in the envelope and documented.
// unreachableKnowledge is a service of the knowledge groups whose every method panics: a handler
// that refuses a request must do so before it calls the feature.
type unreachableKnowledge struct {
	api.FileService
	api.CollectionService
	api.KnowledgeService
}

func TestKnowledgeHandlersWithoutService(t *testing.T) {
	p := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1"}
	readOnly := p
	readOnly.Scopes = []string{domain.ScopeKnowledgeRead}
	opts := api.Options{Auth: openapiAuth{p: p}}
	groups := map[string]*api.Group{
		"/api/v1/files":           api.NewFiles(unreachableKnowledge{}, opts),
		"/api/v1/collections":     api.NewCollections(unreachableKnowledge{}, opts),
		"/api/v1/knowledge-bases": api.NewKnowledge(unreachableKnowledge{}, opts),
	}
	readOnlyFiles := api.NewFiles(unreachableKnowledge{}, api.Options{Auth: openapiAuth{p: readOnly}})
	jsonCT := map[string]string{"Content-Type": "application/json"}
	imageCT, imageBody := form(t, formPart{name: "image", filename: "x.png", data: []byte("x")})
	twoCT, twoBody := form(t, formPart{name: "file", filename: "a.txt", data: []byte("a")}, formPart{name: "file", filename: "b.txt", data: []byte("b")})
	badTagsCT, badTagsBody := form(t, formPart{name: "file", filename: "a.txt", data: []byte("a")}, formPart{name: "tags", data: []byte("a\x00b")})
	hugeCT, hugeBody := form(t, formPart{name: "file", filename: "a.txt", data: bytes.Repeat([]byte("a"), api.FileUploadMaxBodyBytes)})
	const fileID = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	tests := []struct {
		name   string
		group  *api.Group
		method string
		path   string
		header map[string]string
		body   []byte
		status int
	}{
		{"upload needs knowledge:write", readOnlyFiles, "POST", "/api/v1/files/", map[string]string{"Content-Type": twoCT}, twoBody, 403},
		{"delete needs knowledge:write", readOnlyFiles, "DELETE", "/api/v1/files/" + fileID + "/", nil, nil, 403},
		{"upload without a boundary", nil, "POST", "/api/v1/files/", map[string]string{"Content-Type": "multipart/form-data"}, twoBody, 400},
		{"upload of another part", nil, "POST", "/api/v1/files/", map[string]string{"Content-Type": imageCT}, imageBody, 400},
		{"upload of two files", nil, "POST", "/api/v1/files/", map[string]string{"Content-Type": twoCT}, twoBody, 400},
		{"upload with a NUL in tags", nil, "POST", "/api/v1/files/", map[string]string{"Content-Type": badTagsCT}, badTagsBody, 400},
		{"upload above the body limit", nil, "POST", "/api/v1/files/", map[string]string{"Content-Type": hugeCT}, hugeBody, 413},
		{"presigned upload without a size", nil, "POST", "/api/v1/files/uploads/", jsonCT, []byte(`{"name":"a.pdf"}`), 400},
		{"presigned upload with a fractional size", nil, "POST", "/api/v1/files/uploads", jsonCT, []byte(`{"name":"a.pdf","size":1.5}`), 400},
		{"presigned upload with tags of numbers", nil, "POST", "/api/v1/files/uploads/", jsonCT, []byte(`{"name":"a.pdf","size":10,"tags":[1]}`), 400},
		{"bulk as a form", nil, "POST", "/api/v1/files/bulk/", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []byte("operation=delete"), 415},
		{"bulk of an array", nil, "POST", "/api/v1/files/bulk/", jsonCT, []byte(`["delete"]`), 400},
		{"files page too large", nil, "GET", "/api/v1/files/?limit=500", nil, nil, 400},
		{"uploads read", nil, "GET", "/api/v1/files/uploads/", nil, nil, 405},
		{"collection of malformed JSON", nil, "POST", "/api/v1/collections/", jsonCT, []byte(`{"name":`), 400},
		{"collection body too large", nil, "POST", "/api/v1/collections/", jsonCT, []byte(`{"name":"` + strings.Repeat("a", api.DefaultMaxBodyBytes) + `"}`), 413},
		{"collections page at a negative offset", nil, "GET", "/api/v1/collections/?offset=-1", nil, nil, 400},
		{"knowledge base empty body", nil, "POST", "/api/v1/knowledge-bases/", jsonCT, nil, 400},
		{"search as text", nil, "POST", "/api/v1/knowledge-bases/" + fileID + "/search/", map[string]string{"Content-Type": "text/plain"}, []byte("query"), 415},
		{"check_status written", nil, "POST", "/api/v1/knowledge-bases/" + fileID + "/check_status/", nil, nil, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.group
			for prefix, h := range groups {
				if g == nil && strings.HasPrefix(tt.path, prefix) {
					g = h
				}
			}
			r := httptest.NewRequest(tt.method, tt.path, bytes.NewReader(tt.body))
			r.Header.Set("x-api-key", "ak_x")
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			g.ServeHTTP(rec, r)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body.Bytes())
			}
			var env map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env["error"] == nil {
				t.Errorf("not the error envelope: %s", rec.Body.Bytes())
			}
			if len(tt.body) < 1<<20 {
				checkOpenAPI(t, r, tt.body, rec.Code, rec.Header(), rec.Body.Bytes())
			}
		})
	}
}
