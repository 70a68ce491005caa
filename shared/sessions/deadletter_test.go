package sessions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// A react agent with a client-side function tool: the offline model calls "lookup" when the
// message names it with arguments, and the execution pauses for the client's result.
var functionAgent = map[string]any{"name": "c", "agent_type": "react_agent", "system_prompt": "Use tools.",
	"tools": []any{map[string]any{"type": "function", "name": "lookup", "description": "Look a word up",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}}}}}

// paused opens a session with the function agent and runs it until it waits for lookup; it
// returns the session, the paused execution and the answer to its call.
func paused(t *testing.T, svc *sessions.Service) (sessionID, execID string, answer *sessions.Answer) {
	t.Helper()
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(functionAgent)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent(`lookup {"word":"otter"}`)}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending == nil || len(res.Pending.ToolCalls) != 1 {
		t.Fatalf("the run did not pause for lookup: %+v", res.Execution)
	}
	return sess.ID, res.Execution.ID, &sessions.Answer{HasResults: true,
		ToolResults: []sessions.ToolResultInput{{ToolCallID: res.Pending.ToolCalls[0].ID, Output: "an otter is a mammal"}}}
}

func job(sessionID, execID string) string {
	return `{"session_id":"` + sessionID + `","execution_id":"` + execID + `"}`
}

// TestDeadLetterQueuedExecution: a queued execution whose job was dead-lettered is recorded
// failed with an overloaded_error saying why; a second delivery changes nothing; the session
// stays usable. A session busy at that moment makes the dead letter come back later, the
// execution still queued; one that finished meanwhile is left alone.
func TestDeadLetterQueuedExecution(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	q := &queue{}
	svc := newService(st, q, sessions.Limits{LeaseWait: 50 * time.Millisecond})
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	if _, err := st.AcquireSession(ctx, alice, sess.ID, "other", now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if err := svc.HandleDeadLetter(ctx, job(sess.ID, e.ID)); !domain.KindOf(err).Retryable() {
		t.Fatalf("dead letter on a busy session: %v, want a retryable error", err)
	}
	if got, _ := st.GetExecution(ctx, sess.ID, e.ID); got.Status != domain.ExecQueued {
		t.Fatalf("busy session: execution %s, want still queued", got.Status)
	}
	_ = st.ReleaseSession(ctx, sess.ID, "other")

	for i := range 2 { // the second: a redelivery of the dead letter
		if err := svc.HandleDeadLetter(ctx, job(sess.ID, e.ID)); err != nil {
			t.Fatalf("delivery %d: %v", i+1, err)
		}
		_, got, _, err := svc.GetExecution(ctx, alice, sess.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != domain.ExecFailed || got.ErrorType != "overloaded_error" || !strings.Contains(got.Error, "Send the message again") || got.CompletedAt == nil {
			t.Fatalf("delivery %d: execution %s %s %q, want failed with an overloaded_error", i+1, got.Status, got.ErrorType, got.Error)
		}
	}
	// The worker, should the job still reach it, leaves the failed execution alone.
	if err := svc.ProcessJob(ctx, job(sess.ID, e.ID)); err != nil || st.commits != 0 {
		t.Fatalf("job after the dead letter: %v, %d commits", err, st.commits)
	}
	if _, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("still there?")}, sessions.Observer{}); err != nil {
		t.Fatalf("the session after the dead letter: %v", err)
	}

	// A job that ran after all is not marked failed.
	done, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("again")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.ProcessJob(ctx, job(sess.ID, done.ID)); err != nil {
		t.Fatal(err)
	}
	if err := svc.HandleDeadLetter(ctx, job(sess.ID, done.ID)); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetExecution(ctx, sess.ID, done.ID); got.Status != domain.ExecCompleted || got.Error != "" {
		t.Errorf("a completed execution became %s %q", got.Status, got.Error)
	}
}

// TestDeadLetterOutcomes: what HandleDeadLetter makes of jobs it cannot settle.
func TestDeadLetterOutcomes(t *testing.T) {
	svc := newService(newMemStore(), &queue{}, sessions.Limits{})
	tests := []struct {
		name string
		body string
		want domain.Kind // of the error; -1: nil
	}{
		{"not a job: dropped", `{"nope":1}`, domain.KindInvalid},
		{"execution gone: nothing to do", job("6f1c1d9e-3b7a-4c55-9a51-0d6f3f6f2a10", "0b8f7c44-2d1e-4f0b-8a8e-5c3d2b1a0f99"), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := svc.HandleDeadLetter(context.Background(), tt.body)
			if tt.want < 0 {
				if err != nil {
					t.Errorf("err = %v, want nil", err)
				}
				return
			}
			if domain.KindOf(err) != tt.want || domain.KindOf(err).Retryable() {
				t.Errorf("err = %v, want %v (not retried)", err, tt.want)
			}
		})
	}
}

