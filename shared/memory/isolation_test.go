package memory_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
)

// TestScopesNeverLeak saves the same fact, word for word, in seven scopes that differ in one
// part each (company, user, agent, shared or not, an inline agent, a user id that extends
// another): each scope's search, whose query is that fact (so that any other scope's record
// would score 1 too), finds its own record and nothing else, and each scope's blocks are its
// own. Then alice of the first company is forgotten: nobody else loses anything.
func TestScopesNeverLeak(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	agentA, agentB := uuid.NewString(), uuid.NewString()
	scopes := []domain.MemoryScope{
		{Company: "acme", UserID: "alice", AgentID: agentA},
		{Company: "acme", UserID: "alice", AgentID: ""}, // alice's shared memory
		{Company: "acme", UserID: "alice", AgentID: agentB},
		{Company: "acme", UserID: "bob", AgentID: agentA},
		{Company: "globex", UserID: "alice", AgentID: agentA},
		{Company: "acme", UserID: "alice", AgentID: domain.InlineAgentID("support")},
		{Company: "acme", UserID: "alice#2", AgentID: agentA},
	}
	const fact = "The user's favourite colour is blue"
	ids := map[domain.MemoryScope]string{}
	for i, sc := range scopes {
		r, err := h.svc.Save(ctx, sc, fact, domain.MemorySource{Type: domain.MemorySourceTool, ExecutionID: "x", SessionID: "s"})
		must(t, err)
		ids[sc] = r.ID
		_, err = h.svc.EditBlock(ctx, sc, domain.MemoryBlockSpec{Label: "human"}, domain.MemorySource{Type: domain.MemorySourceTool},
			func(string) (string, error) { return fmt.Sprintf("scope %d", i), nil })
		must(t, err)
	}
	for i, sc := range scopes {
		hits, _, err := h.svc.Search(ctx, sc, fact, 10)
		must(t, err)
		if len(hits) != 1 || hits[0].Record.ID != ids[sc] {
			t.Errorf("scope %d %+v: found %v, want only its own record %s", i, sc, hits, ids[sc])
		}
		if len(hits) == 1 && (hits[0].Record.Company != sc.Company || hits[0].Record.UserID != sc.UserID || hits[0].Record.AgentID != sc.AgentID) {
			t.Errorf("scope %d: the hit names another scope: %+v", i, hits[0].Record)
		}
		bs, err := h.svc.Blocks(ctx, sc)
		must(t, err)
		if len(bs) != 1 || bs[0].Value != fmt.Sprintf("scope %d", i) {
			t.Errorf("scope %d: blocks %v, want its own one", i, bs)
		}
	}
	// A scope nobody wrote in finds nothing.
	hits, _, err := h.svc.Search(ctx, domain.MemoryScope{Company: "acme", UserID: "carol", AgentID: agentA}, fact, 10)
	must(t, err)
	if len(hits) != 0 {
		t.Errorf("carol found %v", texts(hits))
	}

	records, blocks, err := h.svc.Forget(ctx, keyOf("acme", domain.ScopeMemoryWrite), "alice")
	must(t, err)
	if records != 4 || blocks != 4 {
		t.Errorf("forget alice of acme: %d records, %d blocks; want 4, 4", records, blocks)
	}
	for i, sc := range scopes {
		hits, _, err := h.svc.Search(ctx, sc, fact, 10)
		must(t, err)
		gone := sc.Company == "acme" && sc.UserID == "alice"
		if gone != (len(hits) == 0) {
			t.Errorf("after forgetting alice of acme, scope %d %+v finds %d records", i, sc, len(hits))
		}
	}
	again, againBlocks, err := h.svc.Forget(ctx, keyOf("acme", domain.ScopeMemoryWrite), "alice")
	if err != nil || again != 0 || againBlocks != 0 {
		t.Errorf("forget alice again: %d, %d, %v; want 0, 0, nil", again, againBlocks, err)
	}
}

