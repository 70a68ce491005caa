package dynamo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// TestRunLeaseCancelMark: a run's lease names its execution, a cancel of that execution is
// marked only while the lease is live, the supervisor's read sees the mark for that lease
// alone, the heartbeat moves the lease's end only for its holder, and a later lease of the
// same execution (a resumed run) is not stopped by an earlier mark.
func TestRunLeaseCancelMark(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := context.Background()
	alice := domain.Principal{Owner: "alice", Company: "acme"}
	sess, lease := newSession(t, st)
	if err := st.ReleaseSession(ctx, sess.ID, lease); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	exec, other := uuid.NewString(), uuid.NewString()
	if err := st.RequestCancel(ctx, sess.ID, exec, now); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("cancel with no run: %v, want not found", err)
	}
	lease = uuid.NewString()
	if _, err := st.AcquireRun(ctx, alice, sess.ID, lease, exec, now.Add(30*time.Second), now); err != nil {
		t.Fatal(err)
	}
	if err := st.RequestCancel(ctx, sess.ID, other, now); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("cancel of another execution: %v, want not found", err)
	}
	if err := st.RequestCancel(ctx, sess.ID, exec, now.Add(time.Minute)); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("cancel once the lease has expired: %v, want not found (its holder is dead)", err)
	}
	if got, err := st.CancelRequested(ctx, sess.ID, lease); err != nil || got {
		t.Errorf("before any cancel: %v, %v; want false", got, err)
	}
	if got, err := st.GetSession(ctx, sess.ID); err != nil || got.ActiveExecutionID != exec {
		t.Errorf("session while the run holds it: active %q, %v; want %s", got.ActiveExecutionID, err, exec)
	}
	if err := st.RequestCancel(ctx, sess.ID, exec, now); err != nil {
		t.Fatalf("cancel of the live run: %v", err)
	}
	if got := waitMark(t, st, sess.ID, lease); !got {
		t.Errorf("the supervisor's read never saw the mark")
	}
	if got, err := st.CancelRequested(ctx, sess.ID, uuid.NewString()); err != nil || got {
		t.Errorf("the mark read for another lease: %v, %v; want false", got, err)
	}

	// The heartbeat extends only its holder's lease; a resumed run names its execution with it.
	if err := st.ExtendLease(ctx, sess.ID, uuid.NewString(), "", now.Add(time.Hour)); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("heartbeat of a lease not held: %v, want conflict", err)
	}
	if err := st.ExtendLease(ctx, sess.ID, lease, other, now.Add(time.Hour)); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	if _, err := st.AcquireSession(ctx, alice, sess.ID, uuid.NewString(), now.Add(2*time.Hour), now.Add(time.Minute)); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("acquire past the first end but before the extended one: %v, want conflict", err)
	}
	if err := st.RequestCancel(ctx, sess.ID, other, now.Add(time.Minute)); err != nil {
		t.Errorf("cancel of the execution the heartbeat named, within the extended lease: %v", err)
	}

	if err := st.ReleaseSession(ctx, sess.ID, lease); err != nil {
		t.Fatal(err)
	}
	if got, err := st.GetSession(ctx, sess.ID); err != nil || got.ActiveExecutionID != "" {
		t.Errorf("session after release: active %q, %v; want none", got.ActiveExecutionID, err)
	}
	if err := st.RequestCancel(ctx, sess.ID, other, now); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("cancel after release: %v, want not found", err)
	}
	// A later lease of the same execution (a paused run resumed) is not stopped by the mark.
	again := uuid.NewString()
	later := now.Add(time.Minute)
	if _, err := st.AcquireRun(ctx, alice, sess.ID, again, exec, later.Add(time.Minute), later); err != nil {
		t.Fatal(err)
	}
	if got, err := st.CancelRequested(ctx, sess.ID, again); err != nil || got {
		t.Errorf("a new lease of the execution: %v, %v; want no mark", got, err)
	}
}

// waitMark reads the mark until it shows (reads are eventually consistent).
func waitMark(t *testing.T, st *dynamo.Store, sessionID, lease string) bool {
	t.Helper()
	for range 20 {
		got, err := st.CancelRequested(context.Background(), sessionID, lease)
		if err != nil {
			t.Fatal(err)
		}
		if got {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// TestCancelQueued: a queued execution is cancelled by a write conditional on its stored
// status; one the worker took (running) or that finished is a conflict and stays as it was.
func TestCancelQueued(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := context.Background()
	sess, _ := newSession(t, st)
	for _, status := range []string{domain.ExecQueued, domain.ExecRunning, domain.ExecCompleted} {
		e := &domain.Execution{ID: uuid.NewString(), SessionID: sess.ID, Status: status, Events: []map[string]any{},
			Request: map[string]any{"inputs": map[string]any{"status": "queued"}}, CreatedAt: time.Now().UTC()}
		if err := st.PutExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		c := *e
		c.Status, c.Request = domain.ExecCancelled, nil
		err := st.CancelQueued(ctx, &c)
		got, gerr := st.GetExecution(ctx, sess.ID, e.ID)
		if gerr != nil {
			t.Fatal(gerr)
		}
		switch {
		case status == domain.ExecQueued && (err != nil || got.Status != domain.ExecCancelled):
			t.Errorf("queued: %v, stored %s; want cancelled", err, got.Status)
		case status != domain.ExecQueued && (domain.KindOf(err) != domain.KindConflict || got.Status != status):
			t.Errorf("%s: %v, stored %s; want a conflict and the record unchanged", status, err, got.Status)
		}
	}
}

// TestCommitFromStatus: a run's commit conditional on its record's status (a worker's run,
// from running) is written while the record is so, and refused whole — no message, no
// session change — once a cancel or the watchdog settled it.
func TestCommitFromStatus(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := context.Background()
	for _, stored := range []string{domain.ExecRunning, domain.ExecCancelled} {
		sess, lease := newSession(t, st)
		e := &domain.Execution{ID: uuid.NewString(), SessionID: sess.ID, Status: stored, Events: []map[string]any{}, CreatedAt: time.Now().UTC()}
		if err := st.PutExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		done := *e
		done.Status = domain.ExecCompleted
		next := *sess
		next.MessageCount = 1
		msg := domain.Message{ID: uuid.NewString(), Seq: 1, Role: "user", Content: "late", Visible: true, ExecutionID: e.ID, CreatedAt: time.Now().UTC()}
		err := st.Commit(ctx, domain.Commit{Session: &next, LeaseID: lease, Messages: []domain.Message{msg}, Execution: &done, ExecutionFrom: domain.ExecRunning})
		got, gerr := st.GetExecution(ctx, sess.ID, e.ID)
		if gerr != nil {
			t.Fatal(gerr)
		}
		_, _, ferr := st.FindMessage(ctx, msg.ID)
		switch {
		case stored == domain.ExecRunning && (err != nil || got.Status != domain.ExecCompleted || ferr != nil):
			t.Errorf("from running: %v, stored %s, message %v; want the commit written", err, got.Status, ferr)
		case stored != domain.ExecRunning && (domain.KindOf(err) != domain.KindConflict || got.Status != stored || !errors.Is(ferr, domain.ErrNotFound)):
			t.Errorf("from %s: %v, stored %s, message %v; want a conflict and nothing written", stored, err, got.Status, ferr)
		}
	}
}
