package sessions_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
	"github.com/google/go-cmp/cmp"
)

// memStore is an in-memory sessions.Store with the adapter's lease semantics, for feature tests
// (the DynamoDB adapter has its own tests against DynamoDB Local).
type memStore struct {
	mu       sync.Mutex
	sessions map[string]*domain.Session
	leases   map[string]lease
	msgs     map[string][]domain.Message
	execs    map[string]*domain.Execution
	commits  int
	handed   int // executions EachExecution handed over
}

type lease struct {
	id    string
	until time.Time
}

func newMemStore() *memStore {
	return &memStore{sessions: map[string]*domain.Session{}, leases: map[string]lease{}, msgs: map[string][]domain.Message{},
		execs: map[string]*domain.Execution{}}
}

func clone[T any](v *T) *T { c := *v; return &c }

func (m *memStore) CreateSession(_ context.Context, s *domain.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[s.ID] = clone(s)
	return nil
}

func (m *memStore) GetSession(_ context.Context, id string) (*domain.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return clone(s), nil
}

func (m *memStore) ListSessions(context.Context, string, string, int, int) ([]*domain.Session, bool, error) {
	return nil, false, nil
}

func (m *memStore) DeleteSession(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}

func (m *memStore) AcquireSession(_ context.Context, p domain.Principal, id, leaseID string, until, now time.Time) (*domain.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	switch {
	case !ok:
		return nil, domain.ErrNotFound
	case !s.CanAccess(p):
		return nil, domain.ErrPermission
	case m.leases[id].id != "" && m.leases[id].until.After(now):
		return nil, &domain.Error{Kind: domain.KindConflict, Message: "busy"}
	}
	m.leases[id] = lease{leaseID, until}
	return clone(s), nil
}

func (m *memStore) ReleaseSession(_ context.Context, id, leaseID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases[id].id == leaseID {
		delete(m.leases, id)
	}
	return nil
}

func (m *memStore) History(_ context.Context, id string, take func(domain.Message) bool) ([]domain.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []domain.Message
	for _, msg := range slices.Backward(m.msgs[id]) {
		if !take(msg) {
			break
		}
		out = append(out, msg)
	}
	slices.Reverse(out)
	return out, nil
}

func (m *memStore) Commit(_ context.Context, c domain.Commit) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases[c.Session.ID].id != c.LeaseID {
		return &domain.Error{Kind: domain.KindConflict, Message: "lease lost"}
	}
	m.commits++
	m.sessions[c.Session.ID] = clone(c.Session)
	m.msgs[c.Session.ID] = append(m.msgs[c.Session.ID], c.Messages...)
	if c.Execution != nil {
		m.execs[c.Execution.ID] = clone(c.Execution)
	}
	delete(m.leases, c.Session.ID)
	return nil
}

func (m *memStore) PutExecution(_ context.Context, e *domain.Execution) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.execs[e.ID] = clone(e)
	return nil
}

func (m *memStore) GetExecution(_ context.Context, _, id string) (*domain.Execution, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.execs[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return clone(e), nil
}

// EachExecution hands the session's executions over in id order, as the adapter's sort key
// does, counting them in handed.
func (m *memStore) EachExecution(_ context.Context, sessionID string, each func(*domain.Execution) bool) error {
	m.mu.Lock()
	var list []*domain.Execution
	for _, e := range m.execs {
		if e.SessionID == sessionID {
			list = append(list, clone(e))
		}
	}
	m.mu.Unlock()
	slices.SortFunc(list, func(a, b *domain.Execution) int { return strings.Compare(a.ID, b.ID) })
	for _, e := range list {
		m.mu.Lock()
		m.handed++
		m.mu.Unlock()
		if !each(e) {
			return nil
		}
	}
	return nil
}
func (m *memStore) Messages(context.Context, string, int, int) ([]domain.Message, bool, error) {
	return nil, false, nil
}
func (m *memStore) FindMessage(context.Context, string) (*domain.Message, string, error) {
	return nil, "", domain.ErrNotFound
}
func (m *memStore) PutFeedback(_ context.Context, f *domain.Feedback) (*domain.Feedback, error) {
	return f, nil
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
	res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: "hello"}, sessions.Observer{})
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
	_, err = svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: "hello"}, sessions.Observer{})
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
	e, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: "hello"})
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
	bad, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: "hi {{ variables.x }}"})
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
	e, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: "hello {{ variables.x }}", Inputs: map[string]any{"x": "world"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"content": "hello {{ variables.x }}", "inputs": map[string]any{"x": "world"}}
	if d := cmp.Diff(want, e.Request); d != "" {
		t.Errorf("stored request (-want +got):\n%s", d)
	}
	_, err = svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: "hi", Inputs: map[string]any{"a": strings.Repeat("a", sessions.MaxAsyncBodyBytes/2), "b": strings.Repeat("b", sessions.MaxAsyncBodyBytes/2)}})
	if domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("a request over %d bytes: %v, want too large", sessions.MaxAsyncBodyBytes, err)
	}
	if len(q.bodies) != 1 {
		t.Errorf("%d jobs queued, want 1 (the refused request queues none)", len(q.bodies))
	}
}
