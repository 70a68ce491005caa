package app_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// onceModel is the local model counting its calls; with gate set, its first call signals
// started and waits for gate, as a worker frozen mid-run (a killed process) never returns.
type onceModel struct {
	calls   atomic.Int32
	gate    chan struct{}
	started chan struct{}
}

func (m *onceModel) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	if m.calls.Add(1) == 1 && m.gate != nil {
		close(m.started)
		<-m.gate
	}
	time.Sleep(50 * time.Millisecond) // a model call takes a while: deliveries overlap it
	return localmodel.Model{}.Converse(ctx, req)
}

// recorded records the webhook events a service publishes.
type recorded struct {
	mu  sync.Mutex
	got []domain.WebhookEvent
}

func (r *recorded) Publish(_ context.Context, ev domain.WebhookEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, ev)
	return nil
}

func (r *recorded) events() []domain.WebhookEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]domain.WebhookEvent(nil), r.got...)
}

// onceRig is a worker's sessions service and a watchdog's on DynamoDB Local, with a counting
// model, a queue that keeps the jobs, a recording publisher, and the watchdog's clock ahead by
// later.
type onceRig struct {
	app      *app.App
	model    *onceModel
	jobs     *keptJobs
	ev       *recorded
	worker   *sessions.Service
	watchdog *sessions.Service
	later    atomic.Int64
	p        domain.Principal
}

type keptJobs struct {
	mu     sync.Mutex
	bodies []string
}

func (q *keptJobs) Send(_ context.Context, body, _ string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bodies = append(q.bodies, body)
	return nil
}

func newOnceRig(t *testing.T, model *onceModel) *onceRig {
	t.Helper()
	env := localstack.NewTestEnv(t)
	r := &onceRig{app: app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler)), model: model, jobs: &keptJobs{}, ev: &recorded{},
		p: domain.Principal{Owner: "o", Company: "co-" + time.Now().Format("150405.000000"), Scopes: []string{domain.ScopeSessionsWrite}}}
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	eng := engine.NewEngine(engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": model}}, reg, engine.Limits{})
	// The run's lease outlasts ClaimGrace, so that a sweep may find it live.
	r.worker = sessions.New(sessions.Deps{Store: r.app.Store, Engine: eng, Tools: reg, Queue: r.jobs, Events: r.ev}, sessions.Limits{RunLease: 5 * time.Minute})
	r.watchdog = sessions.New(sessions.Deps{Store: r.app.Store, Events: r.ev}, sessions.Limits{}).
		WithClock(func() time.Time { return time.Now().Add(time.Duration(r.later.Load())) })
	return r
}

