package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
)

// fakeKnowledge stands for the knowledge feature behind the files, collections and
// knowledge-bases groups: it records the typed input a handler decoded and answers with a
// fixed result, so these tests check the edge alone (decoding, statuses, encoding).
type fakeKnowledge struct {
	got  any    // the last input passed in
	id   string // the last path id passed in
	bulk []library.BulkItem
}

var errFakeNotFound = domain.Errorf(domain.KindNotFound, "not in the fake")

func (f *fakeKnowledge) Upload(context.Context, domain.Principal, library.Upload) (*domain.File, error) {
	return nil, errFakeNotFound
}

func (f *fakeKnowledge) StartUpload(context.Context, domain.Principal, library.StartUpload) (*library.PendingUpload, error) {
	return nil, errFakeNotFound
}

func (f *fakeKnowledge) CompleteUpload(context.Context, domain.Principal, string) (*domain.File, error) {
	return nil, errFakeNotFound
}

func (f *fakeKnowledge) ListFiles(context.Context, domain.Principal, library.FileFilter) ([]*domain.File, bool, error) {
	return nil, false, errFakeNotFound
}

func (f *fakeKnowledge) GetFile(context.Context, domain.Principal, string) (*domain.File, error) {
	return nil, errFakeNotFound
}

func (f *fakeKnowledge) DeleteFile(context.Context, domain.Principal, string) error {
	return errFakeNotFound
}

func (f *fakeKnowledge) BulkFiles(_ context.Context, _ domain.Principal, in library.FileBulkInput) ([]library.BulkItem, error) {
	f.got = in
	return f.bulk, nil
}

func (f *fakeKnowledge) CreateCollection(_ context.Context, _ domain.Principal, in library.CollectionInput) (*library.Collection, error) {
	f.got = in
	return &library.Collection{Collection: &domain.Collection{ID: "c1", Name: deref(in.Name)}}, nil
}

func (f *fakeKnowledge) ListCollections(context.Context, domain.Principal, int, int) ([]*library.Collection, bool, error) {
	return nil, false, errFakeNotFound
}

func (f *fakeKnowledge) GetCollection(context.Context, domain.Principal, string) (*library.Collection, error) {
	return nil, errFakeNotFound
}

func (f *fakeKnowledge) UpdateCollection(_ context.Context, _ domain.Principal, id string, in library.CollectionUpdate) (*library.Collection, error) {
	f.got, f.id = in, id
	return &library.Collection{Collection: &domain.Collection{ID: id, Name: in.Name.Value}}, nil
}

func (f *fakeKnowledge) DeleteCollection(context.Context, domain.Principal, string) error {
	return errFakeNotFound
}

func (f *fakeKnowledge) CollectionFiles(context.Context, domain.Principal, string, int, int) ([]*domain.File, bool, error) {
	return nil, false, errFakeNotFound
}

func (f *fakeKnowledge) AddFiles(_ context.Context, _ domain.Principal, id string, in library.FileIDsInput) ([]library.BulkItem, error) {
	f.got, f.id = in, id
	items := make([]library.BulkItem, len(in.FileIDs))
	for i, id := range in.FileIDs {
		items[i] = library.BulkItem{FileID: id, Status: library.ItemSucceeded}
	}
	return items, nil
}

func (f *fakeKnowledge) BulkCollection(_ context.Context, _ domain.Principal, id string, in library.CollectionBulkInput) ([]library.BulkItem, error) {
	f.got, f.id = in, id
	return f.bulk, nil
}

func (f *fakeKnowledge) CreateKB(_ context.Context, _ domain.Principal, in knowledge.KBInput) (*knowledge.KB, error) {
	f.got = in
	return &knowledge.KB{KnowledgeBase: &domain.KnowledgeBase{ID: "kb1", Name: deref(in.Name)}}, nil
}

func (f *fakeKnowledge) ListKBs(context.Context, domain.Principal, knowledge.KBFilter) ([]*knowledge.KB, bool, error) {
	return nil, false, errFakeNotFound
}

func (f *fakeKnowledge) GetKB(context.Context, domain.Principal, string) (*knowledge.KB, error) {
	return nil, errFakeNotFound
}

func (f *fakeKnowledge) DeleteKB(context.Context, domain.Principal, string) error {
	return errFakeNotFound
}

func (f *fakeKnowledge) CheckStatus(context.Context, domain.Principal, string) (*knowledge.KBStatus, error) {
	return nil, errFakeNotFound
}

func (f *fakeKnowledge) SyncKB(context.Context, domain.Principal, string) (*knowledge.KB, error) {
	return nil, errFakeNotFound
}

func (f *fakeKnowledge) Search(_ context.Context, _ domain.Principal, id string, in knowledge.SearchInput) ([]domain.Hit, error) {
	f.got, f.id = in, id
	return []domain.Hit{{FileID: "f1", Text: deref(in.Query), Score: 0.5}}, nil
}

func (f *fakeKnowledge) Chunks(_ context.Context, _ domain.Principal, id string, in knowledge.ChunksInput) ([]knowledge.Chunk, bool, error) {
	f.got, f.id = in, id
	return nil, false, errFakeNotFound
}

