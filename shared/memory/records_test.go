package memory_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
)

// TestRecordLifecycle: a record created through the API is found by the next search (Save
// refreshes: the stand-in here refreshes only when asked), its text changed is found by its new
// words and no longer by its old ones, and once deleted neither the search nor a get finds it.
// The recall path is one k-NN search and one embedding; reads never touch the store.
func TestRecordLifecycle(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	p := keyOf("acme", domain.ScopeMemoryWrite)
	sc := domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "inline:support"}
	r, err := h.svc.CreateRecord(ctx, p, memory.RecordInput{UserID: ptr("alice"), AgentID: ptr("inline:support"),
		Text: ptr("  Alice keeps bees in her garden \n")})
	must(t, err)
	want := &domain.MemoryRecord{ID: r.ID, Company: "acme", UserID: "alice", AgentID: "inline:support", Text: "Alice keeps bees in her garden",
		Source: domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: "key-acme"}, EmbeddingModel: "test-bow", Dimensions: 256,
		CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt}
	if d := cmp.Diff(want, r); d != "" || r.CreatedAt.IsZero() {
		t.Errorf("created (-want +got):\n%s", d)
	}
	got, err := h.svc.GetRecord(ctx, keyOf("acme", domain.ScopeMemoryRead), r.ID)
	must(t, err)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("get (-want +got):\n%s", d)
	}

	h.index.take()
	h.store.Calls = map[string]int{}
	hits, tokens, err := h.svc.Search(ctx, sc, "bees", 5)
	must(t, err)
	if !slices.Equal(texts(hits), []string{"Alice keeps bees in her garden"}) || hits[0].Record.ID != r.ID || tokens != 1 {
		t.Errorf("search bees: %v (%d tokens)", hits, tokens)
	}
	if got := h.index.take(); got["Search"] != 1 || len(got) != 1 {
		t.Errorf("a search's index requests: %v, want one Search", got)
	}
	if len(h.store.Calls) != 0 {
		t.Errorf("a search read the store: %v", h.store.Calls)
	}

	upd, err := h.svc.UpdateRecord(ctx, p, r.ID, memory.RecordUpdate{Text: ptr("Alice keeps goats")})
	must(t, err)
	if upd.Text != "Alice keeps goats" || !upd.UpdatedAt.After(r.UpdatedAt) || !upd.CreatedAt.Equal(r.CreatedAt) {
		t.Errorf("updated: %+v", upd)
	}
	if hits, _, _ := h.svc.Search(ctx, sc, "bees garden", 5); len(hits) != 1 || hits[0].Record.Text != "Alice keeps goats" || hits[0].Score >= 0.9 {
		t.Errorf("after the update, bees garden finds %v", hits)
	}
	if hits, _, _ := h.svc.Search(ctx, sc, "Alice keeps goats", 5); len(hits) != 1 || hits[0].Score < 0.999 {
		t.Errorf("after the update, its new text finds %v", hits)
	}

	must(t, h.svc.DeleteRecord(ctx, p, r.ID))
	if hits, _, _ := h.svc.Search(ctx, sc, "Alice keeps goats", 5); len(hits) != 0 {
		t.Errorf("after delete, search finds %v", texts(hits))
	}
	if _, err := h.svc.GetRecord(ctx, p, r.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if err := h.svc.DeleteRecord(ctx, p, r.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("delete again: %v", err)
	}
}

// TestSaveTakesBackWhatItCannotIndex: a record whose vector cannot be put is not kept (recall
// would never find it), and the error reaches the caller.
func TestSaveTakesBackWhatItCannotIndex(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	h.index.setFail(domain.ErrOverloaded)
	_, err := h.svc.Save(ctx, domain.MemoryScope{Company: "acme", UserID: "alice"}, "Alice likes jazz", domain.MemorySource{Type: domain.MemorySourceTool})
	if !errors.Is(err, domain.ErrOverloaded) {
		t.Errorf("save with the index down: %v, want overloaded", err)
	}
	if rs := h.store.Records(); len(rs) != 0 {
		t.Errorf("records kept: %d", len(rs))
	}
}

