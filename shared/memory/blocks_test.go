package memory_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
)

// TestEditBlock: an edit creates a block that does not exist from its spec, changes one that
// does, refuses a value over the limit (nothing written, the message says to condense), passes
// the edit's own error through, and reads again when another write came between its read and
// its write.
func TestEditBlock(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	sc := domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "inline:support"}
	src := domain.MemorySource{Type: domain.MemorySourceTool, ExecutionID: "x-1", SessionID: "s-1"}
	spec := domain.MemoryBlockSpec{Label: "human", Description: "What you know of the user", Limit: 40}
	appendText := func(s string) func(string) (string, error) {
		return func(old string) (string, error) { return strings.TrimSpace(old + " " + s), nil }
	}
	b, err := h.svc.EditBlock(ctx, sc, spec, src, appendText("Alice."))
	must(t, err)
	if b.Value != "Alice." || b.Limit != 40 || b.Description != spec.Description || b.Source != src || b.Label != "human" {
		t.Errorf("created: %+v", b)
	}
	b, err = h.svc.EditBlock(ctx, sc, domain.MemoryBlockSpec{Label: "human"}, src, appendText("Lives in Lyon."))
	must(t, err)
	if b.Value != "Alice. Lives in Lyon." || b.Limit != 40 {
		t.Errorf("appended: %+v", b)
	}

	_, err = h.svc.EditBlock(ctx, sc, spec, src, appendText("Has two cats and a very old dog."))
	if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), "condense") || !strings.Contains(err.Error(), "limit of 40") {
		t.Errorf("over the limit: %v", err)
	}
	boom := errors.New("old_text does not occur")
	if _, err := h.svc.EditBlock(ctx, sc, spec, src, func(string) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("the edit's error: %v", err)
	}
	bs, err := h.svc.Blocks(ctx, sc)
	must(t, err)
	if len(bs) != 1 || bs[0].Value != "Alice. Lives in Lyon." {
		t.Errorf("after refused edits: %v", bs)
	}

	// Another write between this edit's read and its write: the edit runs again on the new value.
	calls := 0
	b, err = h.svc.EditBlock(ctx, sc, spec, src, func(old string) (string, error) {
		calls++
		if calls == 1 {
			_, err := h.svc.EditBlock(ctx, sc, spec, src, func(string) (string, error) { return "Alice.", nil })
			must(t, err)
		}
		return old + " Bakes.", nil
	})
	must(t, err)
	if calls != 2 || b.Value != "Alice. Bakes." {
		t.Errorf("an edit that met another: %d calls, value %q; want 2, \"Alice. Bakes.\"", calls, b.Value)
	}

	// A label the spec names badly is refused before anything is read.
	h.store.Calls = map[string]int{}
	if _, err := h.svc.EditBlock(ctx, sc, domain.MemoryBlockSpec{Label: "Human!"}, src, appendText("x")); !slices.Equal(fieldsOf(err), []string{"label"}) {
		t.Errorf("bad label: %v", err)
	}
	if len(h.store.Calls) != 0 {
		t.Errorf("a refused edit read the store: %v", h.store.Calls)
	}
	// Blocks is one read of the store.
	if _, err := h.svc.Blocks(ctx, sc); err != nil || h.store.Calls["ScopeMemoryBlocks"] != 1 || len(h.store.Calls) != 1 {
		t.Errorf("blocks: %v, calls %v", err, h.store.Calls)
	}
}

// TestBlockCount: a scope holds at most domain.MaxMemoryBlocks blocks, through the API (400 on
// label) and through edits alike; another scope is not counted.
func TestBlockCount(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	p := keyOf("acme")
	for i := range domain.MaxMemoryBlocks {
		_, err := h.svc.CreateBlock(ctx, p, memory.BlockInput{UserID: ptr("alice"), Label: ptr(fmt.Sprintf("b%d", i))})
		must(t, err)
	}
	_, err := h.svc.CreateBlock(ctx, p, memory.BlockInput{UserID: ptr("alice"), Label: ptr("one_more")})
	if !slices.Equal(fieldsOf(err), []string{"label"}) {
		t.Errorf("one block too many: %v, want a 400 on label", err)
	}
	_, err = h.svc.EditBlock(ctx, domain.MemoryScope{Company: "acme", UserID: "alice"}, domain.MemoryBlockSpec{Label: "one_more"},
		domain.MemorySource{Type: domain.MemorySourceTool}, func(string) (string, error) { return "x", nil })
	if !slices.Equal(fieldsOf(err), []string{"label"}) {
		t.Errorf("an edit creating one block too many: %v", err)
	}
	// An existing block can still be edited, and another agent's scope has room.
	if _, err := h.svc.EditBlock(ctx, domain.MemoryScope{Company: "acme", UserID: "alice"}, domain.MemoryBlockSpec{Label: "b3"},
		domain.MemorySource{Type: domain.MemorySourceTool}, func(string) (string, error) { return "x", nil }); err != nil {
		t.Errorf("editing a block of a full scope: %v", err)
	}
	if _, err := h.svc.CreateBlock(ctx, p, memory.BlockInput{UserID: ptr("alice"), AgentID: ptr("inline:a"), Label: ptr("one_more")}); err != nil {
		t.Errorf("a block of another agent: %v", err)
	}
}