// enqueue opens a session and queues "hello" in it; it returns the session, the execution and
// the job's body.
func (r *onceRig) enqueue(t *testing.T) (sessionID, execID, job string) {
	t.Helper()
	s, err := r.worker.Create(t.Context(), r.p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.worker.Enqueue(t.Context(), r.p, s.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	r.jobs.mu.Lock()
	defer r.jobs.mu.Unlock()
	return s.ID, e.ID, r.jobs.bodies[len(r.jobs.bodies)-1]
}

func (r *onceRig) execution(t *testing.T, sessionID, execID string) *domain.Execution {
	t.Helper()
	e, err := r.app.Store.GetExecution(t.Context(), sessionID, execID)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestJobDeliveredTwiceRunsOnceOnDynamoDB: one job delivered twice to the worker, one delivery
// after the other and both at once, runs once on DynamoDB Local: the model is called once, the
// execution is completed, the session holds the user's message and one reply.
func TestJobDeliveredTwiceRunsOnceOnDynamoDB(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		t.Run(map[bool]string{false: "sequential", true: "concurrent"}[concurrent], func(t *testing.T) {
			r := newOnceRig(t, &onceModel{})
			sid, eid, job := r.enqueue(t)
			errs := make([]error, 2)
			if concurrent {
				var wg sync.WaitGroup
				for i := range errs {
					wg.Go(func() { errs[i] = r.worker.ProcessJob(context.Background(), job) })
				}
				wg.Wait()
			} else {
				for i := range errs {
					errs[i] = r.worker.ProcessJob(context.Background(), job)
				}
			}
			for i, err := range errs {
				if err != nil {
					t.Errorf("delivery %d: %v", i+1, err)
				}
			}
			if n := r.model.calls.Load(); n != 1 {
				t.Errorf("the model was called %d times, want 1", n)
			}
			if e := r.execution(t, sid, eid); e.Status != domain.ExecCompleted {
				t.Errorf("status %s, want completed", e.Status)
			}
			msgs, _, _, err := r.worker.Messages(t.Context(), r.p, sid, 10, 0)
			if err != nil || len(msgs) != 2 {
				t.Errorf("the session holds %d messages (%v), want 2", len(msgs), err)
			}
		})
	}
}

// TestWatchdogFailsAKilledWorkerOnDynamoDB: a worker frozen mid-run on DynamoDB Local, its lease
// left held, is left alone by the watchdog while the lease lives and failed once it has ended
// (the watchdog's clock an hour on): failed with the reason, the lease released,
// execution.failed published once, the next message on the session runs, and the frozen
// worker, let go, changes nothing.
func TestWatchdogFailsAKilledWorkerOnDynamoDB(t *testing.T) {
	model := &onceModel{gate: make(chan struct{}), started: make(chan struct{})}
	r := newOnceRig(t, model)
	ctx := context.Background()
	sid, eid, job := r.enqueue(t)
	done := make(chan error, 1)
	go func() { done <- r.worker.ProcessJob(ctx, job) }()
	<-model.started

	r.later.Store(int64(2 * sessions.ClaimGrace))
	if rep, err := r.watchdog.Sweep(ctx); err != nil || r.execution(t, sid, eid).Status != domain.ExecRunning {
		t.Fatalf("sweep while the lease lives = %+v, %v; status %s", rep, err, r.execution(t, sid, eid).Status)
	}
	r.later.Store(int64(time.Hour))
	rep, err := r.watchdog.Sweep(ctx)
	if err != nil || rep.Failed < 1 {
		t.Fatalf("sweep past the lease = %+v, %v; want the execution failed", rep, err)
	}
	e := r.execution(t, sid, eid)
	if e.Status != domain.ExecFailed || !strings.Contains(e.Error, "stopped without finishing") {
		t.Errorf("execution = %s %q, want failed as lost", e.Status, e.Error)
	}
	if l, err := r.app.Store.LeaseOf(ctx, sid); err != nil || !l.Until.IsZero() {
		t.Errorf("lease after the sweep = %+v, %v; want released", l, err)
	}
	failed := 0
	for _, ev := range r.ev.events() {
		if ev.Type == domain.EventExecutionFailed && ev.Data["execution_id"] == eid {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("execution.failed published %d times for the execution, want 1", failed)
	}
	res, err := r.worker.Execute(ctx, r.p, sid, sessions.ExecuteRequest{Content: sessions.TextContent("again")}, sessions.Observer{})
	if err != nil || res.Execution.Status != domain.ExecCompleted {
		t.Fatalf("the next message: %v", err)
	}
	close(model.gate)
	if err := <-done; err != nil {
		t.Errorf("the woken worker: %v", err)
	}
	if e := r.execution(t, sid, eid); e.Status != domain.ExecFailed {
		t.Errorf("after the woken worker: %s, want still failed", e.Status)
	}
}

// TestWatchdogTaskSweeps: the watchdog function's task, as its main builds it from the
// application, sweeps without error.
func TestWatchdogTaskSweeps(t *testing.T) {
	env := localstack.NewTestEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	task, err := a.Task("watchdog")
	if err != nil {
		t.Fatal(err)
	}
	if err := task(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// ddbCalls counts the DynamoDB calls of a client, by operation.
type ddbCalls struct {
	mu  sync.Mutex
	ops []string
}

func (c *ddbCalls) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("ddbCalls",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.mu.Lock()
				c.ops = append(c.ops, awsmiddleware.GetOperationName(ctx))
				c.mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}

func (c *ddbCalls) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.ops
	c.ops = nil
	return out
}

// TestQueuedRunCalls: what queuing and running one execution costs in DynamoDB calls with the
// run-once claim: the enqueue reads the session and writes the execution (on the watchdog's
// list in the same PutItem); the worker reads the execution and the session with its lease,
// claims the execution (one PutItem, as it wrote "running" before), and runs as before.
func TestQueuedRunCalls(t *testing.T) {
	env := localstack.NewTestEnv(t)
	calls := &ddbCalls{}
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler), calls.option)
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	eng := engine.NewEngine(engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}}}, reg, engine.Limits{})
	jobs := &keptJobs{}
	svc := sessions.New(sessions.Deps{Store: a.Store, Engine: eng, Tools: reg, Queue: jobs}, sessions.Limits{})
	p := domain.Principal{Owner: "o", Company: "calls", Scopes: []string{domain.ScopeSessionsWrite}}
	s, err := svc.Create(t.Context(), p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	calls.take()
	if _, err := svc.Enqueue(t.Context(), p, s.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}); err != nil {
		t.Fatal(err)
	}
	enqueue := calls.take()
	if err := svc.ProcessJob(t.Context(), jobs.bodies[0]); err != nil {
		t.Fatal(err)
	}
	run := calls.take()
	t.Logf("enqueue: %d calls %v; worker: %d calls %v", len(enqueue), enqueue, len(run), run)
	if want := []string{"GetItem", "PutItem"}; !slices.Equal(enqueue, want) {
		t.Errorf("enqueue calls %v, want %v", enqueue, want)
	}
	if want := []string{"GetItem", "GetItem", "PutItem"}; len(run) < 3 || !slices.Equal(run[:3], want) {
		t.Errorf("the worker's first calls %v, want %v (read the execution, the session with its lease, claim)", run, want)
	}
}
