package sessionstest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// ListStore is a sessions.Store with the watchdog's part, whose list the traces list leaves
// out.
type ListStore interface {
	sessions.Store
	sessions.Watcher
	sessions.Runs
}

// ExecutionsSuite pins the contract of sessions.Runs, the traces list: an owner's executions
// written finished or paused, newest first, none of another owner or company, none queued or
// running on the watchdog's list, none recorded without an owner; filters by agent, status and
// time; cursors that give every match once. Its times are in May 2026.
func ExecutionsSuite(t *testing.T, newStore func(t *testing.T) ListStore) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, ListStore)
	}{
		{"OwnersEndedRuns", ownersEndedRuns},
		{"Filters", listFilters},
		{"Pages", listPages},
		{"LeavesWhileQueued", leavesWhileQueued},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

var l0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// ranExec is an execution of s by status, created at, as the feature stamps it.
func ranExec(s *domain.Session, status string, at time.Time) *domain.Execution {
	done := at.Add(1500 * time.Millisecond)
	cost := 0.0042
	e := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: s.ID, Status: status, Events: []map[string]any{},
		InputTokens: 120, OutputTokens: 30, CostUSD: &cost, DurationMS: 1500, CreatedAt: at, CompletedAt: &done,
		Company: s.Company, Owner: s.Owner, AgentID: s.AgentID, AgentName: s.AgentName}
	if status == domain.ExecFailed {
		e.Error, e.ErrorType = "The model failed", "api_error"
	}
	return e
}

func put(t *testing.T, st ListStore, es ...*domain.Execution) {
	t.Helper()
	for _, e := range es {
		if err := st.PutExecution(context.Background(), e); err != nil {
			t.Fatalf("put execution %s: %v", e.ID, err)
		}
	}
}

