package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
)

// TestExecutionsSuite holds the adapter's traces list to the contract sessionstest's fake is
// held to, on DynamoDB Local.
func TestExecutionsSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	sessionstest.ExecutionsSuite(t, func(*testing.T) sessionstest.ListStore { return st })
}

// TestListExecutionsOneQueryPerPage: every page of the traces list is one Query and no other
// call, filtered or not; a filter that matches rarely still ends, a page at a time (one with
// fewer than limit executions, or none, goes on with a cursor), and yields every match once.
func TestListExecutionsOneQueryPerPage(t *testing.T) {
	env := localstack.NewTestEnv(t)
	db := newCounting(env.DynamoDB())
	st := dynamo.NewStore(db, env.Config.Table)
	ctx := context.Background()
	company, owner, agent := "runs-"+uuid.NewString()[:8], "alice", uuid.NewString()
	sid := uuid.NewString()
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var failed []string
	for i := range 230 {
		e := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: sid, Status: domain.ExecCompleted, Events: []map[string]any{},
			CreatedAt: t0.Add(time.Duration(i) * time.Second), Company: company, Owner: owner, AgentID: agent, AgentName: "A"}
		if i == 3 || i == 5 { // the two oldest but a few: past the first page's reads
			e.Status = domain.ExecFailed
			failed = append([]string{e.ID}, failed...)
		}
		if err := st.PutExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		f         domain.ExecutionFilter
		wantCount int
		wantIDs   []string
	}{
		{"unfiltered", domain.ExecutionFilter{Limit: 100}, 230, nil},
		{"rare status", domain.ExecutionFilter{Limit: 10, Status: domain.ExecFailed}, 2, failed},
		{"agent and window", domain.ExecutionFilter{Limit: 50, AgentID: agent, Since: t0.Add(100 * time.Second), Until: t0.Add(200 * time.Second)}, 100, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db.reset()
			f, pages := tc.f, 0
			var got []string
			for {
				page, next, err := st.ListExecutions(ctx, company, owner, f)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if calls := db.reset(); len(calls) != 1 || calls["Query"] != 1 {
					t.Fatalf("page %d: calls %v; want one Query", pages, calls)
				}
				for _, e := range page {
					got = append(got, e.ID)
				}
				if next == "" {
					break
				}
				f.After = next
			}
			if len(got) != tc.wantCount {
				t.Errorf("%d executions in %d pages; want %d", len(got), pages, tc.wantCount)
			}
			if tc.wantIDs != nil && fmt.Sprint(got) != fmt.Sprint(tc.wantIDs) {
				t.Errorf("got %v; want %v", got, tc.wantIDs)
			}
			t.Logf("%s: %d executions in %d pages, one Query each", tc.name, len(got), pages)
		})
	}
}