// TestDeadLetterQueuedAnswer: a queued answer the queue gave up on fails its execution, and the
// session still waits for the answer, so that it can be given again, queued or not, and the
// execution then completes without the old error.
func TestDeadLetterQueuedAnswer(t *testing.T) {
	for _, async := range []bool{true, false} {
		name := "answered again synchronously"
		if async {
			name = "answered again asynchronously"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := newMemStore()
			q := &queue{}
			svc := newService(st, q, sessions.Limits{LeaseWait: 50 * time.Millisecond})
			sid, eid, answer := paused(t, svc)
			if _, err := svc.Enqueue(ctx, alice, sid, sessions.ExecuteRequest{Answer: answer}); err != nil {
				t.Fatal(err)
			}
			if err := svc.HandleDeadLetter(ctx, job(sid, eid)); err != nil {
				t.Fatal(err)
			}
			sess, got, _, err := svc.GetExecution(ctx, alice, sid, eid)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != domain.ExecFailed || got.ErrorType != "overloaded_error" || !strings.Contains(got.Error, "answer again") {
				t.Fatalf("execution %s %s %q, want failed telling to answer again", got.Status, got.ErrorType, got.Error)
			}
			if sess.Pending == nil || sess.Pending.ExecutionID != eid {
				t.Fatalf("session pending %+v, want still waiting for %s", sess.Pending, eid)
			}
			// A new message is refused while it waits (409), as for any paused session.
			_, err = svc.Execute(ctx, alice, sid, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{})
			if domain.KindOf(err) != domain.KindConflict {
				t.Fatalf("new message while waiting: %v, want a conflict", err)
			}

			if async {
				e, err := svc.Enqueue(ctx, alice, sid, sessions.ExecuteRequest{Answer: answer})
				if err != nil {
					t.Fatalf("queued answer after the failure: %v", err)
				}
				if e.Status != domain.ExecQueued || e.Error != "" || e.CompletedAt != nil {
					t.Fatalf("queued again as %s %q %v", e.Status, e.Error, e.CompletedAt)
				}
				if err := svc.ProcessJob(ctx, q.bodies[len(q.bodies)-1]); err != nil {
					t.Fatal(err)
				}
			} else if _, err := svc.Execute(ctx, alice, sid, sessions.ExecuteRequest{Answer: answer}, sessions.Observer{}); err != nil {
				t.Fatalf("answer after the failure: %v", err)
			}
			sess, got, msgs, err := svc.GetExecution(ctx, alice, sid, eid)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != domain.ExecCompleted || got.Error != "" || got.ErrorType != "" || sess.Pending != nil {
				t.Fatalf("after the new answer: %s %s %q, pending %+v; want completed, no error, nothing pending", got.Status, got.ErrorType, got.Error, sess.Pending)
			}
			if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "an otter is a mammal") {
				t.Errorf("reply %q does not use the answer", last.Content)
			}
		})
	}
}

// failingQueue refuses every job.
type failingQueue struct{}

func (failingQueue) Send(context.Context, string, string) error {
	return &domain.Error{Kind: domain.KindOverloaded, Message: "throttled"}
}

// TestEnqueueSendFails: when the job cannot be sent, nothing stays queued: a new message's
// execution is failed, an answered execution waits for its answer again.
func TestEnqueueSendFails(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	svc := newService(st, failingQueue{}, sessions.Limits{})
	sid, eid, answer := paused(t, svc)
	if _, err := svc.Enqueue(ctx, alice, sid, sessions.ExecuteRequest{Answer: answer}); err == nil {
		t.Fatal("the answer was queued without a job")
	}
	_, got, _, err := svc.GetExecution(ctx, alice, sid, eid)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.ExecRequiresAction || got.Pending == nil {
		t.Fatalf("answered execution left %s (pending %v), want requires_action again", got.Status, got.Pending)
	}
	// Answered synchronously, it completes.
	if _, err := svc.Execute(ctx, alice, sid, sessions.ExecuteRequest{Answer: answer}, sessions.Observer{}); err != nil {
		t.Fatal(err)
	}

	if _, err := svc.Enqueue(ctx, alice, sid, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}); err == nil {
		t.Fatal("the message was queued without a job")
	}
	var left []string
	_ = st.EachExecution(ctx, sid, func(e *domain.Execution) bool {
		if e.Status == domain.ExecQueued {
			left = append(left, e.ID)
		}
		return true
	})
	if len(left) != 0 {
		t.Errorf("executions %v stay queued with no job", left)
	}
}

// TestJobWhoseRunHoldsTheLease: a delivery that read its execution queued while another
// delivery of the same job claimed it and took the session's lease for it is dropped (nil: not
// sent round the queue again), and runs nothing; a lease held for another execution makes it
// come back later, the execution still queued.
func TestJobWhoseRunHoldsTheLease(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	svc := newService(st, &queue{}, sessions.Limits{})
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := st.AcquireRun(ctx, alice, sess.ID, "other", "another-execution", now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if err := svc.ProcessJob(ctx, job(sess.ID, e.ID)); domain.KindOf(err) != domain.KindOverloaded {
		t.Fatalf("a session busy with another execution: %v, want overloaded (delivered again)", err)
	}
	_ = st.ReleaseSession(ctx, sess.ID, "other")
	// The other delivery's run: the lease names this execution (its claim is not needed here).
	if _, err := st.AcquireRun(ctx, alice, sess.ID, "run", e.ID, now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if err := svc.ProcessJob(ctx, job(sess.ID, e.ID)); err != nil || st.commits != 0 {
		t.Fatalf("a duplicate delivery while its own run holds the lease: %v, %d commits; want nil, none", err, st.commits)
	}
	if got, _ := st.GetExecution(ctx, sess.ID, e.ID); got.Status != domain.ExecQueued {
		t.Errorf("execution %s, want left as the other delivery has it", got.Status)
	}
}