// listAll follows the cursors from f to the end, holding each page to f.Limit.
func listAll(t *testing.T, st ListStore, p domain.Principal, f domain.ExecutionFilter) []*domain.Execution {
	t.Helper()
	var all []*domain.Execution
	for range 100 {
		page, next, err := st.ListExecutions(context.Background(), p.Company, p.Owner, f)
		if err != nil {
			t.Fatalf("list executions %+v: %v", f, err)
		}
		if len(page) > f.Limit {
			t.Fatalf("page of %d executions for limit %d", len(page), f.Limit)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		f.After = next
	}
	t.Fatal("the cursors never end")
	return nil
}

func execID(e *domain.Execution) string { return e.ID }

func agentSession(t *testing.T, st ListStore, p domain.Principal, agent string) *domain.Session {
	s := newSession(p, l0)
	if agent != "" {
		s.AgentID, s.AgentName = uuid.NewString(), agent
	}
	create(t, st, s)
	return s
}

func ownersEndedRuns(t *testing.T, st ListStore) {
	p := principal()
	s := agentSession(t, st, p, "Support")
	done := ranExec(s, domain.ExecCompleted, l0.Add(time.Minute))
	failed := ranExec(s, domain.ExecFailed, l0.Add(2*time.Minute))
	cancelled := ranExec(s, domain.ExecCancelled, l0.Add(3*time.Minute))
	paused := ranExec(s, domain.ExecRequiresAction, l0.Add(4*time.Minute))
	old := ranExec(s, domain.ExecCompleted, l0.Add(5*time.Minute))
	old.Company, old.Owner = "", "" // recorded before executions named their owner
	put(t, st, done, failed, cancelled, paused, old)
	// Another owner of the company, and the same owner name in another company.
	other := p
	other.Owner = "someone-else"
	s2 := agentSession(t, st, other, "Support")
	elsewhere := p
	elsewhere.Company = p.Company + "-b"
	s3 := agentSession(t, st, elsewhere, "Support")
	put(t, st, ranExec(s2, domain.ExecCompleted, l0.Add(6*time.Minute)), ranExec(s3, domain.ExecCompleted, l0.Add(7*time.Minute)))

	got := listAll(t, st, p, domain.ExecutionFilter{Limit: 100})
	if diff := cmp.Diff(ids(got, execID), []string{paused.ID, cancelled.ID, failed.ID, done.ID}); diff != "" {
		t.Errorf("the owner's list (-got +want):\n%s", diff)
	}
	if len(got) > 0 {
		f := got[2]
		if f.Status != domain.ExecFailed || f.Error != "The model failed" || f.InputTokens != 120 || f.OutputTokens != 30 ||
			f.CostUSD == nil || *f.CostUSD != 0.0042 || f.DurationMS != 1500 || !f.CreatedAt.Equal(failed.CreatedAt) ||
			f.AgentID != s.AgentID || f.AgentName != "Support" || f.SessionID != s.ID || f.Owner != p.Owner {
			t.Errorf("listed %+v: want the failed execution as written", f)
		}
	}
	if got := listAll(t, st, other, domain.ExecutionFilter{Limit: 100}); len(got) != 1 || got[0].SessionID != s2.ID {
		t.Errorf("the other owner's list: %v", ids(got, execID))
	}
}

func listFilters(t *testing.T, st ListStore) {
	p := principal()
	a, b := agentSession(t, st, p, "A"), agentSession(t, st, p, "B")
	inline := agentSession(t, st, p, "")
	var all []*domain.Execution
	for i, st := range []string{domain.ExecCompleted, domain.ExecFailed, domain.ExecCompleted, domain.ExecCancelled, domain.ExecCompleted, domain.ExecFailed} {
		s := []*domain.Session{a, b, inline}[i%3]
		all = append(all, ranExec(s, st, l0.Add(time.Duration(i)*time.Hour)))
	}
	put(t, st, all...)
	pick := func(keep func(*domain.Execution) bool) []string {
		var out []string
		for _, e := range slices.Backward(all) {
			if keep(e) {
				out = append(out, e.ID)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    domain.ExecutionFilter
		want []string
	}{
		{"agent", domain.ExecutionFilter{AgentID: a.AgentID}, pick(func(e *domain.Execution) bool { return e.SessionID == a.ID })},
		{"status", domain.ExecutionFilter{Status: domain.ExecFailed}, pick(func(e *domain.Execution) bool { return e.Status == domain.ExecFailed })},
		{"agent and status", domain.ExecutionFilter{AgentID: b.AgentID, Status: domain.ExecFailed}, pick(func(e *domain.Execution) bool {
			return e.SessionID == b.ID && e.Status == domain.ExecFailed
		})},
		{"since", domain.ExecutionFilter{Since: l0.Add(3 * time.Hour)}, pick(func(e *domain.Execution) bool { return !e.CreatedAt.Before(l0.Add(3 * time.Hour)) })},
		{"until", domain.ExecutionFilter{Until: l0.Add(2 * time.Hour)}, pick(func(e *domain.Execution) bool { return e.CreatedAt.Before(l0.Add(2 * time.Hour)) })},
		{"window and status", domain.ExecutionFilter{Since: l0.Add(time.Hour), Until: l0.Add(5 * time.Hour), Status: domain.ExecCompleted},
			pick(func(e *domain.Execution) bool {
				return e.Status == domain.ExecCompleted && !e.CreatedAt.Before(l0.Add(time.Hour)) && e.CreatedAt.Before(l0.Add(5*time.Hour))
			})},
		{"no match", domain.ExecutionFilter{Status: domain.ExecRequiresAction}, nil},
	} {
		for _, limit := range []int{1, 2, 100} {
			tc.f.Limit = limit
			if diff := cmp.Diff(ids(listAll(t, st, p, tc.f), execID), tc.want, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s, limit %d (-got +want):\n%s", tc.name, limit, diff)
			}
		}
	}
}

func listPages(t *testing.T, st ListStore) {
	ctx := context.Background()
	p := principal()
	s := agentSession(t, st, p, "A")
	var want []string
	for i := range 5 {
		e := ranExec(s, domain.ExecCompleted, l0.Add(time.Duration(i)*time.Second))
		put(t, st, e)
		want = append([]string{e.ID}, want...)
	}
	page, next, err := st.ListExecutions(ctx, p.Company, p.Owner, domain.ExecutionFilter{Limit: 2})
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("first page of 2: %v, next %q, %v", ids(page, execID), next, err)
	}
	page, _, err = st.ListExecutions(ctx, p.Company, p.Owner, domain.ExecutionFilter{Limit: 2, After: next})
	if err != nil || !slices.Equal(ids(page, execID), want[2:4]) {
		t.Errorf("second page: %v, %v; want %v", ids(page, execID), err, want[2:4])
	}
	// The last page: exactly limit left, and no cursor after it.
	page, next, err = st.ListExecutions(ctx, p.Company, p.Owner, domain.ExecutionFilter{Limit: 5})
	if err != nil || len(page) != 5 || next != "" {
		t.Errorf("a page of all 5: %d, next %q, %v", len(page), next, err)
	}
	// A cursor past the window's start ends the list; one before its end starts from its end.
	_, next, _ = st.ListExecutions(ctx, p.Company, p.Owner, domain.ExecutionFilter{Limit: 1}) // after the newest
	if page, _, err := st.ListExecutions(ctx, p.Company, p.Owner, domain.ExecutionFilter{Limit: 5, After: next, Since: l0.Add(4500 * time.Millisecond)}); err != nil || len(page) != 0 {
		t.Errorf("a cursor before since: %v, %v; want none", ids(page, execID), err)
	}
	page, _, err = st.ListExecutions(ctx, p.Company, p.Owner, domain.ExecutionFilter{Limit: 5, After: next, Until: l0.Add(2 * time.Second)})
	if err != nil || !slices.Equal(ids(page, execID), want[3:]) {
		t.Errorf("a cursor after until: %v, %v; want %v", ids(page, execID), err, want[3:])
	}
	for _, bad := range []string{"x", "bm90IGEgY3Vyc29y", "!!"} {
		_, _, err := st.ListExecutions(ctx, p.Company, p.Owner, domain.ExecutionFilter{Limit: 2, After: bad})
		wantKind(t, "a cursor "+bad, err, domain.KindInvalid)
	}
}

func leavesWhileQueued(t *testing.T, st ListStore) {
	ctx := context.Background()
	p := principal()
	s := agentSession(t, st, p, "A")
	e := ranExec(s, domain.ExecQueued, l0)
	e.CompletedAt = nil
	if err := st.SwapExecution(ctx, e, "", l0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, st, p, domain.ExecutionFilter{Limit: 10}); len(got) != 0 {
		t.Errorf("a queued execution is listed: %v", ids(got, execID))
	}
	run := *e
	run.Status = domain.ExecRunning
	if err := st.SwapExecution(ctx, &run, domain.ExecQueued, l0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	done := ranExec(s, domain.ExecCompleted, l0)
	done.ID = e.ID
	put(t, st, done)
	if got := listAll(t, st, p, domain.ExecutionFilter{Limit: 10}); len(got) != 1 || got[0].Status != domain.ExecCompleted {
		t.Errorf("after it completed: %v; want it listed completed", got)
	}
	// Paused, then queued again by an answer: off the list until it ends.
	paused := *done
	paused.Status = domain.ExecRequiresAction
	put(t, st, &paused)
	again := paused
	again.Status = domain.ExecQueued
	if err := st.SwapExecution(ctx, &again, domain.ExecRequiresAction, l0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, st, p, domain.ExecutionFilter{Limit: 10}); len(got) != 0 {
		t.Errorf("an answered execution queued again is listed: %v", ids(got, execID))
	}
}
