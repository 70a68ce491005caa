package sessionstest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// WatchSuite pins the contract of sessions.Watcher, the store's part in running a queued
// execution once and in the watchdog: conditional writes by status, the watchdog's list (on it
// while queued or running, off after any other write), its due times, and the lease as the
// watchdog reads it. Its times are in March 2026, before anything other tests list.
func WatchSuite(t *testing.T, newStore func(t *testing.T) WatchStore) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, WatchStore)
	}{
		{"SwapByStatus", swapByStatus},
		{"ListedWhileQueuedOrRunning", listedWhileQueuedOrRunning},
		{"Postpone", postpone},
		{"LeaseOf", leaseOf},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// WatchStore is a sessions.Store with its sessions.Watcher part.
type WatchStore interface {
	sessions.Store
	sessions.Watcher
}

// watchedExec is a queued execution of s created at t0.
func watchedExec(s *domain.Session) *domain.Execution {
	return &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: s.ID, Status: domain.ExecQueued,
		Events: []map[string]any{}, CreatedAt: t0, Request: map[string]any{"content": "hi"}}
}

func swapByStatus(t *testing.T, st WatchStore) {
	ctx := context.Background()
	s := newSession(principal(), t0)
	create(t, st, s)
	e := watchedExec(s)
	if err := st.SwapExecution(ctx, e, "", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "SwapExecution of a new execution that exists", st.SwapExecution(ctx, e, "", t0), domain.KindConflict)
	run := *e
	run.Status = domain.ExecRunning
	if err := st.SwapExecution(ctx, &run, domain.ExecQueued, t0.Add(time.Minute)); err != nil {
		t.Fatalf("queued → running: %v", err)
	}
	// A second taker finds it running.
	wantKind(t, "SwapExecution from queued of a running one", st.SwapExecution(ctx, &run, domain.ExecQueued, t0), domain.KindConflict)
	got, due, err := st.WatchedExecution(ctx, s.ID, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.ExecRunning || !due.Equal(t0.Add(time.Minute)) {
		t.Errorf("WatchedExecution = %s due %v, want running due %v", got.Status, due, t0.Add(time.Minute))
	}
	// A commit's write (any whole write) ends it; a swap from running then fails.
	done := run
	done.Status = domain.ExecCompleted
	if err := st.PutExecution(ctx, &done); err != nil {
		t.Fatal(err)
	}
	failed := run
	failed.Status = domain.ExecFailed
	wantKind(t, "SwapExecution from running of a completed one", st.SwapExecution(ctx, &failed, domain.ExecRunning, time.Time{}), domain.KindConflict)
	if got, _ := st.GetExecution(ctx, s.ID, e.ID); got.Status != domain.ExecCompleted {
		t.Errorf("after a refused swap: %s, want completed", got.Status)
	}
	_, _, err = st.WatchedExecution(ctx, s.ID, uuid.NewString())
	if !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("WatchedExecution of no execution: %v, want not found", err)
	}
}

// dueOf is what DueExecutions lists at now of session s's executions.
func dueOf(t *testing.T, st WatchStore, s *domain.Session, now time.Time) []domain.Watched {
	t.Helper()
	all, err := st.DueExecutions(context.Background(), now, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(w domain.Watched) bool { return w.SessionID != s.ID })
}

