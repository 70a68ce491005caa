package memorytest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
)

var _ memory.Store = (*Store)(nil)

// StoreSuite holds a memory.Store to the port's contract. newStore may return the same store
// for every subtest: each works in companies of its own.
func StoreSuite(t *testing.T, newStore func(*testing.T) memory.Store) {
	t.Run("Records", func(t *testing.T) { suiteRecords(t, newStore(t)) })
	t.Run("RecordLists", func(t *testing.T) { suiteRecordLists(t, newStore(t)) })
	t.Run("Blocks", func(t *testing.T) { suiteBlocks(t, newStore(t)) })
	t.Run("BlockScopes", func(t *testing.T) { suiteBlockScopes(t, newStore(t)) })
	t.Run("Forget", func(t *testing.T) { suiteForget(t, newStore(t)) })
	t.Run("ReadAfterWrite", func(t *testing.T) { ReadAfterWrite(t, newStore(t)) })
}

// ReadAfterWrite holds st to reading its own writes at once: an item created a moment ago is
// found by id, changed and deleted (what the API does right after a POST), a scope's blocks
// and a user's list show the last write, and forgetting a user deletes what was just written.
// Only the company-wide lists may lag. An adapter over a replica that has seen none of the
// writes (no index caught up, no eventually consistent read) passes it too; an id of a record
// is no block and an id of a block no record.
func ReadAfterWrite(t *testing.T, st memory.Store) {
	ctx := ctxOf(t)
	co := company()
	agent := uuid.NewString()
	r := newRecord(co, "alice", agent, "likes tea", 1)
	must(t, st.CreateMemoryRecord(ctx, r))
	got, err := st.GetMemoryRecord(ctx, co, r.ID)
	must(t, err)
	if d := gocmp.Diff(r, got); d != "" {
		t.Errorf("record read at once after create (-want +got):\n%s", d)
	}
	_, err = st.GetMemoryBlock(ctx, co, r.ID)
	wantKind(t, "a record's id read as a block", err, domain.KindNotFound)
	upd := *r
	upd.Text, upd.UpdatedAt = "likes green tea", at(2)
	must(t, st.UpdateMemoryRecord(ctx, &upd, r))
	if got, err = st.GetMemoryRecord(ctx, co, r.ID); err != nil || got.Text != upd.Text {
		t.Errorf("record read at once after update: %v, %v", got, err)
	}
	rs, _, err := st.ListMemoryRecords(ctx, co, domain.MemoryFilter{UserID: "alice"}, 0, 10)
	must(t, err)
	if len(rs) != 1 || rs[0].Text != upd.Text {
		t.Errorf("alice's records at once after the update: %v", rs)
	}
	must(t, st.DeleteMemoryRecord(ctx, &upd))
	_, err = st.GetMemoryRecord(ctx, co, r.ID)
	wantKind(t, "record read at once after delete", err, domain.KindNotFound)

	b := newBlock(co, "alice", agent, "human", 3)
	must(t, st.CreateMemoryBlock(ctx, b))
	gb, err := st.GetMemoryBlock(ctx, co, b.ID)
	must(t, err)
	if d := gocmp.Diff(b, gb); d != "" {
		t.Errorf("block read at once after create (-want +got):\n%s", d)
	}
	_, err = st.GetMemoryRecord(ctx, co, b.ID)
	wantKind(t, "a block's id read as a record", err, domain.KindNotFound)
	sc := domain.MemoryScope{Company: co, UserID: "alice", AgentID: agent}
	ub := *b
	ub.Value, ub.UpdatedAt = "Alice, a baker", at(4)
	must(t, st.UpdateMemoryBlock(ctx, &ub, b))
	bs, err := st.ScopeMemoryBlocks(ctx, sc)
	must(t, err)
	if len(bs) != 1 || bs[0].Value != ub.Value {
		t.Errorf("the scope's blocks at once after an update: %v", bs)
	}
	if gb, err = st.GetMemoryBlock(ctx, co, b.ID); err != nil || gb.Value != ub.Value {
		t.Errorf("block read at once after update: %v, %v", gb, err)
	}
	must(t, st.DeleteMemoryBlock(ctx, &ub))
	_, err = st.GetMemoryBlock(ctx, co, b.ID)
	wantKind(t, "block read at once after delete", err, domain.KindNotFound)
	if bs, err = st.ScopeMemoryBlocks(ctx, sc); err != nil || len(bs) != 0 {
		t.Errorf("the scope's blocks at once after delete: %v, %v", bs, err)
	}

	r2, b2 := newRecord(co, "carol", "", "fresh", 5), newBlock(co, "carol", "", "human", 6)
	must(t, st.CreateMemoryRecord(ctx, r2))
	must(t, st.CreateMemoryBlock(ctx, b2))
	records, blocks, err := st.ForgetMemoryUser(ctx, co, "carol")
	must(t, err)
	if records != 1 || blocks != 1 {
		t.Errorf("forget carol at once after her writes: %d records, %d blocks; want 1, 1", records, blocks)
	}
	_, err = st.GetMemoryRecord(ctx, co, r2.ID)
	wantKind(t, "a forgotten user's record by id", err, domain.KindNotFound)
	_, err = st.GetMemoryBlock(ctx, co, b2.ID)
	wantKind(t, "a forgotten user's block by id", err, domain.KindNotFound)
	// Nothing of them is left: the same items can be created again (same ids, same label).
	must(t, st.CreateMemoryRecord(ctx, r2))
	must(t, st.CreateMemoryBlock(ctx, b2))
	// A taken id is a conflict, in another scope too.
	wantKind(t, "a record of a taken id", st.CreateMemoryRecord(ctx, newRecordID(r2.ID, co, "dave", "", 8)), domain.KindConflict)
}

