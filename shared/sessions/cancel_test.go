package sessions_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// holdModel answers as the local model, except that its calls after the first free ones wait
// until release is closed or their context ends; entered receives a token as one starts to wait.
type holdModel struct {
	free    int32
	calls   *atomic.Int32
	release chan struct{}
	entered chan struct{}
}

func newHoldModel(free int32) holdModel {
	return holdModel{free: free, calls: &atomic.Int32{}, release: make(chan struct{}), entered: make(chan struct{}, 1)}
}

func (m holdModel) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	if m.calls.Add(1) > m.free {
		select {
		case m.entered <- struct{}{}:
		default:
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return localmodel.Model{}.Converse(ctx, req)
}

func (m holdModel) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-m.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the model was never called")
	}
}

// holdService is a sessions service whose only model is m, publishing to ev.
func holdService(st *memStore, m holdModel, ev *webhookEvents, limits sessions.Limits) *sessions.Service {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": m}}
	return sessions.New(sessions.Deps{Store: st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg, Events: ev}, limits)
}

// startHeldRun creates a session on svc and starts an execute in it that m holds in its model
// call, returning once the call waits; done receives the execute's error.
func startHeldRun(t *testing.T, svc *sessions.Service, m holdModel) (*domain.Session, <-chan error) {
	t.Helper()
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("slow")}, sessions.Observer{})
		done <- err
	}()
	m.waitEntered(t)
	return sess, done
}

// clientAgent has a function tool the client runs: "lookup {…}" pauses the run for its result.
var clientAgent = map[string]any{"name": "Client", "agent_type": "react_agent", "system_prompt": "Use tools.",
	"tools": []any{map[string]any{"type": "function", "name": "lookup", "parameters": map[string]any{"type": "object"}}}}

// TestCancelAnswerBeingApplied: an answer applied synchronously runs under the paused
// execution's id (the lease learns it once the session is read): a cancel of that execution
// stops the answer's run mid model call, which commits the execution cancelled, and the session
// waits for nothing.
func TestCancelAnswerBeingApplied(t *testing.T) {
	st, ev, m := newMemStore(), &webhookEvents{}, newHoldModel(1)
	svc := holdService(st, m, ev, sessions.Limits{})
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(clientAgent)})
	if err != nil {
		t.Fatal(err)
	}
	paused, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent(`lookup {"word":"otter"}`)}, sessions.Observer{})
	if err != nil || paused.Execution.Status != domain.ExecRequiresAction {
		t.Fatalf("paused: %v %+v", err, paused)
	}
	id := paused.Execution.ID
	answer := &sessions.Answer{HasResults: true, ToolResults: []sessions.ToolResultInput{{ToolCallID: paused.Pending.ToolCalls[0].ID, Output: "a river animal"}}}
	type outcome struct {
		res *sessions.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Answer: answer}, sessions.Observer{})
		done <- outcome{res, err}
	}()
	m.waitEntered(t)
	e, stopped, err := svc.Cancel(ctx, alice, sess.ID, id)
	if err != nil || !stopped || e.Status != domain.ExecCancelled || e.StopReason != sessions.StopCancelled {
		t.Fatalf("cancel: %v, stopped %v, %+v", err, stopped, e)
	}
	out := <-done
	if out.err != nil || out.res.Execution.Status != domain.ExecCancelled || out.res.Execution.ID != id {
		t.Fatalf("the answer's execute: %v %+v", out.err, out.res)
	}
	got, err := st.GetSession(ctx, sess.ID)
	if err != nil || got.Pending != nil || got.ActiveExecutionID != "" {
		t.Errorf("session after the cancel: %v, pending %+v, active %q", err, got.Pending, got.ActiveExecutionID)
	}
	if n := len(ev.got); n != 2 || ev.got[1].Type != domain.EventExecutionCancelled {
		t.Errorf("published %+v, want requires_action then cancelled", ev.got)
	}
}

