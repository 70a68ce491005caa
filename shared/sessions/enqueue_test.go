package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// eagerWorker runs each job the moment it is sent, as a worker polling an empty queue may.
type eagerWorker struct {
	svc *sessions.Service
	err error
}

func (w *eagerWorker) Send(ctx context.Context, body, _ string) error {
	w.err = w.svc.ProcessJob(ctx, body)
	return nil
}

// TestQueuedAnswerFreesTheLeaseFirst: a queued answer's job, taken by the worker at once, finds
// the session free: the request that queued it let the lease go before sending it, so the job
// is never given back (which would cost a redelivery) and the answer completes.
func TestQueuedAnswerFreesTheLeaseFirst(t *testing.T) {
	ctx := context.Background()
	w := &eagerWorker{}
	svc := newService(newMemStore(), w, sessions.Limits{LeaseWait: 10 * time.Millisecond})
	w.svc = svc
	sid, eid, answer := paused(t, svc)
	if _, err := svc.Enqueue(ctx, alice, sid, sessions.ExecuteRequest{Answer: answer}); err != nil {
		t.Fatal(err)
	}
	if w.err != nil {
		t.Fatalf("the job taken at once: %v", w.err)
	}
	_, got, _, err := svc.GetExecution(ctx, alice, sid, eid)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.ExecCompleted {
		t.Errorf("execution %s, want completed", got.Status)
	}
}