// TestAPIKeepsCompaniesApart: a key of another company cannot read, list, change or delete a
// record or a block by its id (404, and nothing changes), nor forget the user.
func TestAPIKeepsCompaniesApart(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	acme, globex := keyOf("acme"), keyOf("globex")
	r, err := h.svc.CreateRecord(ctx, acme, memory.RecordInput{UserID: ptr("alice"), Text: ptr("Alice is vegetarian")})
	must(t, err)
	b, err := h.svc.CreateBlock(ctx, acme, memory.BlockInput{UserID: ptr("alice"), Label: ptr("human"), Value: ptr("Alice")})
	must(t, err)

	notFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%s as another company: %v, want not found", what, err)
		}
	}
	_, err = h.svc.GetRecord(ctx, globex, r.ID)
	notFound("get record", err)
	_, err = h.svc.UpdateRecord(ctx, globex, r.ID, memory.RecordUpdate{Text: ptr("Alice eats meat")})
	notFound("update record", err)
	notFound("delete record", h.svc.DeleteRecord(ctx, globex, r.ID))
	_, err = h.svc.GetBlock(ctx, globex, b.ID)
	notFound("get block", err)
	_, err = h.svc.UpdateBlock(ctx, globex, b.ID, memory.BlockUpdate{Value: ptr("Mallory")})
	notFound("update block", err)
	notFound("delete block", h.svc.DeleteBlock(ctx, globex, b.ID))
	rs, _, err := h.svc.ListRecords(ctx, globex, domain.MemoryFilter{UserID: "alice"}, 0, 10)
	must(t, err)
	bs, _, err := h.svc.ListBlocks(ctx, globex, domain.MemoryFilter{}, 0, 10)
	must(t, err)
	if len(rs)+len(bs) != 0 {
		t.Errorf("another company lists %d records and %d blocks", len(rs), len(bs))
	}
	if n, m, err := h.svc.Forget(ctx, globex, "alice"); err != nil || n+m != 0 {
		t.Errorf("another company forgets alice: %d, %d, %v", n, m, err)
	}

	got, err := h.svc.GetRecord(ctx, acme, r.ID)
	must(t, err)
	gotBlock, err := h.svc.GetBlock(ctx, acme, b.ID)
	must(t, err)
	hits, _, err := h.svc.Search(ctx, domain.MemoryScope{Company: "acme", UserID: "alice"}, "vegetarian", 5)
	must(t, err)
	if got.Text != "Alice is vegetarian" || gotBlock.Value != "Alice" || !slices.Equal(texts(hits), []string{"Alice is vegetarian"}) {
		t.Errorf("after another company's tries: record %q, block %q, search %v", got.Text, gotBlock.Value, texts(hits))
	}
}

// TestAgentStarIsNoShared: "*" would make the shared scope's tag (agent:*), so no scope may
// name it: an API write and a runtime search refuse it.
func TestAgentStarIsNoShared(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	_, err := h.svc.CreateRecord(ctx, keyOf("acme"), memory.RecordInput{UserID: ptr("alice"), AgentID: ptr("*"), Text: ptr("x")})
	if got := fieldsOf(err); !slices.Equal(got, []string{"agent_id"}) {
		t.Errorf("agent_id *: %v, want a 400 on agent_id", err)
	}
	if _, _, err := h.svc.Search(ctx, domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "*"}, "x", 5); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("search as agent *: %v, want invalid", err)
	}
	if memory.AgentTag("") == memory.AgentTag("shared") || memory.AgentTag("") != "agent:*" {
		t.Errorf("tags: shared %q, agent \"shared\" %q", memory.AgentTag(""), memory.AgentTag("shared"))
	}
}

// TestUserKey holds the key's form: "mem-" and 32 hex digits of sha256(company NUL user), so
// that neither a company nor a user id can be shifted into the other.
func TestUserKey(t *testing.T) {
	if memory.UserKey("acme", "alice") == memory.UserKey("acme", "bob") ||
		memory.UserKey("ac", "me") == memory.UserKey("a", "cme") {
		t.Error("UserKey does not tell users apart")
	}
	// printf 'acme\0alice' | sha256sum
	if got, want := memory.UserKey("acme", "alice"), "mem-dea4eaeaeaa2ce73be2c366f5d0ea013"; got != want {
		t.Errorf("UserKey(acme, alice) = %s, want %s", got, want)
	}
}