// TestKnowledgeEdgeDecodes: each body the knowledge groups read reaches the feature as its
// typed input, from JSON and from YAML alike, and the feature's result is what the client
// reads.
func TestKnowledgeEdgeDecodes(t *testing.T) {
	p := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1"}
	opts := api.Options{Auth: openapiAuth{p: p}}
	f := &fakeKnowledge{bulk: []library.BulkItem{{FileID: "a", Status: library.ItemSucceeded}, {FileID: "b", Status: library.ItemSucceeded}}}
	groups := map[string]http.Handler{
		"/api/v1/files/":           api.NewFiles(f, opts),
		"/api/v1/collections/":     api.NewCollections(f, opts),
		"/api/v1/knowledge-bases/": api.NewKnowledge(f, opts),
	}
	size, provider := 200.0, " local "
	tests := []struct {
		name, path, contentType, body string
		status                        int
		// want holds the exported fields of the input the feature must get (see inputFields).
		want   map[string]any
		wantID string
		answer string // a substring of the response body
	}{
		{"file bulk in YAML", "/api/v1/files/bulk/", "application/yaml", "operation: update_tags\nfile_ids: [a, b]\nparameters: {tags: [x, y]}\n", 200,
			map[string]any{"Operation": "update_tags", "FileIDs": []string{"a", "b"}, "Tags": []string{"x", "y"}, "Status": ""}, "", `"processed":2`},
		{"file bulk change_status", "/api/v1/files/bulk/", "application/json", `{"operation":"change_status","file_ids":["a"],"parameters":{"status":"archived"}}`, 200,
			map[string]any{"Operation": "change_status", "FileIDs": []string{"a"}, "Tags": []string(nil), "Status": "archived"}, "", `"success":true`},
		{"collection", "/api/v1/collections/", "", `{"name":"Support","description":"d"}`, 201,
			map[string]any{"Name": "Support", "Description": "d"}, "", `"name":"Support"`},
		{"add files", "/api/v1/collections/c9/files/", "application/json", `{"file_ids":["a","b","a"]}`, 200,
			map[string]any{"FileIDs": []string{"a", "b", "a"}}, "c9", `"added":3`},
		{"collection bulk", "/api/v1/collections/c9/bulk/", "application/json", `{"operation":"remove_files","file_ids":["b"]}`, 200,
			map[string]any{"Operation": "remove_files", "FileIDs": []string{"b"}}, "c9", `"file_id":"a"`},
		{"knowledge base", "/api/v1/knowledge-bases/", "application/json",
			`{"name":"KB","collection_ids":["c9"],"selected_datasources":["f1"],"embedding_config":{"provider":" local "},"chunking_strategy":{"chunk_size":200,"split_by":"word"}}`, 201,
			map[string]any{"Name": "KB", "Collections": []string(nil), "CollectionIDs": []string{"c9"}, "Datasources": []string{"f1"},
				"Embedding": &knowledge.EmbeddingInput{Provider: &provider},
				"Chunking":  &knowledge.ChunkingInput{ChunkSize: &size, SplitBy: domain.Some("word")}}, "", `"id":"kb1"`},
		{"search", "/api/v1/knowledge-bases/kb9/search/", "application/json", `{"query":"refunds","top_k":3,"strategy":"bm25"}`, 200,
			map[string]any{"Query": "refunds", "TopK": 3.0, "Strategy": "bm25", "Filter": (*knowledge.SearchFilter)(nil)}, "kb9", `"text":"refunds"`},
		{"malformed JSON", "/api/v1/files/bulk/", "application/json", `{"operation":`, 400, nil, "", `"invalid_request_error"`},
		{"not an object", "/api/v1/knowledge-bases/", "application/json", `["KB"]`, 400, nil, "", "must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.got, f.id = nil, ""
			r := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(tt.body))
			r.Header.Set("X-API-Key", "k")
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			w := httptest.NewRecorder()
			for prefix, h := range groups {
				if strings.HasPrefix(tt.path, prefix) {
					h.ServeHTTP(w, r)
				}
			}
			if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.answer) {
				t.Fatalf("status %d, body %s; want %d with %s", w.Code, w.Body, tt.status, tt.answer)
			}
			if tt.want == nil {
				if f.got != nil {
					t.Errorf("the feature was called with %+v", f.got)
				}
				return
			}
			if d := cmp.Diff(tt.want, inputFields(f.got)); d != "" {
				t.Errorf("input (-want +got):\n%s", d)
			}
			if f.id != tt.wantID {
				t.Errorf("path id %q, want %q", f.id, tt.wantID)
			}
		})
	}
}

// inputFields lists the exported fields of a typed input (the shape errors a body left are the
// feature's to report, and are checked in its tests).
func inputFields(in any) map[string]any {
	switch v := in.(type) {
	case library.FileBulkInput:
		var p library.FileBulkParams
		if v.Parameters != nil {
			p = *v.Parameters
		}
		return map[string]any{"Operation": deref(v.Operation), "FileIDs": v.FileIDs, "Tags": p.Tags.Value, "Status": p.Status.Value}
	case library.CollectionInput:
		return map[string]any{"Name": deref(v.Name), "Description": v.Description}
	case library.FileIDsInput:
		return map[string]any{"FileIDs": v.FileIDs}
	case library.CollectionBulkInput:
		return map[string]any{"Operation": deref(v.Operation), "FileIDs": v.FileIDs}
	case knowledge.KBInput:
		return map[string]any{"Name": deref(v.Name), "Collections": derefs(v.Collections), "CollectionIDs": derefs(v.CollectionIDs),
			"Datasources": derefs(v.Datasources), "Embedding": v.Embedding, "Chunking": v.Chunking}
	case knowledge.SearchInput:
		var topK any
		if v.TopK != nil {
			topK = *v.TopK
		}
		return map[string]any{"Query": deref(v.Query), "TopK": topK, "Strategy": deref(v.Strategy), "Filter": v.Filter}
	}
	return map[string]any{"unexpected": in}
}

// derefs is the strings of a list of ids (nil for nil).
func derefs(list []*string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = deref(p)
	}
	return out
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
