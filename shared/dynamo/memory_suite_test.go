package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
	// As on AWS when neither gsi1 nor the replica an eventually consistent read lands on has
	// seen the writes yet (DynamoDB Local shows every write at once).
	t.Run("ReadAfterWriteOnAStaleReplica", func(t *testing.T) {
		memorytest.ReadAfterWrite(t, dynamo.NewStore(staleReplica{env.DynamoDB()}, env.Config.Table))
	})
}

// staleReplica is a table whose reads that may be stale are: a Query of an index and an
// eventually consistent GetItem or Query find nothing; strongly consistent reads and writes
// pass.
type staleReplica struct{ dynamo.Client }

func (c staleReplica) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if !aws.ToBool(in.ConsistentRead) {
		return &dynamodb.GetItemOutput{}, nil
	}
	return c.Client.GetItem(ctx, in, opts...)
}

func (c staleReplica) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if in.IndexName != nil || !aws.ToBool(in.ConsistentRead) {
		return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{}}, nil
	}
	return c.Client.Query(ctx, in, opts...)
}

func (c staleReplica) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	for _, ka := range in.RequestItems {
		if !aws.ToBool(ka.ConsistentRead) {
			return &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}, nil
		}
	}
	return c.Client.BatchGetItem(ctx, in, opts...)
}

// TestMemoryRoundTrips counts the calls of each access pattern: a create is one
// TransactWriteItems (item and pointer), the recall path's blocks one Query, an item by id two
// GetItem (pointer, item), an update one PutItem, a delete one TransactWriteItems, a page of a
// user's records one Query, and forgetting a user of 28 items (56 with their pointers) one
// Query and three BatchWriteItem.
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
	if d := cmp.Diff(map[string]int{"TransactWriteItems": 30}, calls.reset()); d != "" {
		t.Errorf("30 creates: calls (-want +got):\n%s", d)
	}
	var block *domain.MemoryBlock

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
		{"a record by id", func() error { _, err := st.GetMemoryRecord(ctx, co, recs[3].ID); return err }, map[string]int{"GetItem": 2}},
		{"a block by id", func() error {
			bs, err := st.ScopeMemoryBlocks(ctx, domain.MemoryScope{Company: co, UserID: "alice", AgentID: agent})
			if err != nil {
				return err
			}
			calls.reset()
			block, err = st.GetMemoryBlock(ctx, co, bs[0].ID)
			return err
		}, map[string]int{"GetItem": 2}},
		{"an unknown id", func() error {
			if _, err := st.GetMemoryRecord(ctx, co, uuid.NewString()); !errors.Is(err, domain.ErrNotFound) {
				return fmt.Errorf("got %w, want not found", err)
			}
			return nil
		}, map[string]int{"GetItem": 1}},
		{"update a record", func() error {
			r := *recs[3]
			r.Text, r.UpdatedAt = "changed", now.Add(time.Second)
			return st.UpdateMemoryRecord(ctx, &r, recs[3])
		}, map[string]int{"PutItem": 1}},
		{"delete a record", func() error { return st.DeleteMemoryRecord(ctx, recs[4]) }, map[string]int{"TransactWriteItems": 1}},
		{"delete a block", func() error { return st.DeleteMemoryBlock(ctx, block) }, map[string]int{"TransactWriteItems": 1}},
		{"a page of a user's records", func() error {
			rs, more, err := st.ListMemoryRecords(ctx, co, domain.MemoryFilter{UserID: "alice"}, 5, 10)
			if err == nil && (len(rs) != 10 || !more) {
				err = fmt.Errorf("%d records, more %v", len(rs), more)
			}
			return err
		}, map[string]int{"Query": 1}},
		{"forget the user", func() error {
			n, m, err := st.ForgetMemoryUser(ctx, co, "alice")
			if err == nil && (n != 27 || m != 1) {
				err = fmt.Errorf("%d records, %d blocks", n, m)
			}
			return err
		}, map[string]int{"Query": 1, "BatchWriteItem": 3}},
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