func newRecordID(id, co, user, agent string, i int) *domain.MemoryRecord {
	r := newRecord(co, user, agent, "same id", i)
	r.ID = id
	return r
}

// at is a time with nanoseconds, as the service's clock gives them.
func at(i int) time.Time {
	return time.Date(2026, 11, 27, 13, 0, i, 123456789, time.UTC)
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func company() string { return "co-" + uuid.NewString()[:8] }

func newRecord(co, user, agent, text string, i int) *domain.MemoryRecord {
	return &domain.MemoryRecord{ID: uuid.Must(uuid.NewV7()).String(), Company: co, UserID: user, AgentID: agent, Text: text,
		Source:         domain.MemorySource{Type: domain.MemorySourceTool, ExecutionID: "x-1", SessionID: "s-1"},
		EmbeddingModel: "use-lite-glove", Dimensions: 612, CreatedAt: at(i), UpdatedAt: at(i)}
}

func newBlock(co, user, agent, label string, i int) *domain.MemoryBlock {
	return &domain.MemoryBlock{ID: uuid.Must(uuid.NewV7()).String(), Company: co, UserID: user, AgentID: agent, Label: label,
		Description: "about " + label, Value: "value of " + label, Limit: 2000,
		Source: domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: "k-1"}, CreatedAt: at(i), UpdatedAt: at(i)}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantKind(t *testing.T, what string, err error, k domain.Kind) {
	t.Helper()
	if domain.KindOf(err) != k || err == nil {
		t.Errorf("%s: got %v (kind %v), want kind %v", what, err, domain.KindOf(err), k)
	}
}

func suiteRecords(t *testing.T, st memory.Store) {
	ctx := ctxOf(t)
	co, other := company(), company()
	r := newRecord(co, "user#1", "", "likes tea", 1)
	must(t, st.CreateMemoryRecord(ctx, r))
	got, err := st.GetMemoryRecord(ctx, co, r.ID)
	must(t, err)
	if d := gocmp.Diff(r, got); d != "" {
		t.Errorf("get after create (-want +got):\n%s", d)
	}
	_, err = st.GetMemoryRecord(ctx, other, r.ID)
	wantKind(t, "get from another company", err, domain.KindNotFound)
	_, err = st.GetMemoryRecord(ctx, co, uuid.NewString())
	wantKind(t, "get unknown", err, domain.KindNotFound)

	upd := *r
	upd.Text, upd.UpdatedAt = "likes green tea", at(2)
	must(t, st.UpdateMemoryRecord(ctx, &upd, r))
	stale := upd
	stale.Text = "lost"
	wantKind(t, "update over a stale read", st.UpdateMemoryRecord(ctx, &stale, r), domain.KindConflict)
	got, err = st.GetMemoryRecord(ctx, co, r.ID)
	must(t, err)
	if got.Text != "likes green tea" || !got.UpdatedAt.Equal(at(2)) {
		t.Errorf("after update: %q at %v", got.Text, got.UpdatedAt)
	}
	ghost := newRecord(co, "user#1", "", "never stored", 3)
	wantKind(t, "update of a missing record", st.UpdateMemoryRecord(ctx, ghost, ghost), domain.KindNotFound)
	foreign := upd
	foreign.Company = other
	wantKind(t, "update as another company", st.UpdateMemoryRecord(ctx, &foreign, &foreign), domain.KindNotFound)

	must(t, st.DeleteMemoryRecord(ctx, &upd))
	_, err = st.GetMemoryRecord(ctx, co, r.ID)
	wantKind(t, "get after delete", err, domain.KindNotFound)
	must(t, st.DeleteMemoryRecord(ctx, &upd)) // again: nothing to do
}

// ids are the ids of records, in order.
func ids[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, v := range items {
		out[i] = id(v)
	}
	return out
}

func recordID(r *domain.MemoryRecord) string { return r.ID }
func blockID(b *domain.MemoryBlock) string   { return b.ID }

func suiteRecordLists(t *testing.T, st memory.Store) {
	ctx := ctxOf(t)
	co, other := company(), company()
	agentX, agentY := uuid.NewString(), "inline:support#bot" // a UUID, and an id with a # in it
	var ax, ashared, ay, bx []string
	add := func(c, user, agent string, into *[]string) {
		r := newRecord(c, user, agent, fmt.Sprintf("%s of %s", user, agent), len(ax)+len(ay))
		must(t, st.CreateMemoryRecord(ctx, r))
		if into != nil {
			*into = append(*into, r.ID)
		}
	}
	for range 3 {
		add(co, "alice", agentX, &ax)
	}
	add(co, "alice", "", &ashared)
	add(co, "alice", agentY, &ay)
	add(co, "alice", "shared", nil) // an agent named "shared" is not the shared scope
	add(co, "bob", agentX, &bx)
	add(other, "alice", agentX, nil)
	add(co, "alice#x", "", nil) // a user id with a # that extends another's is another user

	list := func(f domain.MemoryFilter, offset, limit int) ([]string, bool) {
		t.Helper()
		rs, more, err := st.ListMemoryRecords(ctx, co, f, offset, limit)
		must(t, err)
		return ids(rs, recordID), more
	}
	got, _ := list(domain.MemoryFilter{UserID: "alice", AgentID: agentX, AgentSet: true}, 0, 10)
	if d := gocmp.Diff(ax, got); d != "" {
		t.Errorf("alice's records of agent X, oldest first (-want +got):\n%s", d)
	}
	got, _ = list(domain.MemoryFilter{UserID: "alice", AgentSet: true}, 0, 10)
	if d := gocmp.Diff(ashared, got); d != "" {
		t.Errorf("alice's shared records (-want +got):\n%s", d)
	}
	got, _ = list(domain.MemoryFilter{UserID: "alice", AgentID: agentY, AgentSet: true}, 0, 10)
	if d := gocmp.Diff(ay, got); d != "" {
		t.Errorf("alice's records of agent %s (-want +got):\n%s", agentY, d)
	}
	got, _ = list(domain.MemoryFilter{UserID: "alice"}, 0, 10)
	if len(got) != 6 || !subset(ax, got) || !subset(ashared, got) || !subset(ay, got) {
		t.Errorf("alice's records: got %d %v, want her 6", len(got), got)
	}
	got, _ = list(domain.MemoryFilter{AgentID: agentX, AgentSet: true}, 0, 10)
	if d := gocmp.Diff(append(slices.Clone(ax), bx...), got); d != "" {
		t.Errorf("the company's records of agent X, oldest first (-want +got):\n%s", d)
	}
	all, _ := list(domain.MemoryFilter{}, 0, 100)
	if len(all) != 8 || !slices.IsSorted(all) {
		t.Errorf("the company's records: got %d %v, want 8 oldest first", len(all), all)
	}
	// Pages: offset and limit, and whether more follow.
	var paged []string
	for off := 0; ; off += 3 {
		p, more := list(domain.MemoryFilter{UserID: "alice"}, off, 3)
		paged = append(paged, p...)
		if !more {
			break
		}
		if len(p) != 3 {
			t.Fatalf("a page of %d with more after it", len(p))
		}
	}
	whole, more := list(domain.MemoryFilter{UserID: "alice"}, 0, 6)
	if d := gocmp.Diff(whole, paged); d != "" || more {
		t.Errorf("alice's records in pages of 3 differ from one page (more %v) (-one +pages):\n%s", more, d)
	}
	if p, more := list(domain.MemoryFilter{}, 8, 5); len(p) != 0 || more {
		t.Errorf("past the end: %v, more %v", p, more)
	}
	rs, _, err := st.ListMemoryRecords(ctx, other, domain.MemoryFilter{}, 0, 10)
	must(t, err)
	if len(rs) != 1 || rs[0].Company != other {
		t.Errorf("the other company's records: %v", ids(rs, recordID))
	}
}

func subset(want, got []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

func suiteBlocks(t *testing.T, st memory.Store) {
	ctx := ctxOf(t)
	co, other := company(), company()
	agent := uuid.NewString()
	b := newBlock(co, "alice", agent, "human", 1)
	must(t, st.CreateMemoryBlock(ctx, b))
	got, err := st.GetMemoryBlock(ctx, co, b.ID)
	must(t, err)
	if d := gocmp.Diff(b, got); d != "" {
		t.Errorf("get after create (-want +got):\n%s", d)
	}
	_, err = st.GetMemoryBlock(ctx, other, b.ID)
	wantKind(t, "get from another company", err, domain.KindNotFound)

	wantKind(t, "a second block labelled human in the scope", st.CreateMemoryBlock(ctx, newBlock(co, "alice", agent, "human", 2)), domain.KindConflict)
	// The same label elsewhere is another block.
	for _, o := range []*domain.MemoryBlock{newBlock(co, "alice", "", "human", 3), newBlock(co, "bob", agent, "human", 4),
		newBlock(co, "alice", uuid.NewString(), "human", 5), newBlock(other, "alice", agent, "human", 6)} {
		must(t, st.CreateMemoryBlock(ctx, o))
	}

	upd := *b
	upd.Value, upd.UpdatedAt = "Alice, a baker in Lyon", at(7)
	must(t, st.UpdateMemoryBlock(ctx, &upd, b))
	stale := upd
	stale.Value = "lost"
	wantKind(t, "update over a stale read", st.UpdateMemoryBlock(ctx, &stale, b), domain.KindConflict)
	got, err = st.GetMemoryBlock(ctx, co, b.ID)
	must(t, err)
	if got.Value != upd.Value {
		t.Errorf("after update: %q", got.Value)
	}
	must(t, st.DeleteMemoryBlock(ctx, &upd))
	_, err = st.GetMemoryBlock(ctx, co, b.ID)
	wantKind(t, "get after delete", err, domain.KindNotFound)
	// The label is free again.
	must(t, st.CreateMemoryBlock(ctx, newBlock(co, "alice", agent, "human", 8)))
}

func suiteBlockScopes(t *testing.T, st memory.Store) {
	ctx := ctxOf(t)
	co := company()
	agent := uuid.NewString()
	sc := domain.MemoryScope{Company: co, UserID: "alice", AgentID: agent}
	for i, l := range []string{"persona", "human", "plans"} {
		must(t, st.CreateMemoryBlock(ctx, newBlock(co, "alice", agent, l, i)))
	}
	must(t, st.CreateMemoryBlock(ctx, newBlock(co, "alice", "", "shared_notes", 4)))
	must(t, st.CreateMemoryBlock(ctx, newBlock(co, "alice", "x"+agent, "other_agent", 5)))
	must(t, st.CreateMemoryBlock(ctx, newBlock(co, "bob", agent, "bobs", 6)))
	must(t, st.CreateMemoryBlock(ctx, newBlock(company(), "alice", agent, "other_company", 7)))
	must(t, st.CreateMemoryRecord(ctx, newRecord(co, "alice", agent, "a record is no block", 8)))

	labels := func(sc domain.MemoryScope) []string {
		t.Helper()
		bs, err := st.ScopeMemoryBlocks(ctx, sc)
		must(t, err)
		return ids(bs, func(b *domain.MemoryBlock) string { return b.Label })
	}
	if d := gocmp.Diff([]string{"human", "persona", "plans"}, labels(sc)); d != "" {
		t.Errorf("the agent's blocks of alice, label order (-want +got):\n%s", d)
	}
	if d := gocmp.Diff([]string{"shared_notes"}, labels(domain.MemoryScope{Company: co, UserID: "alice"})); d != "" {
		t.Errorf("alice's shared blocks (-want +got):\n%s", d)
	}
	if got := labels(domain.MemoryScope{Company: co, UserID: "carol", AgentID: agent}); len(got) != 0 {
		t.Errorf("a user without blocks: %v", got)
	}
	bs, more, err := st.ListMemoryBlocks(ctx, co, domain.MemoryFilter{UserID: "alice"}, 0, 10)
	must(t, err)
	if len(bs) != 5 || more {
		t.Errorf("alice's blocks: %d, more %v; want 5", len(bs), more)
	}
	bs, _, err = st.ListMemoryBlocks(ctx, co, domain.MemoryFilter{AgentID: agent, AgentSet: true}, 0, 10)
	must(t, err)
	if got := ids(bs, blockID); len(got) != 4 || !slices.IsSorted(got) {
		t.Errorf("the company's blocks of the agent: %d, want 4 oldest first", len(got))
	}
	bs, more, err = st.ListMemoryBlocks(ctx, co, domain.MemoryFilter{}, 1, 2)
	must(t, err)
	if len(bs) != 2 || !more {
		t.Errorf("a page of the company's blocks: %d, more %v", len(bs), more)
	}
}

func suiteForget(t *testing.T, st memory.Store) {
	ctx := ctxOf(t)
	co, other := company(), company()
	for i := range 30 { // more than one BatchWriteItem
		must(t, st.CreateMemoryRecord(ctx, newRecord(co, "alice", []string{"", uuid.NewString(), "inline:a"}[i%3], "fact", i)))
	}
	must(t, st.CreateMemoryBlock(ctx, newBlock(co, "alice", "", "human", 1)))
	must(t, st.CreateMemoryBlock(ctx, newBlock(co, "alice", "inline:a", "human", 2)))
	keep := []*domain.MemoryRecord{newRecord(co, "bob", "", "bob's", 3), newRecord(other, "alice", "", "the other alice's", 4),
		newRecord(co, "alice#2", "", "another user", 5)}
	for _, r := range keep {
		must(t, st.CreateMemoryRecord(ctx, r))
	}
	must(t, st.CreateMemoryBlock(ctx, newBlock(co, "bob", "", "human", 6)))

	records, blocks, err := st.ForgetMemoryUser(ctx, co, "alice")
	must(t, err)
	if records != 30 || blocks != 2 {
		t.Errorf("forget alice: %d records, %d blocks; want 30, 2", records, blocks)
	}
	rs, _, err := st.ListMemoryRecords(ctx, co, domain.MemoryFilter{UserID: "alice"}, 0, 100)
	must(t, err)
	if len(rs) != 0 {
		t.Errorf("alice's records after forget: %d", len(rs))
	}
	for _, r := range keep {
		if _, err := st.GetMemoryRecord(ctx, r.Company, r.ID); err != nil {
			t.Errorf("%s of %s/%s after alice was forgotten: %v", r.Text, r.Company, r.UserID, err)
		}
	}
	if bs, err := st.ScopeMemoryBlocks(ctx, domain.MemoryScope{Company: co, UserID: "bob"}); err != nil || len(bs) != 1 {
		t.Errorf("bob's blocks after alice was forgotten: %d, %v", len(bs), err)
	}
	records, blocks, err = st.ForgetMemoryUser(ctx, co, "alice")
	if err != nil || records != 0 || blocks != 0 {
		t.Errorf("forget alice again: %d, %d, %v; want 0, 0, nil", records, blocks, err)
	}
	if _, _, err := st.ForgetMemoryUser(ctx, co, "nobody"); err != nil {
		t.Errorf("forget a user without memory: %v", err)
	}
}
