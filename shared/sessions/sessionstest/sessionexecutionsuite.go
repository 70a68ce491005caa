package sessionstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// SessionExecutionsSuite pins sessions.Store.SessionExecutions, a session's executions for the
// reopened chat: in the order they were created, each as GetExecution reads it, pages that give
// every one once and say whether more follow, none of another session's.
func SessionExecutionsSuite(t *testing.T, newStore func(t *testing.T) sessions.Store) {
	ctx := context.Background()
	st := newStore(t)
	p := principal()
	s, other, empty := newSession(p, t0), newSession(p, t0), newSession(p, t0)
	for _, x := range []*domain.Session{s, other, empty} {
		create(t, st, x)
	}
	cost := 0.25
	var want []*domain.Execution
	for i := range 5 {
		done := t0.Add(time.Duration(i+1) * time.Second)
		corr := fmt.Sprint("corr-", i)
		e := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: s.ID, CorrelationID: &corr, Status: domain.ExecCompleted,
			StopReason: "end_turn", Events: []map[string]any{{"type": "model_call", "n": fmt.Sprint(i)}}, MessageIDs: []string{uuid.NewString(), uuid.NewString()},
			InputTokens: 10 + i, OutputTokens: 20 + i, CostUSD: &cost, DurationMS: int64(i), CreatedAt: t0.Add(time.Duration(i) * time.Second), CompletedAt: &done,
			Company: p.Company, Owner: p.Owner}
		if i == 3 {
			e.Status, e.StopReason, e.CostUSD = domain.ExecCancelled, "cancelled", nil
		}
		if err := st.PutExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
		// Another session's execution between them: never on s's pages.
		o := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: other.ID, Status: domain.ExecCompleted, CreatedAt: t0, CompletedAt: &done}
		if err := st.PutExecution(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// Each as GetExecution reads it.
	for i, e := range want {
		got, err := st.GetExecution(ctx, s.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = got
	}
	execID := func(e *domain.Execution) string { return e.ID }
	for _, tc := range []struct {
		limit, offset int
		from, to      int
		more          bool
	}{
		{2, 0, 0, 2, true}, {2, 2, 2, 4, true}, {2, 4, 4, 5, false},
		{5, 0, 0, 5, false}, {4, 0, 0, 4, true}, {50, 1, 1, 5, false}, {3, 5, 5, 5, false}, {3, 9, 5, 5, false},
	} {
		got, more, err := st.SessionExecutions(ctx, s.ID, tc.limit, tc.offset)
		if err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(want[tc.from:tc.to], got); d != "" || more != tc.more {
			t.Errorf("limit %d offset %d: more %v, want %v (-want +got):\n%s\nids %v", tc.limit, tc.offset, more, tc.more, d, ids(got, execID))
		}
	}
	got, more, err := st.SessionExecutions(ctx, empty.ID, 10, 0)
	if err != nil || len(got) != 0 || more {
		t.Errorf("a session without executions: %v, more %v, %v", ids(got, execID), more, err)
	}
	got, _, err = st.SessionExecutions(ctx, other.ID, 10, 0)
	if err != nil || len(got) != 5 {
		t.Errorf("the other session's: %d, %v", len(got), err)
	}
	for _, e := range got {
		if e.SessionID != other.ID {
			t.Errorf("the other session's page holds %s of %s", e.ID, e.SessionID)
		}
	}
}
