package sessions_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// countingModel is the local model counting its calls; when gate is set, its first call
// signals started and then waits for gate to close, as a worker frozen mid-run (a killed
// process) would never return.
type countingModel struct {
	calls   atomic.Int32
	gate    chan struct{}
	started chan struct{}
}

func (m *countingModel) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	if m.calls.Add(1) == 1 && m.gate != nil {
		close(m.started)
		<-m.gate
	}
	return localmodel.Model{}.Converse(ctx, req)
}

// watchRig is a worker's service and a watchdog's on one store fake, with a counting model, a
// queue and a recording publisher, and one session of alice's.
type watchRig struct {
	st       *memStore
	q        *queue
	ev       *webhookEvents
	model    *countingModel
	worker   *sessions.Service
	watchdog *sessions.Service
	later    atomic.Int64 // how far the watchdog's clock is ahead of the worker's
	sess     *domain.Session
}

func newWatchRig(t *testing.T, model *countingModel) *watchRig {
	t.Helper()
	r := &watchRig{st: newMemStore(), q: &queue{}, ev: &webhookEvents{}, model: model}
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	eng := engine.NewEngine(engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": model}}, reg, engine.Limits{})
	d := sessions.Deps{Store: r.st, Engine: eng, Tools: reg, Queue: r.q, Events: r.ev}
	// The run's lease outlasts ClaimGrace, so that a sweep can find it live.
	r.worker = sessions.New(d, sessions.Limits{RunLease: 5 * time.Minute})
	r.watchdog = sessions.New(sessions.Deps{Store: r.st, Events: r.ev}, sessions.Limits{}).
		WithClock(func() time.Time { return time.Now().Add(time.Duration(r.later.Load())) })
	var err error
	r.sess, err = r.worker.Create(context.Background(), alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *watchRig) enqueue(t *testing.T) *domain.Execution {
	t.Helper()
	e, err := r.worker.Enqueue(context.Background(), alice, r.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (r *watchRig) status(t *testing.T, execID string) *domain.Execution {
	t.Helper()
	e, err := r.st.GetExecution(context.Background(), r.sess.ID, execID)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestJobDeliveredTwiceRunsOnce: one job delivered twice, one delivery after the other or both
// at once, runs its execution once: the model is called once, the execution is completed, and
// the session holds one user message and one reply.
func TestJobDeliveredTwiceRunsOnce(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		name := map[bool]string{false: "sequential", true: "concurrent"}[concurrent]
		t.Run(name, func(t *testing.T) {
			r := newWatchRig(t, &countingModel{})
			e := r.enqueue(t)
			body := job(r.sess.ID, e.ID)
			errs := make([]error, 2)
			if concurrent {
				var wg sync.WaitGroup
				for i := range errs {
					wg.Go(func() { errs[i] = r.worker.ProcessJob(context.Background(), body) })
				}
				wg.Wait()
			} else {
				for i := range errs {
					errs[i] = r.worker.ProcessJob(context.Background(), body)
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
			if got := r.status(t, e.ID).Status; got != domain.ExecCompleted {
				t.Errorf("status %q, want completed", got)
			}
			msgs, _, _, err := r.worker.Messages(context.Background(), alice, r.sess.ID, 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 2 {
				t.Errorf("the session holds %d messages, want the user's and one reply", len(msgs))
			}
		})
	}
}

// TestWatchdogFailsAKilledWorkersRun: a worker that froze mid-run (its model call never
// returns, its lease left held) is found by the watchdog once the lease has ended (the
// watchdog's clock a minute past it): the execution is failed with the reason, the lease is
// released, execution.failed is published once, and the next message on the session runs. The
// frozen worker, let go afterwards, changes nothing: its commit finds the lease gone.
func TestWatchdogFailsAKilledWorkersRun(t *testing.T) {
	model := &countingModel{gate: make(chan struct{}), started: make(chan struct{})}
	r := newWatchRig(t, model)
	ctx := context.Background()
	e := r.enqueue(t)
	done := make(chan error, 1)
	go func() { done <- r.worker.ProcessJob(ctx, job(r.sess.ID, e.ID)) }()
	<-model.started

	// While the lease lives, the watchdog leaves the run alone.
	r.later.Store(int64(2 * sessions.ClaimGrace))
	rep, err := r.watchdog.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || r.status(t, e.ID).Status != domain.ExecRunning {
		t.Fatalf("a live run was settled: %+v, status %s", rep, r.status(t, e.ID).Status)
	}

	if rep.Postponed != 1 {
		t.Errorf("sweep during the run = %+v, want it postponed", rep)
	}
	r.later.Store(int64(time.Hour)) // well past the worker's lease
	rep, err = r.watchdog.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 {
		t.Errorf("sweep = %+v, want one execution failed", rep)
	}
	got := r.status(t, e.ID)
	if got.Status != domain.ExecFailed || got.ErrorType != "api_error" || !strings.Contains(got.Error, "stopped without finishing") || got.CompletedAt == nil {
		t.Errorf("execution = %s %s %q, want failed with the worker's loss", got.Status, got.ErrorType, got.Error)
	}
	lease, err := r.st.LeaseOf(ctx, r.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !lease.Until.IsZero() {
		t.Errorf("the session's lease is held until %v after the watchdog, want released", lease.Until)
	}
	want := []domain.WebhookEvent{{Type: domain.EventExecutionFailed, Company: "acme",
		Data: map[string]string{"session_id": r.sess.ID, "execution_id": e.ID, "status": "failed"}}}
	if d := cmp.Diff(want, r.ev.got); d != "" {
		t.Errorf("published (-want +got):\n%s", d)
	}
	// A second sweep finds nothing due.
	if rep, err := r.watchdog.Sweep(ctx); err != nil || rep.Due != 0 {
		t.Errorf("second sweep = %+v, %v; want nothing due", rep, err)
	}

	res, err := r.worker.Execute(ctx, alice, r.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("again")}, sessions.Observer{})
	if err != nil {
		t.Fatalf("the next message: %v", err)
	}
	if res.Execution.Status != domain.ExecCompleted {
		t.Errorf("the next message's execution is %s", res.Execution.Status)
	}

	close(model.gate) // the frozen worker wakes
	if err := <-done; err != nil {
		t.Errorf("the woken worker: %v", err)
	}
	if got := r.status(t, e.ID); got.Status != domain.ExecFailed {
		t.Errorf("after the woken worker the execution is %s, want still failed", got.Status)
	}
	if len(r.ev.got) != 2 { // the failure, then the next message's completion
		t.Errorf("published %d events, want 2: %+v", len(r.ev.got), r.ev.got)
	}
}

// TestRedeliveryOfALostRun: a job delivered again while its run is live does nothing; delivered
// after the run's lease ended (the worker died), it fails the execution as lost at once, without
// running it again.
func TestRedeliveryOfALostRun(t *testing.T) {
	model := &countingModel{gate: make(chan struct{}), started: make(chan struct{})}
	r := newWatchRig(t, model)
	ctx := context.Background()
	e := r.enqueue(t)
	body := job(r.sess.ID, e.ID)
	done := make(chan error, 1)
	go func() { done <- r.worker.ProcessJob(ctx, body) }()
	<-model.started
	defer func() {
		close(model.gate)
		if err := <-done; err != nil {
			t.Errorf("the woken worker: %v", err)
		}
	}()

	if err := r.worker.ProcessJob(ctx, body); err != nil {
		t.Fatalf("a redelivery during the run: %v", err)
	}
	if got := r.status(t, e.ID).Status; got != domain.ExecRunning {
		t.Fatalf("after a redelivery during the run: %s", got)
	}
	// The same redelivery an hour later: the worker is gone.
	r.later.Store(int64(time.Hour))
	if err := r.watchdog.ProcessJob(ctx, body); err != nil {
		t.Fatalf("a redelivery after the lease: %v", err)
	}
	if got := r.status(t, e.ID); got.Status != domain.ExecFailed || !strings.Contains(got.Error, "stopped without finishing") {
		t.Errorf("after a redelivery past the lease: %s %q, want failed as lost", got.Status, got.Error)
	}
	if n := model.calls.Load(); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}
}

// TestWatchdogEndsALostQueuedJob: an execution still queued past QueuedLimit (its job lost by
// both the queue and its dead-letter processor) is failed by the watchdog; one queued for less
// is left to its job.
func TestWatchdogEndsALostQueuedJob(t *testing.T) {
	r := newWatchRig(t, &countingModel{})
	ctx := context.Background()
	e := r.enqueue(t)
	r.later.Store(int64(sessions.QueuedLimit / 2))
	if rep, err := r.watchdog.Sweep(ctx); err != nil || rep.Due != 0 {
		t.Fatalf("sweep within the limit = %+v, %v; want nothing due", rep, err)
	}
	r.later.Store(int64(sessions.QueuedLimit + time.Minute))
	if rep, err := r.watchdog.Sweep(ctx); err != nil || rep.Failed != 1 {
		t.Fatalf("sweep past the limit = %+v, %v; want one failed", rep, err)
	}
	if got := r.status(t, e.ID); got.Status != domain.ExecFailed || !strings.Contains(got.Error, "waited in the queue") {
		t.Errorf("execution = %s %q", got.Status, got.Error)
	}
	// Its job, should it come after all, runs nothing.
	if err := r.worker.ProcessJob(ctx, job(r.sess.ID, e.ID)); err != nil || r.model.calls.Load() != 0 {
		t.Errorf("the late job: %v, %d model calls", err, r.model.calls.Load())
	}
}