// TestCancelDeadRun: an execution recorded running whose worker died (no live lease names it
// within LeaseWait and a second) is settled cancelled by the cancel itself, under the session's
// lease, which is then free.
func TestCancelDeadRun(t *testing.T) {
	st, ev := newMemStore(), &webhookEvents{}
	svc := holdService(st, newHoldModel(100), ev, sessions.Limits{LeaseWait: 10 * time.Millisecond})
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	dead := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: sess.ID, Status: domain.ExecRunning,
		Events: []map[string]any{}, CreatedAt: time.Now().UTC(), Request: map[string]any{"content": "x"}}
	if err := st.PutExecution(ctx, dead); err != nil {
		t.Fatal(err)
	}
	e, stopped, err := svc.Cancel(ctx, alice, sess.ID, dead.ID)
	if err != nil || !stopped || e.Status != domain.ExecCancelled || e.CompletedAt == nil || e.Request != nil {
		t.Fatalf("cancel: %v, stopped %v, %+v", err, stopped, e)
	}
	if stored, _ := st.GetExecution(ctx, sess.ID, dead.ID); stored.Status != domain.ExecCancelled {
		t.Errorf("stored %s", stored.Status)
	}
	if len(ev.got) != 1 || ev.got[0].Type != domain.EventExecutionCancelled {
		t.Errorf("published %+v", ev.got)
	}
	if _, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("next")}, sessions.Observer{}); err != nil {
		t.Errorf("next message: %v", err)
	}
}

// TestRunHeartbeat: a run that outlasts its lease's first span keeps the session, since its
// supervisor extends the lease; without the heartbeat another execute would take it.
func TestRunHeartbeat(t *testing.T) {
	st, m := newMemStore(), newHoldModel(0)
	limits := sessions.Limits{CancelPoll: 50 * time.Millisecond, Heartbeat: 50 * time.Millisecond, RunLease: 200 * time.Millisecond, LeaseWait: 10 * time.Millisecond}
	svc := holdService(st, m, &webhookEvents{}, limits)
	ctx := context.Background()
	sess, done := startHeldRun(t, svc, m)
	time.Sleep(3 * limits.RunLease) // the first span is long over
	if _, err := st.AcquireSession(ctx, alice, sess.ID, uuid.NewString(), time.Now().Add(time.Minute), time.Now()); domain.KindOf(err) != domain.KindConflict {
		t.Fatalf("acquire while the run lives: %v, want conflict (the heartbeat keeps the lease)", err)
	}
	close(m.release)
	if err := <-done; err != nil {
		t.Errorf("the run: %v", err)
	}
}

// TestRunLosesLease: a run whose lease is taken from it (its heartbeat came too late) stops at
// its next heartbeat and commits nothing: an overloaded error saying so.
func TestRunLosesLease(t *testing.T) {
	st, m := newMemStore(), newHoldModel(0)
	limits := sessions.Limits{Heartbeat: 300 * time.Millisecond, RunLease: 50 * time.Millisecond}
	svc := holdService(st, m, &webhookEvents{}, limits)
	ctx := context.Background()
	sess, done := startHeldRun(t, svc, m)
	var taken bool
	for end := time.Now().Add(10 * time.Second); !taken && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		_, err := st.AcquireSession(ctx, alice, sess.ID, uuid.NewString(), time.Now().Add(time.Minute), time.Now())
		taken = err == nil
	}
	if !taken {
		t.Fatal("the run's lease never expired")
	}
	select {
	case err := <-done:
		if domain.KindOf(err) != domain.KindOverloaded {
			t.Errorf("the run: %v, want overloaded (lease lost)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run went on without its lease")
	}
	if msgs, _, _ := st.Messages(ctx, sess.ID, 10, 0); len(msgs) != 0 {
		t.Errorf("the run without its lease stored %d messages", len(msgs))
	}
}
