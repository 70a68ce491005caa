package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
)

// The memory group over a fake service: statuses, views (checked against the OpenAPI document
// by send), the error envelope with the decoder's field paths, the scopes, and the list filters
// as the service is handed them. The service's own rules are memory's tests'.

// The service the group is wired to implements what the handlers call.
var _ api.MemoryService = (*memory.Service)(nil)

// fakeMemory keeps records and blocks per company and what each list and forget was asked.
// It checks no scope: a 403 here is the handler's.
type fakeMemory struct {
	mu       sync.Mutex
	n        int
	records  []*domain.MemoryRecord
	blocks   []*domain.MemoryBlock
	filters  []domain.MemoryFilter
	forgot   []string
	failNext error
}

var fakeMemoryNow = time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)

func (f *fakeMemory) id() string {
	f.n++
	return fmt.Sprintf("0193a1f0-0000-7000-8000-%012d", f.n)
}

func (f *fakeMemory) CreateRecord(_ context.Context, p domain.Principal, in memory.RecordInput) (*domain.MemoryRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.UserID == nil {
		return nil, domain.Invalid([]domain.FieldError{{Field: "user_id", Message: "is required"}})
	}
	r := &domain.MemoryRecord{ID: f.id(), Company: p.Company, UserID: *in.UserID, AgentID: deref(in.AgentID), Text: deref(in.Text),
		Source: domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: p.KeyID}, EmbeddingModel: "local/use-lite-glove", Dimensions: 612,
		CreatedAt: fakeMemoryNow, UpdatedAt: fakeMemoryNow}
	f.records = append(f.records, r)
	return r, nil
}

