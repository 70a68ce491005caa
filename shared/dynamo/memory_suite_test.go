package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/memory"
	"github.com/agentorch/agentorch/shared/memory/memorytest"
)

var _ memory.Store = (*dynamo.Store)(nil)

// TestMemoryStoreSuite holds the adapter to memory.Store's contract on DynamoDB Local: the
// suite the fake (memorytest.Store) passes too. Its subtests share one table.
func TestMemoryStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	memorytest.StoreSuite(t, func(*testing.T) memory.Store { return st })
}

// TestMemoryRoundTrips counts the calls of each access pattern: the recall path's blocks are
// one Query, an item by id one Query on gsi1, a write one PutItem, a page of a user's records
// one Query, and forgetting a user of 30 items one Query and two BatchWriteItem.
func TestMemoryRoundTrips(t *testing.T) {
	env := localstack.NewTestEnv(t)
	calls := newCounting(env.DynamoDB())
	st := dynamo.NewStore(calls, env.Config.Table)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	co, agent := "acme", uuid.NewString()
	now := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	var recs []*domain.MemoryRecord
	for i := range 28 {
		r := &domain.MemoryRecord{ID: uuid.Must(uuid.NewV7()).String(), Company: co, UserID: "alice", AgentID: agent,
			Text: fmt.Sprintf("fact %d", i), Source: domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: "k"},
			EmbeddingModel: "use-lite-glove", Dimensions: 612, CreatedAt: now, UpdatedAt: now}
		if err := st.CreateMemoryRecord(ctx, r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	for _, l := range []string{"human", "persona"} {
		if err := st.CreateMemoryBlock(ctx, &domain.MemoryBlock{ID: uuid.Must(uuid.NewV7()).String(), Company: co, UserID: "alice",
			AgentID: agent, Label: l, Limit: 2000, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if got := calls.reset(); got["PutItem"] != 30 || len(got) != 1 {
		t.Errorf("30 creates: %v, want 30 PutItem", got)
	}

	steps := []struct {
		name string
		run  func() error
		want map[string]int
	}{
		{"blocks of a scope", func() error {
			bs, err := st.ScopeMemoryBlocks(ctx, domain.MemoryScope{Company: co, UserID: "alice", AgentID: agent})
			if err == nil && len(bs) != 2 {
				err = fmt.Errorf("%d blocks", len(bs))
			}
			return err
		}, map[string]int{"Query": 1}},
		{"a record by id", func() error { _, err := st.GetMemoryRecord(ctx, co, recs[3].ID); return err }, map[string]int{"Query": 1}},
		{"update a record", func() error {
			r := *recs[3]
			r.Text, r.UpdatedAt = "changed", now.Add(time.Second)
			return st.UpdateMemoryRecord(ctx, &r, recs[3])
		}, map[string]int{"PutItem": 1}},
		{"a page of a user's records", func() error {
			rs, more, err := st.ListMemoryRecords(ctx, co, domain.MemoryFilter{UserID: "alice"}, 5, 10)
			if err == nil && (len(rs) != 10 || !more) {
				err = fmt.Errorf("%d records, more %v", len(rs), more)
			}
			return err
		}, map[string]int{"Query": 1}},
		{"forget the user", func() error {
			n, m, err := st.ForgetMemoryUser(ctx, co, "alice")
			if err == nil && (n != 28 || m != 2) {
				err = fmt.Errorf("%d records, %d blocks", n, m)
			}
			return err
		}, map[string]int{"Query": 1, "BatchWriteItem": 2}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if d := cmp.Diff(s.want, calls.reset()); d != "" {
			t.Errorf("%s: calls (-want +got):\n%s", s.name, d)
		}
	}
}