// TestPermissions: reads need memory:read (or write), writes memory:write; a refused call
// touches nothing.
func TestPermissions(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	r, err := h.svc.CreateRecord(ctx, keyOf("acme"), memory.RecordInput{UserID: ptr("alice"), Text: ptr("fact")})
	must(t, err)
	b, err := h.svc.CreateBlock(ctx, keyOf("acme"), memory.BlockInput{UserID: ptr("alice"), Label: ptr("human")})
	must(t, err)
	reader, other := keyOf("acme", domain.ScopeMemoryRead), keyOf("acme", domain.ScopeAgentsRead)
	writes := map[string]func(domain.Principal) error{
		"create record": func(p domain.Principal) error {
			_, err := h.svc.CreateRecord(ctx, p, memory.RecordInput{UserID: ptr("alice"), Text: ptr("x")})
			return err
		},
		"update record": func(p domain.Principal) error {
			_, err := h.svc.UpdateRecord(ctx, p, r.ID, memory.RecordUpdate{Text: ptr("x")})
			return err
		},
		"delete record": func(p domain.Principal) error { return h.svc.DeleteRecord(ctx, p, r.ID) },
		"create block": func(p domain.Principal) error {
			_, err := h.svc.CreateBlock(ctx, p, memory.BlockInput{UserID: ptr("alice"), Label: ptr("persona")})
			return err
		},
		"update block": func(p domain.Principal) error {
			_, err := h.svc.UpdateBlock(ctx, p, b.ID, memory.BlockUpdate{Value: ptr("x")})
			return err
		},
		"delete block": func(p domain.Principal) error { return h.svc.DeleteBlock(ctx, p, b.ID) },
		"forget":       func(p domain.Principal) error { _, _, err := h.svc.Forget(ctx, p, "alice"); return err },
	}
	reads := map[string]func(domain.Principal) error{
		"get record": func(p domain.Principal) error { _, err := h.svc.GetRecord(ctx, p, r.ID); return err },
		"list records": func(p domain.Principal) error {
			_, _, err := h.svc.ListRecords(ctx, p, domain.MemoryFilter{}, 0, 10)
			return err
		},
		"get block": func(p domain.Principal) error { _, err := h.svc.GetBlock(ctx, p, b.ID); return err },
		"list blocks": func(p domain.Principal) error {
			_, _, err := h.svc.ListBlocks(ctx, p, domain.MemoryFilter{}, 0, 10)
			return err
		},
	}
	for name, call := range writes {
		for _, p := range []domain.Principal{reader, other} {
			if err := call(p); !errors.Is(err, domain.ErrPermission) {
				t.Errorf("%s with scopes %v: %v, want permission", name, p.Scopes, err)
			}
		}
	}
	for name, call := range reads {
		if err := call(other); !errors.Is(err, domain.ErrPermission) {
			t.Errorf("%s with scopes %v: %v, want permission", name, other.Scopes, err)
		}
		if err := call(reader); err != nil {
			t.Errorf("%s with memory:read: %v", name, err)
		}
		if err := call(keyOf("acme", domain.ScopeMemoryWrite)); err != nil {
			t.Errorf("%s with memory:write: %v", name, err)
		}
	}
	if rs := h.store.Records(); len(rs) != 1 || rs[0].Text != "fact" {
		t.Errorf("after refused writes: %v", rs)
	}
}

// TestRecordValidation: the 400s of record input name their dotted fields.
func TestRecordValidation(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	p := keyOf("acme")
	long := strings.Repeat("é", domain.MaxMemoryTextLength+1)
	cases := []struct {
		name string
		in   memory.RecordInput
		want []string
	}{
		{"nothing", memory.RecordInput{}, []string{"user_id", "text"}},
		{"empty user", memory.RecordInput{UserID: ptr(""), Text: ptr("x")}, []string{"user_id"}},
		{"control character in user", memory.RecordInput{UserID: ptr("a\nb"), Text: ptr("x")}, []string{"user_id"}},
		{"user too long", memory.RecordInput{UserID: ptr(strings.Repeat("u", 257)), Text: ptr("x")}, []string{"user_id"}},
		{"agent too long", memory.RecordInput{UserID: ptr("u"), AgentID: ptr(strings.Repeat("a", 257)), Text: ptr("x")}, []string{"agent_id"}},
		{"control character in agent", memory.RecordInput{UserID: ptr("u"), AgentID: ptr("a\x00"), Text: ptr("x")}, []string{"agent_id"}},
		{"blank text", memory.RecordInput{UserID: ptr("u"), Text: ptr(" \n\t ")}, []string{"text"}},
		{"text too long", memory.RecordInput{UserID: ptr("u"), Text: ptr(long)}, []string{"text"}},
	}
	for _, c := range cases {
		_, err := h.svc.CreateRecord(ctx, p, c.in)
		if d := cmp.Diff(c.want, fieldsOf(err)); d != "" {
			t.Errorf("%s: %v (-want +got fields):\n%s", c.name, err, d)
		}
	}
	// At the limit, after trimming, is fine.
	if _, err := h.svc.CreateRecord(ctx, p, memory.RecordInput{UserID: ptr("u"), Text: ptr(" " + long[2:] + " ")}); err != nil {
		t.Errorf("a text of exactly %d characters: %v", domain.MaxMemoryTextLength, err)
	}
	if _, err := h.svc.UpdateRecord(ctx, p, "nope", memory.RecordUpdate{}); !slices.Equal(fieldsOf(err), []string{"text"}) {
		t.Errorf("update without text: %v", err)
	}
	if _, _, err := h.svc.Forget(ctx, p, ""); !slices.Equal(fieldsOf(err), []string{"user_id"}) {
		t.Errorf("forget without user_id: %v", err)
	}
	if _, _, err := h.svc.ListRecords(ctx, p, domain.MemoryFilter{UserID: "a\tb"}, 0, 10); !slices.Equal(fieldsOf(err), []string{"user_id"}) {
		t.Errorf("list with a bad user_id: %v", err)
	}
	if rs := h.store.Records(); len(rs) != 1 {
		t.Errorf("records stored: %d, want only the valid one", len(rs))
	}
}