// TestBlockAPI: create with defaults, a taken label is 409, updates check the value against
// the limit (400 on value, or on limit when only the limit was lowered), and the 400s name
// their fields.
func TestBlockAPI(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	p := keyOf("acme")
	b, err := h.svc.CreateBlock(ctx, p, memory.BlockInput{UserID: ptr("alice"), AgentID: ptr("inline:a"), Label: ptr("human"),
		Value: ptr("Alice, 34"), Description: ptr("the user")})
	must(t, err)
	want := &domain.MemoryBlock{ID: b.ID, Company: "acme", UserID: "alice", AgentID: "inline:a", Label: "human", Description: "the user",
		Value: "Alice, 34", Limit: domain.DefaultBlockLimit, Source: domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: "key-acme"},
		CreatedAt: b.CreatedAt, UpdatedAt: b.CreatedAt}
	if d := cmp.Diff(want, b); d != "" {
		t.Errorf("created (-want +got):\n%s", d)
	}
	if _, err := h.svc.CreateBlock(ctx, p, memory.BlockInput{UserID: ptr("alice"), AgentID: ptr("inline:a"), Label: ptr("human")}); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("a taken label: %v, want conflict", err)
	}
	upd, err := h.svc.UpdateBlock(ctx, p, b.ID, memory.BlockUpdate{Value: ptr("Alice, 35"), Limit: ptr(20)})
	must(t, err)
	if upd.Value != "Alice, 35" || upd.Limit != 20 || upd.Description != "the user" || upd.Label != "human" {
		t.Errorf("updated: %+v", upd)
	}
	if _, err := h.svc.UpdateBlock(ctx, p, b.ID, memory.BlockUpdate{Limit: ptr(5)}); !slices.Equal(fieldsOf(err), []string{"limit"}) {
		t.Errorf("a limit under the value: %v", err)
	}
	if _, err := h.svc.UpdateBlock(ctx, p, b.ID, memory.BlockUpdate{Value: ptr(strings.Repeat("x", 21))}); !slices.Equal(fieldsOf(err), []string{"value"}) {
		t.Errorf("a value over the limit: %v", err)
	}
	cases := []struct {
		name string
		in   memory.BlockInput
		want []string
	}{
		{"nothing", memory.BlockInput{}, []string{"user_id", "label"}},
		{"bad label", memory.BlockInput{UserID: ptr("u"), Label: ptr("9lives")}, []string{"label"}},
		{"limit 0", memory.BlockInput{UserID: ptr("u"), Label: ptr("l"), Limit: ptr(0)}, []string{"limit"}},
		{"limit too high", memory.BlockInput{UserID: ptr("u"), Label: ptr("l"), Limit: ptr(domain.MaxBlockLimit + 1)}, []string{"limit"}},
		{"value over the limit", memory.BlockInput{UserID: ptr("u"), Label: ptr("l"), Limit: ptr(3), Value: ptr("four")}, []string{"value"}},
		{"description too long", memory.BlockInput{UserID: ptr("u"), Label: ptr("l"),
			Description: ptr(strings.Repeat("d", domain.MaxBlockDescriptionLength+1))}, []string{"description"}},
		{"agent *", memory.BlockInput{UserID: ptr("u"), AgentID: ptr("*"), Label: ptr("l")}, []string{"agent_id"}},
	}
	for _, c := range cases {
		_, err := h.svc.CreateBlock(ctx, p, c.in)
		if d := cmp.Diff(c.want, fieldsOf(err)); d != "" {
			t.Errorf("%s: %v (-want +got fields):\n%s", c.name, err, d)
		}
	}
	must(t, h.svc.DeleteBlock(ctx, p, b.ID))
	if _, err := h.svc.GetBlock(ctx, p, b.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
}