func (f *fakeMemory) GetRecord(_ context.Context, p domain.Principal, id string) (*domain.MemoryRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.records {
		if r.ID == id && r.Company == p.Company {
			return r, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (f *fakeMemory) ListRecords(_ context.Context, p domain.Principal, flt domain.MemoryFilter, offset, limit int) ([]*domain.MemoryRecord, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, flt)
	var out []*domain.MemoryRecord
	for _, r := range f.records {
		if r.Company == p.Company && (flt.UserID == "" || r.UserID == flt.UserID) && (!flt.AgentSet || r.AgentID == flt.AgentID) {
			out = append(out, r)
		}
	}
	items, more := page(out, offset, limit)
	return items, more, nil
}

func (f *fakeMemory) UpdateRecord(ctx context.Context, p domain.Principal, id string, in memory.RecordUpdate) (*domain.MemoryRecord, error) {
	r, err := f.GetRecord(ctx, p, id)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failNext; err != nil {
		f.failNext = nil
		return nil, err
	}
	r.Text = deref(in.Text)
	r.UpdatedAt = fakeMemoryNow.Add(time.Minute)
	return r, nil
}

func (f *fakeMemory) DeleteRecord(ctx context.Context, p domain.Principal, id string) error {
	if _, err := f.GetRecord(ctx, p, id); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = slices.DeleteFunc(f.records, func(r *domain.MemoryRecord) bool { return r.ID == id })
	return nil
}

func (f *fakeMemory) CreateBlock(_ context.Context, p domain.Principal, in memory.BlockInput) (*domain.MemoryBlock, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.blocks {
		if b.Company == p.Company && b.UserID == deref(in.UserID) && b.AgentID == deref(in.AgentID) && b.Label == deref(in.Label) {
			return nil, domain.Errorf(domain.KindConflict, "The scope already has a block labelled %q", b.Label)
		}
	}
	limit := domain.DefaultBlockLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	b := &domain.MemoryBlock{ID: f.id(), Company: p.Company, UserID: deref(in.UserID), AgentID: deref(in.AgentID), Label: deref(in.Label),
		Description: deref(in.Description), Value: deref(in.Value), Limit: limit,
		Source: domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: p.KeyID}, CreatedAt: fakeMemoryNow, UpdatedAt: fakeMemoryNow}
	f.blocks = append(f.blocks, b)
	return b, nil
}

func (f *fakeMemory) GetBlock(_ context.Context, p domain.Principal, id string) (*domain.MemoryBlock, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.blocks {
		if b.ID == id && b.Company == p.Company {
			return b, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (f *fakeMemory) ListBlocks(_ context.Context, p domain.Principal, flt domain.MemoryFilter, offset, limit int) ([]*domain.MemoryBlock, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, flt)
	var out []*domain.MemoryBlock
	for _, b := range f.blocks {
		if b.Company == p.Company && (flt.UserID == "" || b.UserID == flt.UserID) && (!flt.AgentSet || b.AgentID == flt.AgentID) {
			out = append(out, b)
		}
	}
	items, more := page(out, offset, limit)
	return items, more, nil
}

func (f *fakeMemory) UpdateBlock(ctx context.Context, p domain.Principal, id string, in memory.BlockUpdate) (*domain.MemoryBlock, error) {
	b, err := f.GetBlock(ctx, p, id)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.Value != nil {
		b.Value = *in.Value
	}
	if in.Description != nil {
		b.Description = *in.Description
	}
	if in.Limit != nil {
		b.Limit = *in.Limit
	}
	return b, nil
}

func (f *fakeMemory) DeleteBlock(ctx context.Context, p domain.Principal, id string) error {
	if _, err := f.GetBlock(ctx, p, id); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocks = slices.DeleteFunc(f.blocks, func(b *domain.MemoryBlock) bool { return b.ID == id })
	return nil
}

func (f *fakeMemory) Forget(_ context.Context, p domain.Principal, userID string) (int, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgot = append(f.forgot, userID)
	n := len(f.records)
	f.records = slices.DeleteFunc(f.records, func(r *domain.MemoryRecord) bool { return r.Company == p.Company && r.UserID == userID })
	m := len(f.blocks)
	f.blocks = slices.DeleteFunc(f.blocks, func(b *domain.MemoryBlock) bool { return b.Company == p.Company && b.UserID == userID })
	return n - len(f.records), m - len(f.blocks), nil
}

func memoryStack(t *testing.T) (*stack, *fakeMemory) {
	t.Helper()
	s, f := newFakeStack(t)
	mem := &fakeMemory{}
	g := api.NewMemory(mem, api.Options{Auth: fakeAuth{f}, Log: slog.New(slog.DiscardHandler)})
	rest := s.mux
	s.mux = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/memory") {
			g.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
	return s, mem
}

func TestMemoryHandlers(t *testing.T) {
	s, mem := memoryStack(t)
	key := s.key("alice", "acme")
	do := func(r req) response {
		t.Helper()
		r.key = key
		return s.do(r)
	}
	res := do(req{method: "POST", path: "/api/v1/memory/records/", body: map[string]any{"user_id": "u-1", "agent_id": "agent-a", "text": "Likes tea"}})
	if res.status != http.StatusCreated {
		t.Fatalf("create record: %d %s", res.status, res.body)
	}
	rec := res.json(t)
	id, _ := rec["id"].(string)
	want := map[string]any{"id": id, "user_id": "u-1", "agent_id": "agent-a", "text": "Likes tea", "embedding_model": "local/use-lite-glove",
		"source":     map[string]any{"type": "api", "execution_id": nil, "session_id": nil, "key_id": rec["source"].(map[string]any)["key_id"]},
		"created_at": "2026-11-27T13:00:00Z", "updated_at": "2026-11-27T13:00:00Z"}
	if diff := cmp.Diff(want, rec); diff != "" || rec["source"].(map[string]any)["key_id"] == nil {
		t.Errorf("record view (-want +got):\n%s", diff)
	}
	// A shared record (no agent_id) shows agent_id null.
	res = do(req{method: "POST", path: "/api/v1/memory/records/", body: "user_id: u-1\ntext: Lives in Lyon\n",
		header: map[string]string{"Content-Type": "application/yaml"}})
	if m := res.json(t); res.status != 201 || m["agent_id"] != nil || !hasKey(m, "agent_id") {
		t.Errorf("shared record: %d %s", res.status, res.body)
	}
	do(req{method: "POST", path: "/api/v1/memory/records/", body: `{"user_id":"u-2","agent_id":"agent-a","text":"Other user"}`})

	res = do(req{method: "GET", path: "/api/v1/memory/records/?user_id=u-1&limit=1"})
	var list []map[string]any
	if err := json.Unmarshal(res.body, &list); err != nil || res.status != 200 || len(list) != 1 || list[0]["id"] != id {
		t.Errorf("list page: %d %s", res.status, res.body)
	}
	if link := res.header.Get("Link"); !strings.Contains(link, "offset=1") || !strings.Contains(link, "user_id=u-1") {
		t.Errorf("Link = %q", link)
	}
	res = do(req{method: "GET", path: "/api/v1/memory/records/" + id + "/"})
	if m := res.json(t); res.status != 200 || m["text"] != "Likes tea" {
		t.Errorf("get: %d %s", res.status, res.body)
	}
	res = do(req{method: "PATCH", path: "/api/v1/memory/records/" + id + "/", body: `{"text":"Likes green tea"}`})
	if m := res.json(t); res.status != 200 || m["text"] != "Likes green tea" || m["updated_at"] != "2026-11-27T13:01:00Z" {
		t.Errorf("patch: %d %s", res.status, res.body)
	}
	res = do(req{method: "DELETE", path: "/api/v1/memory/records/" + id + "/"})
	if res.status != http.StatusNoContent || len(res.body) != 0 {
		t.Errorf("delete: %d %s", res.status, res.body)
	}
	if res = do(req{method: "GET", path: "/api/v1/memory/records/" + id + "/"}); res.status != 404 {
		t.Errorf("get after delete: %d", res.status)
	}

	res = do(req{method: "POST", path: "/api/v1/memory/blocks/", body: map[string]any{"user_id": "u-1", "label": "human", "value": "Name: Sam", "limit": 100}})
	if res.status != 201 {
		t.Fatalf("create block: %d %s", res.status, res.body)
	}
	blk := res.json(t)
	bid, _ := blk["id"].(string)
	if blk["label"] != "human" || blk["value"] != "Name: Sam" || blk["limit"] != 100.0 || blk["agent_id"] != nil || blk["description"] != "" {
		t.Errorf("block view: %s", res.body)
	}
	if res = do(req{method: "POST", path: "/api/v1/memory/blocks/", body: `{"user_id":"u-1","label":"human"}`}); res.status != 409 || res.header.Get("Retry-After") != "1" {
		t.Errorf("a second block of the label: %d %s", res.status, res.body)
	}
	res = do(req{method: "PATCH", path: "/api/v1/memory/blocks/" + bid + "/", body: `{"value":"Name: Sam. Plan: premium.","description":"The user"}`})
	if m := res.json(t); res.status != 200 || m["value"] != "Name: Sam. Plan: premium." || m["description"] != "The user" || m["limit"] != 100.0 {
		t.Errorf("patch block: %d %s", res.status, res.body)
	}
	res = do(req{method: "GET", path: "/api/v1/memory/blocks/?user_id=u-1&shared=true"})
	if err := json.Unmarshal(res.body, &list); err != nil || res.status != 200 || len(list) != 1 || list[0]["id"] != bid {
		t.Errorf("list blocks: %d %s", res.status, res.body)
	}

	// Forget: what it deleted, then nothing; another user's memory stays.
	res = do(req{method: "DELETE", path: "/api/v1/memory/?user_id=u-1"})
	if diff := cmp.Diff(map[string]any{"user_id": "u-1", "records_deleted": 1.0, "blocks_deleted": 1.0}, res.json(t)); res.status != 200 || diff != "" {
		t.Errorf("forget: %d %s", res.status, diff)
	}
	res = do(req{method: "DELETE", path: "/api/v1/memory/?user_id=u-1"})
	if diff := cmp.Diff(map[string]any{"user_id": "u-1", "records_deleted": 0.0, "blocks_deleted": 0.0}, res.json(t)); res.status != 200 || diff != "" {
		t.Errorf("forget again: %d %s", res.status, diff)
	}
	res = do(req{method: "GET", path: "/api/v1/memory/records/"})
	if err := json.Unmarshal(res.body, &list); err != nil || len(list) != 1 || list[0]["user_id"] != "u-2" {
		t.Errorf("after forgetting u-1: %s", res.body)
	}
	if !slices.Equal(mem.forgot, []string{"u-1", "u-1"}) {
		t.Errorf("forgot %q", mem.forgot)
	}
	if res = do(req{method: "GET", path: "/api/v1/memory/blocks/" + bid + "/"}); res.status != 404 {
		t.Errorf("block after forget: %d", res.status)
	}
	if res := s.do(req{method: "GET", path: "/api/v1/memory/records/" + list[0]["id"].(string) + "/", key: s.key("bob", "globex")}); res.status != 404 {
		t.Errorf("another company's record: %d %s", res.status, res.body)
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// TestMemoryFilters: the list's query is handed to the service as a domain.MemoryFilter, and a
// filter that cannot be is a 400 naming its parameter before the service is asked.
func TestMemoryFilters(t *testing.T) {
	s, mem := memoryStack(t)
	key := s.key("alice", "acme")
	for _, tc := range []struct {
		query string
		want  domain.MemoryFilter
		field string // a 400 naming it
	}{
		{"", domain.MemoryFilter{}, ""},
		{"user_id=u-1", domain.MemoryFilter{UserID: "u-1"}, ""},
		{"user_id=customer%2042%20%C3%A9", domain.MemoryFilter{UserID: "customer 42 é"}, ""},
		{"agent_id=agent-a", domain.MemoryFilter{AgentID: "agent-a", AgentSet: true}, ""},
		{"user_id=u-1&agent_id=inline%3Asupport", domain.MemoryFilter{UserID: "u-1", AgentID: "inline:support", AgentSet: true}, ""},
		{"shared=true", domain.MemoryFilter{AgentSet: true}, ""},
		{"user_id=u-1&shared=1", domain.MemoryFilter{UserID: "u-1", AgentSet: true}, ""},
		{"shared=false", domain.MemoryFilter{}, ""},
		{"user_id=", domain.MemoryFilter{}, "user_id"},
		{"user_id=a%00b", domain.MemoryFilter{}, "user_id"},
		{"user_id=" + strings.Repeat("x", 257), domain.MemoryFilter{}, "user_id"},
		{"agent_id=", domain.MemoryFilter{}, "agent_id"},
		{"agent_id=" + strings.Repeat("x", 257), domain.MemoryFilter{}, "agent_id"},
		{"agent_id=a&shared=true", domain.MemoryFilter{}, "shared"},
		{"shared=maybe", domain.MemoryFilter{}, "shared"},
		{"limit=0", domain.MemoryFilter{}, "limit"},
	} {
		for _, kind := range []string{"records", "blocks"} {
			t.Run(kind+"?"+tc.query, func(t *testing.T) {
				mem.filters = nil
				res := s.do(req{method: "GET", path: "/api/v1/memory/" + kind + "/?" + tc.query, key: key})
				if tc.field != "" {
					if res.status != 400 || firstField(t, res) != tc.field || len(mem.filters) != 0 {
						t.Errorf("%d %s, want 400 on %s before the service (asked %v)", res.status, res.body, tc.field, mem.filters)
					}
					return
				}
				if res.status != 200 {
					t.Fatalf("%d %s", res.status, res.body)
				}
				if diff := cmp.Diff([]domain.MemoryFilter{tc.want}, mem.filters); diff != "" {
					t.Errorf("filters (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func firstField(t *testing.T, res response) string {
	t.Helper()
	errs, _ := res.json(t)["error"].(map[string]any)["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	f, _ := errs[0].(map[string]any)["field"].(string)
	return f
}

// TestMemoryRefusals: bodies of the wrong shape are 400s in the envelope naming the dotted
// field, from the one decoder; the service's own 400 comes through as it is; forget needs a
// user; the scopes are memory:read and memory:write.
func TestMemoryRefusals(t *testing.T) {
	s, mem := memoryStack(t)
	key := s.key("alice", "acme")
	res := s.do(req{method: "POST", path: "/api/v1/memory/records/", key: key, body: `{"user_id":"u-1","text":"Likes tea"}`})
	if res.status != 201 {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	id, _ := res.json(t)["id"].(string)
	res = s.do(req{method: "POST", path: "/api/v1/memory/blocks/", key: key, body: `{"user_id":"u-1","label":"human"}`})
	bid, _ := res.json(t)["id"].(string)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		field, message           string
	}{
		{"user_id a number", "POST", "/api/v1/memory/records/", `{"user_id":5,"text":"x"}`, 400, "user_id", "must be a string, got a number"},
		{"unknown field", "POST", "/api/v1/memory/records/", `{"user_id":"u","text":"x","score":1}`, 400, "score", ""},
		{"service's own", "POST", "/api/v1/memory/records/", `{"text":"x"}`, 400, "user_id", "is required"},
		{"text an object", "PATCH", "/api/v1/memory/records/" + id + "/", `{"text":{"a":1}}`, 400, "text", ""},
		{"limit a string", "POST", "/api/v1/memory/blocks/", `{"user_id":"u","label":"x","limit":"5"}`, 400, "limit", ""},
		{"limit a fraction", "PATCH", "/api/v1/memory/blocks/" + bid + "/", `{"limit":1.5}`, 400, "limit", ""},
		{"label on a patch", "PATCH", "/api/v1/memory/blocks/" + bid + "/", `{"label":"other"}`, 400, "label", ""},
		{"not an object", "POST", "/api/v1/memory/blocks/", `["x"]`, 400, "", ""},
		{"form body", "POST", "/api/v1/memory/records/", "", 415, "", ""},
		{"forget without user", "DELETE", "/api/v1/memory/", "", 400, "user_id", ""},
		{"forget an empty user", "DELETE", "/api/v1/memory/?user_id=", "", 400, "user_id", ""},
		{"forget a bad user", "DELETE", "/api/v1/memory/?user_id=%07", "", 400, "user_id", ""},
		{"unknown record", "GET", "/api/v1/memory/records/0193a1f0-0000-7000-8000-999999999999/", "", 404, "", ""},
		{"unknown block", "DELETE", "/api/v1/memory/blocks/nope/", "", 404, "", ""},
		{"GET of forget", "GET", "/api/v1/memory/", "", 405, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := req{method: tc.method, path: tc.path, key: key}
			if tc.body != "" {
				r.body = tc.body
			}
			if tc.status == 415 {
				r.body, r.header = "user_id=u", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
			}
			res := s.do(r)
			if res.status != tc.status {
				t.Fatalf("%d %s, want %d", res.status, res.body, tc.status)
			}
			res.errorType(t)
			if tc.field != "" && firstField(t, res) != tc.field {
				t.Errorf("%s: want the first field %q", res.body, tc.field)
			}
			if tc.message != "" && !strings.Contains(string(res.body), tc.message) {
				t.Errorf("%s: want %q", res.body, tc.message)
			}
		})
	}
	if len(mem.forgot) != 0 {
		t.Errorf("forget refused yet the service was asked: %q", mem.forgot)
	}
	mem.failNext = domain.Errorf(domain.KindConflict, "The record was changed concurrently")
	if res := s.do(req{method: "PATCH", path: "/api/v1/memory/records/" + id + "/", key: key, body: `{"text":"y"}`}); res.status != 409 {
		t.Errorf("a concurrent change: %d %s", res.status, res.body)
	}

	scoped := func(scopes ...string) string {
		return s.key("carol", "acme", func(k *auth.NewKey) { k.Scopes = scopes })
	}
	read, write, other := scoped(domain.ScopeMemoryRead), scoped(domain.ScopeMemoryWrite), scoped(domain.ScopeSessionsWrite, domain.ScopeKnowledgeWrite)
	admin := scoped(domain.ScopeAdmin)
	names := map[string]string{read: "memory:read", write: "memory:write", other: "sessions:write knowledge:write", admin: "admin"}
	rec := "/api/v1/memory/records/" + id + "/"
	blk := "/api/v1/memory/blocks/" + bid + "/"
	for _, tc := range []struct {
		key, method, path, body string
		status                  int
	}{
		{read, "GET", "/api/v1/memory/records/", "", 200},
		{read, "GET", rec, "", 200},
		{read, "GET", "/api/v1/memory/blocks/?user_id=u-1", "", 200},
		{read, "GET", blk, "", 200},
		{read, "POST", "/api/v1/memory/records/", `{"user_id":"u-1","text":"x"}`, 403},
		{read, "PATCH", rec, `{"text":"x"}`, 403},
		{read, "DELETE", rec, "", 403},
		{read, "POST", "/api/v1/memory/blocks/", `{"user_id":"u-1","label":"x"}`, 403},
		{read, "PATCH", blk, `{"value":"x"}`, 403},
		{read, "DELETE", blk, "", 403},
		{read, "DELETE", "/api/v1/memory/?user_id=u-1", "", 403},
		{other, "GET", "/api/v1/memory/records/", "", 403},
		{other, "GET", blk, "", 403},
		{other, "DELETE", "/api/v1/memory/?user_id=u-1", "", 403},
		{write, "GET", rec, "", 200},
		{write, "PATCH", blk, `{"value":"x"}`, 200},
		{admin, "POST", "/api/v1/memory/records/", `{"user_id":"u-1","text":"x"}`, 201},
		{write, "DELETE", "/api/v1/memory/?user_id=u-9", "", 200},
	} {
		r := req{method: tc.method, path: tc.path, key: tc.key}
		if tc.body != "" {
			r.body = tc.body
		}
		res := s.do(r)
		if res.status != tc.status {
			t.Errorf("%s %s with %s: %d %s, want %d", tc.method, tc.path, names[tc.key], res.status, res.body, tc.status)
		}
		if tc.status == 403 {
			if typ, _ := res.errorType(t); typ != "permission_error" {
				t.Errorf("%s %s: error type %s", tc.method, tc.path, typ)
			}
		}
	}
}