func listedWhileQueuedOrRunning(t *testing.T, st WatchStore) {
	ctx := context.Background()
	s := newSession(principal(), t0)
	create(t, st, s)
	q, r := watchedExec(s), watchedExec(s)
	if err := st.SwapExecution(ctx, q, "", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := st.SwapExecution(ctx, r, "", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	r.Status = domain.ExecRunning
	if err := st.SwapExecution(ctx, r, domain.ExecQueued, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := dueOf(t, st, s, t0.Add(time.Minute)); len(got) != 0 {
		t.Errorf("due at the very due time: %+v, want none (due means before now)", got)
	}
	got := dueOf(t, st, s, t0.Add(time.Hour))
	want := []domain.Watched{{SessionID: s.ID, ExecutionID: r.ID, Status: domain.ExecRunning, Due: t0.Add(time.Minute)}}
	if !slices.EqualFunc(got, want, sameWatched) {
		t.Errorf("due after an hour = %+v, want %+v", got, want)
	}
	if got := dueOf(t, st, s, t0.Add(3*time.Hour)); len(got) != 2 {
		t.Errorf("due after three hours = %+v, want both", got)
	}
	// Written by PutExecution (a commit, a failure), an execution is off the list.
	r.Status = domain.ExecFailed
	if err := st.PutExecution(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, due, _ := st.WatchedExecution(ctx, s.ID, r.ID); !due.IsZero() {
		t.Errorf("a failed execution is due at %v", due)
	}
	// So is one swapped to a final status.
	q.Status = domain.ExecCancelled
	if err := st.SwapExecution(ctx, q, domain.ExecQueued, t0); err != nil {
		t.Fatal(err)
	}
	if got := dueOf(t, st, s, t0.Add(3*time.Hour)); len(got) != 0 {
		t.Errorf("due after the executions ended: %+v", got)
	}
}

func sameWatched(a, b domain.Watched) bool {
	return a.SessionID == b.SessionID && a.ExecutionID == b.ExecutionID && a.Status == b.Status && a.Due.Equal(b.Due)
}

func postpone(t *testing.T, st WatchStore) {
	ctx := context.Background()
	s := newSession(principal(), t0)
	create(t, st, s)
	e := watchedExec(s)
	e.Status = domain.ExecRunning
	if err := st.SwapExecution(ctx, e, "", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	w := domain.Watched{SessionID: s.ID, ExecutionID: e.ID, Status: domain.ExecRunning, Due: t0.Add(time.Minute)}
	if err := st.Postpone(ctx, w, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := dueOf(t, st, s, t0.Add(30*time.Minute)); len(got) != 0 {
		t.Errorf("due before the postponed time: %+v", got)
	}
	if _, due, _ := st.WatchedExecution(ctx, s.ID, e.ID); !due.Equal(t0.Add(time.Hour)) {
		t.Errorf("due %v after Postpone, want %v", due, t0.Add(time.Hour))
	}
	wrong := w
	wrong.Status = domain.ExecQueued
	wantKind(t, "Postpone with another status", st.Postpone(ctx, wrong, t0), domain.KindConflict)
	e.Status = domain.ExecCompleted
	if err := st.PutExecution(ctx, e); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "Postpone of a finished execution", st.Postpone(ctx, w, t0.Add(2*time.Hour)), domain.KindConflict)
	if _, due, _ := st.WatchedExecution(ctx, s.ID, e.ID); !due.IsZero() {
		t.Errorf("a refused Postpone listed a finished execution again, due %v", due)
	}
}

func leaseOf(t *testing.T, st WatchStore) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	create(t, st, s)
	if _, err := st.LeaseOf(ctx, uuid.NewString()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("LeaseOf of no session: %v, want not found", err)
	}
	if l, err := st.LeaseOf(ctx, s.ID); err != nil || !l.Until.IsZero() || l.ExecutionID != "" {
		t.Errorf("LeaseOf a free session = %+v, %v", l, err)
	}
	until := t0.Add(time.Minute).Truncate(time.Millisecond) // a lease keeps milliseconds
	exec := uuid.NewString()
	if _, err := st.AcquireRun(ctx, p, s.ID, "lease", exec, until, t0); err != nil {
		t.Fatal(err)
	}
	l, err := st.LeaseOf(ctx, s.ID)
	if err != nil || !l.Until.Equal(until) || l.ExecutionID != exec {
		t.Errorf("LeaseOf = %+v, %v; want until %v run by %s", l, err, until, exec)
	}
	if !l.Live(until) || l.Live(until.Add(time.Millisecond)) {
		t.Errorf("Live at its end %v, a millisecond after %v; want true, false", l.Live(until), l.Live(until.Add(time.Millisecond)))
	}
	if err := st.ReleaseSession(ctx, s.ID, "lease"); err != nil {
		t.Fatal(err)
	}
	if l, err := st.LeaseOf(ctx, s.ID); err != nil || !l.Until.IsZero() {
		t.Errorf("LeaseOf after release = %+v, %v", l, err)
	}
}
