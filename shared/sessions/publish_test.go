package sessions_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// webhookEvents records what the service publishes.
type webhookEvents struct {
	mu  sync.Mutex
	got []domain.WebhookEvent
}

func (e *webhookEvents) Publish(_ context.Context, ev domain.WebhookEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
	return nil
}

// publishRig is a sessions service on the one store fake, a queue and a recording publisher,
// with one session of alice's to run in.
type publishRig struct {
	st   *memStore
	q    *queue
	ev   *webhookEvents
	svc  *sessions.Service
	sess *domain.Session
}

func newPublishRig(t *testing.T) *publishRig {
	t.Helper()
	r := &publishRig{st: newMemStore(), q: &queue{}, ev: &webhookEvents{}}
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}}}
	r.svc = sessions.New(sessions.Deps{Store: r.st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg, Queue: r.q, Events: r.ev}, sessions.Limits{})
	var err error
	r.sess, err = r.svc.Create(context.Background(), alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestExecutePublishesCompleted: a completed execute publishes one execution.completed event
// for the company with the session, the execution and the status, and nothing of the content.
func TestExecutePublishesCompleted(t *testing.T) {
	r := newPublishRig(t)
	svc, ev, sess, ctx := r.svc, r.ev, r.sess, context.Background()
	res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("a secret question")}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	want := []domain.WebhookEvent{{Type: domain.EventExecutionCompleted, Company: "acme",
		Data: map[string]string{"session_id": sess.ID, "execution_id": res.Execution.ID, "status": "completed"}}}
	if d := cmp.Diff(want, ev.got); d != "" {
		t.Errorf("published (-want +got):\n%s", d)
	}
}

// TestQueuedRunPublishesFailed: a queued run that fails for the client's reasons is recorded
// failed and publishes execution.failed.
func TestQueuedRunPublishesFailed(t *testing.T) {
	r := newPublishRig(t)
	st, q, svc, ev, sess, ctx := r.st, r.q, r.svc, r.ev, r.sess, context.Background()
	bad, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hi")})
	if err != nil {
		t.Fatal(err)
	}
	bad.Request = map[string]any{"content": map[string]any{"not": "a message"}}
	_ = st.PutExecution(ctx, bad)
	if err := svc.ProcessJob(ctx, q.bodies[0]); err == nil {
		t.Fatal("a bad queued content ran")
	}
	want := []domain.WebhookEvent{{Type: domain.EventExecutionFailed, Company: "acme",
		Data: map[string]string{"session_id": sess.ID, "execution_id": bad.ID, "status": "failed"}}}
	if d := cmp.Diff(want, ev.got); d != "" {
		t.Errorf("published (-want +got):\n%s", d)
	}
}

// TestDeadLetterPublishesFailed: a queued execution the dead-letter processor records failed
// publishes execution.failed once; a redelivery of the dead letter, which changes nothing,
// publishes nothing more.
func TestDeadLetterPublishesFailed(t *testing.T) {
	r := newPublishRig(t)
	svc, ev, sess, ctx := r.svc, r.ev, r.sess, context.Background()
	e, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("a secret question")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := svc.HandleDeadLetter(ctx, job(sess.ID, e.ID)); err != nil {
			t.Fatalf("delivery %d: %v", i+1, err)
		}
	}
	want := []domain.WebhookEvent{{Type: domain.EventExecutionFailed, Company: "acme",
		Data: map[string]string{"session_id": sess.ID, "execution_id": e.ID, "status": "failed"}}}
	if d := cmp.Diff(want, ev.got); d != "" {
		t.Errorf("published (-want +got):\n%s", d)
	}
}
