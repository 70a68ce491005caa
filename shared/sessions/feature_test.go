package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
	"github.com/agentorch/agentorch/shared/tools"
)

// memStore is sessionstest's fake counting the commits it took and the executions
// EachExecution handed over. sessionstest.StoreSuite holds the fake to the DynamoDB adapter's
// behaviour.
type memStore struct {
	*sessionstest.Store
	mu      sync.Mutex
	commits int
	handed  int // executions EachExecution handed over
}

func newMemStore() *memStore { return &memStore{Store: sessionstest.NewStore()} }

// TestStoreSuite holds the fake to the contract of sessions.Store (shared/dynamo runs the same
// suite against DynamoDB Local).
func TestStoreSuite(t *testing.T) {
	sessionstest.StoreSuite(t, func(*testing.T) sessions.Store { return sessionstest.NewStore() })
}

func (m *memStore) Commit(ctx context.Context, c domain.Commit) error {
	if err := m.Store.Commit(ctx, c); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commits++
	return nil
}

func (m *memStore) EachExecution(ctx context.Context, sessionID string, each func(*domain.Execution) bool) error {
	return m.Store.EachExecution(ctx, sessionID, func(e *domain.Execution) bool {
		m.mu.Lock()
		m.handed++
		m.mu.Unlock()
		return each(e)
	})
}

// queue records sent bodies.
type queue struct {
	mu     sync.Mutex
	bodies []string
}

func (q *queue) Send(_ context.Context, body, _ string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bodies = append(q.bodies, body)
	return nil
}

func newService(st *memStore, q sessions.Queue, limits sessions.Limits) *sessions.Service {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}}}
	return sessions.New(sessions.Deps{Store: st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg, Queue: q}, limits)
}

var alice = domain.Principal{Owner: "alice", Company: "acme"}

// TestExecuteWaitsForTheLease: an execute waits (with backoff) for a lease another execution
// holds briefly, and answers 409 once LeaseWait has passed.
func TestExecuteWaitsForTheLease(t *testing.T) {
	st := newMemStore()
	svc := newService(st, nil, sessions.Limits{LeaseWait: 300 * time.Millisecond})
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := st.AcquireSession(ctx, alice, sess.ID, "other", now.Add(100*time.Millisecond), now); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{})
	if err != nil {
		t.Fatalf("execute after a short lease: %v", err)
	}
	if len(res.Messages) == 0 || st.commits != 1 {
		t.Errorf("result %+v, commits %d", res, st.commits)
	}
	if _, err := st.AcquireSession(ctx, alice, sess.ID, "long", time.Now().Add(time.Hour), time.Now()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{})
	if domain.KindOf(err) != domain.KindConflict {
		t.Fatalf("execute on a held lease: %v, want conflict", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("gave up after %v, want a wait for the lease (LeaseWait 300 ms), never at once", waited)
	}
	if st.commits != 1 {
		t.Errorf("the refused execute committed")
	}
}

// TestQueuedRunStateMachine: Enqueue records a queued execution and sends its job; the worker's
// ProcessJob runs it to completed; a redelivery of a finished one changes nothing; a busy
// session leaves it queued with a retryable error; a failing run is recorded failed with an
// error that is not retried.
func TestQueuedRunStateMachine(t *testing.T) {
	st := newMemStore()
	q := &queue{}
	svc := newService(st, q, sessions.Limits{LeaseWait: 50 * time.Millisecond})
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != domain.ExecQueued || len(q.bodies) != 1 {
		t.Fatalf("enqueue: status %s, %d messages", e.Status, len(q.bodies))
	}

	// The session is busy: the job stays queued and the error asks for a redelivery.
	now := time.Now()
	if _, err := st.AcquireSession(ctx, alice, sess.ID, "other", now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	err = svc.ProcessJob(ctx, q.bodies[0])
	if err == nil || !domain.KindOf(err).Retryable() {
		t.Fatalf("busy session: %v, want a retryable error", err)
	}
	if got, _ := st.GetExecution(ctx, sess.ID, e.ID); got.Status != domain.ExecQueued {
		t.Errorf("busy session left the execution %s, want queued", got.Status)
	}
	_ = st.ReleaseSession(ctx, sess.ID, "other")

	// Delivered again: it runs to completed.
	if err := svc.ProcessJob(ctx, q.bodies[0]); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	got, _ := st.GetExecution(ctx, sess.ID, e.ID)
	if got.Status != domain.ExecCompleted || st.commits != 1 {
		t.Fatalf("status %s after %d commits, want completed after 1", got.Status, st.commits)
	}
	// Delivered once more (at-least-once delivery): a finished execution is left alone.
	if err := svc.ProcessJob(ctx, q.bodies[0]); err != nil || st.commits != 1 {
		t.Errorf("duplicate delivery: %v, commits %d", err, st.commits)
	}

	// A run that fails for the client's reasons is recorded failed and not retried.
	bad, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hi {{ variables.x }}")})
	if err != nil {
		t.Fatal(err)
	}
	bad.Status = domain.ExecQueued
	bad.Request = map[string]any{"content": map[string]any{"not": "a message"}}
	_ = st.PutExecution(ctx, bad)
	err = svc.ProcessJob(ctx, q.bodies[1])
	if err == nil || domain.KindOf(err).Retryable() {
		t.Errorf("a client error: %v, want an error that is not retried", err)
	}
	if got, _ := st.GetExecution(ctx, sess.ID, bad.ID); got.Status != domain.ExecFailed || got.Error == "" {
		t.Errorf("failed run recorded as %s %q", got.Status, got.Error)
	}
	// A body that is not a job is retried (so it ends in the dead-letter queue).
	if err := svc.ProcessJob(ctx, `{"nope":1}`); err == nil || !domain.KindOf(err).Retryable() {
		t.Errorf("malformed job: %v", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// TestEnqueueStoresTheRequest: a queued execution keeps the request's content and inputs (what
// the worker runs), refuses one too large to wait in a DynamoDB item with 413, and queues
// nothing then.
func TestEnqueueStoresTheRequest(t *testing.T) {
	st := newMemStore()
	q := &queue{}
	svc := newService(st, q, sessions.Limits{})
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello {{ variables.x }}"), Inputs: map[string]any{"x": "world"}})
	if err != nil {
		t.Fatal(err)
	}
	// The store writes the request as JSON.
	if got, err := json.Marshal(e.Request); err != nil || string(got) != `{"content":"hello {{ variables.x }}","inputs":{"x":"world"}}` {
		t.Errorf("stored request %s (%v)", got, err)
	}
	_, err = svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hi"), Inputs: map[string]any{"a": strings.Repeat("a", sessions.MaxAsyncBodyBytes/2), "b": strings.Repeat("b", sessions.MaxAsyncBodyBytes/2)}})
	if domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("a request over %d bytes: %v, want too large", sessions.MaxAsyncBodyBytes, err)
	}
	if len(q.bodies) != 1 {
		t.Errorf("%d jobs queued, want 1 (the refused request queues none)", len(q.bodies))
	}
}
