package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// recordedEvents records the webhook events a service publishes.
type recordedEvents struct {
	mu  sync.Mutex
	got []domain.WebhookEvent
}

func (e *recordedEvents) Publish(_ context.Context, ev domain.WebhookEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
	return nil
}

// of lists the events of one execution.
func (e *recordedEvents) of(execID string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.got {
		if ev.Data["execution_id"] == execID {
			out = append(out, ev.Type+" "+ev.Data["status"])
		}
	}
	return out
}

// heldQueue keeps what is sent to it: the test plays the worker.
type heldQueue struct {
	mu     sync.Mutex
	bodies []string
}

func (q *heldQueue) Send(_ context.Context, body, _ string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bodies = append(q.bodies, body)
	return nil
}

func (q *heldQueue) last(t *testing.T) string {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.bodies) == 0 {
		t.Fatal("nothing was queued")
	}
	return q.bodies[len(q.bodies)-1]
}

// cancelRig is the runtime group over the stack's DynamoDB Local records, whose engine offers
// the gate model as provider "gate" (a model call that blocks until its context is cancelled
// when the gate stays shut), with a recording publisher and a queue the test drains.
type cancelRig struct {
	s    *stack
	gate gateModel
	svc  *sessions.Service
	rt   http.Handler
	ev   *recordedEvents
	q    *heldQueue
	key  string
}

func newCancelRig(t *testing.T) *cancelRig {
	s := newStack(t)
	r := &cancelRig{s: s, gate: gateModel{open: make(chan struct{}), entered: make(chan struct{}, 1)}, ev: &recordedEvents{}, q: &heldQueue{}}
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}, "gate": r.gate}}
	registry := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	r.svc = sessions.New(sessions.Deps{Store: s.app.Store, Agents: s.app.Agents, Engine: engine.NewEngine(models, registry, engine.Limits{}),
		Tools: registry, Fetch: tools.NewURLFetcher(tools.Options{}), Queue: r.q, Events: r.ev}, sessions.Limits{})
	r.rt = api.NewRuntime(r.svc, api.Options{Auth: s.app.Auth})
	r.key = s.key("alice", "acme-cancel")
	return r
}

// slowSession runs its one node on the gate model; saveMessages says whether it keeps history.
func (r *cancelRig) slowSession(saveMessages bool) string {
	return r.s.session(r.key, `{"name":"Slow","agent_type":"llm_agent","system_prompt":"Be slow.","save_messages":`+
		map[bool]string{true: "true", false: "false"}[saveMessages]+`,"llm_config":{"provider":"gate"}}`)
}

func (r *cancelRig) cancel(t *testing.T, sid, execID string) response {
	t.Helper()
	return send(t, r.rt, req{method: "POST", path: "/api/v1/runtime/" + sid + "/executions/" + execID + "/cancel/", key: r.key})
}

// entered waits until the gate model has been called.
func (r *cancelRig) entered(t *testing.T) {
	t.Helper()
	select {
	case <-r.gate.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the model was never called")
	}
}

// active reads the session's active_execution_id.
func (r *cancelRig) active(t *testing.T, sid string) string {
	t.Helper()
	v, _ := r.s.ok("GET", "/api/v1/sessions/"+sid+"/", r.key, nil).json(t)["active_execution_id"].(string)
	return v
}

// TestCancelRunningExecute: a synchronous execute blocked in its model call is stopped by a
// cancel from another request (another process on AWS: the signal goes through DynamoDB). The
// execute answers its turn as cancelled, the cancel the cancelled execution, the user's message
// is kept, execution.cancelled is published, the next message runs, and a second cancel — or
// one of a completed execution — is a 409 that changes nothing.
func TestCancelRunningExecute(t *testing.T) {
	r := newCancelRig(t)
	sid := r.slowSession(true)
	type outcome struct {
		res response
	}
	done := make(chan outcome, 1)
	go func() {
		done <- outcome{send(t, r.rt, req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: r.key, body: `{"content":"take your time"}`})}
	}()
	r.entered(t)
	execID := r.active(t, sid)
	if execID == "" {
		t.Fatal("no active_execution_id on the session while its execute runs")
	}
	c := r.cancel(t, sid, execID)
	if c.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", c.status, c.body)
	}
	if got := c.json(t); got["status"] != domain.ExecCancelled || got["id"] != execID || got["completed_at"] == nil {
		t.Errorf("cancel answered %v", got)
	}
	var out outcome
	select {
	case out = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the execute did not end after the cancel")
	}
	if out.res.status != http.StatusOK {
		t.Fatalf("execute: %d %s", out.res.status, out.res.body)
	}
	res := out.res.json(t)
	meta := res["metadata"].(map[string]any)
	if res["status"] != domain.ExecCancelled || meta["stop_reason"] != sessions.StopCancelled || meta["execution_id"] != execID {
		t.Errorf("execute answered %v", res)
	}
	if got := r.ev.of(execID); strings.Join(got, ",") != domain.EventExecutionCancelled+" cancelled" {
		t.Errorf("published %v, want one execution.cancelled", got)
	}
	poll := r.s.ok("GET", "/api/v1/runtime/"+sid+"/executions/"+execID+"/", r.key, nil).json(t)
	if result, _ := poll["result"].(map[string]any); poll["status"] != domain.ExecCancelled || result == nil || result["status"] != domain.ExecCancelled {
		t.Errorf("poll: %v, want cancelled with its result", poll)
	}
	msgs := r.s.ok("GET", "/api/v1/runtime/"+sid+"/messages/", r.key, nil).json(t)["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "take your time" {
		t.Errorf("history %v: want the user's message, kept", msgs)
	}
	if a := r.active(t, sid); a != "" {
		t.Errorf("active_execution_id %s after the run ended", a)
	}

	// Finished: a second cancel is a 409 and changes nothing.
	again := r.cancel(t, sid, execID)
	if typ, _ := again.errorType(t); again.status != http.StatusConflict || typ != "conflict_error" {
		t.Errorf("second cancel: %d %s", again.status, again.body)
	}
	if got := r.ev.of(execID); len(got) != 1 {
		t.Errorf("published %v after the second cancel, want still one", got)
	}

	// The session is free: the next message runs (the gate is opened for it) and completes;
	// cancelling the completed execution is a 409 that leaves it completed.
	close(r.gate.open)
	next := send(t, r.rt, req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: r.key, body: `{"content":"now quickly"}`})
	if next.status != http.StatusOK || next.json(t)["status"] != domain.ExecCompleted {
		t.Fatalf("next message: %d %s", next.status, next.body)
	}
	doneID := next.json(t)["metadata"].(map[string]any)["execution_id"].(string)
	if c := r.cancel(t, sid, doneID); c.status != http.StatusConflict {
		t.Errorf("cancel of a completed execution: %d %s", c.status, c.body)
	}
	if poll := r.s.ok("GET", "/api/v1/runtime/"+sid+"/executions/"+doneID+"/", r.key, nil).json(t); poll["status"] != domain.ExecCompleted {
		t.Errorf("the completed execution after a refused cancel: %v", poll)
	}
	for _, id := range []string{"00000000-0000-4000-8000-000000000000", "not-an-id"} {
		if c := r.cancel(t, sid, id); c.status != http.StatusNotFound {
			t.Errorf("cancel of unknown %s: %d %s", id, c.status, c.body)
		}
	}
}

// TestCancelStream: a stream's events carry the run's execution_id; cancelling it ends the
// stream with its result, status cancelled. The session keeps no history (save_messages false),
// yet the cancelled execution is stored for the poll.
func TestCancelStream(t *testing.T) {
	r := newCancelRig(t)
	sid := r.slowSession(false)
	srv := httptest.NewServer(r.rt)
	defer srv.Close()
	hr, err := http.NewRequest("POST", srv.URL+"/api/v1/runtime/"+sid+"/execute/?stream=true", strings.NewReader(`{"content":"stream slowly"}`))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("x-api-key", r.key)
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var execID, name string
	var result map[string]any
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatal(err)
			}
			if name == api.StreamResult || name == api.StreamFailed {
				result = data
				break
			}
			if execID == "" && name == engine.EventNodeStarted {
				execID, _ = data["execution_id"].(string)
				if execID == "" {
					t.Fatalf("the first event has no execution_id: %v", data)
				}
				r.entered(t)
				if c := r.cancel(t, sid, execID); c.status != http.StatusOK {
					t.Fatalf("cancel: %d %s", c.status, c.body)
				}
			}
		}
		if result != nil {
			break
		}
	}
	if result == nil || result["status"] != domain.ExecCancelled {
		t.Fatalf("the stream ended with %s %v, want a result with status cancelled", name, result)
	}
	if poll := r.s.ok("GET", "/api/v1/runtime/"+sid+"/executions/"+execID+"/", r.key, nil).json(t); poll["status"] != domain.ExecCancelled {
		t.Errorf("poll: %v", poll)
	}
	if got := r.ev.of(execID); len(got) != 1 || got[0] != domain.EventExecutionCancelled+" cancelled" {
		t.Errorf("published %v", got)
	}
}

// TestCancelQueuedPausedAndWorker: a queued execution is cancelled at once and the worker then
// leaves its job alone; a paused one is cancelled at once and the session's next message runs;
// one the worker runs (another process) is stopped mid model call as a synchronous one is.
func TestCancelQueuedPausedAndWorker(t *testing.T) {
	r := newCancelRig(t)
	ctx := context.Background()

	// Queued: cancelled at once; the job, delivered later, runs nothing.
	sid := r.slowSession(true)
	q := send(t, r.rt, req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: r.key, body: `{"content":"later"}`})
	if q.status != http.StatusAccepted {
		t.Fatalf("async: %d %s", q.status, q.body)
	}
	queued := q.json(t)["id"].(string)
	if c := r.cancel(t, sid, queued); c.status != http.StatusOK || c.json(t)["status"] != domain.ExecCancelled {
		t.Fatalf("cancel of the queued execution: %d %s", c.status, c.body)
	}
	if err := r.svc.ProcessJob(ctx, r.q.last(t)); err != nil {
		t.Fatalf("the job of a cancelled execution: %v", err)
	}
	select {
	case <-r.gate.entered:
		t.Fatal("the worker ran a cancelled execution")
	default:
	}
	if poll := r.s.ok("GET", "/api/v1/runtime/"+sid+"/executions/"+queued+"/", r.key, nil).json(t); poll["status"] != domain.ExecCancelled {
		t.Errorf("poll after the job: %v", poll)
	}
	if got := r.ev.of(queued); len(got) != 1 || got[0] != domain.EventExecutionCancelled+" cancelled" {
		t.Errorf("published %v", got)
	}

	// Running in the worker: stopped mid model call, its job ends, the record says cancelled.
	q = send(t, r.rt, req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: r.key, body: `{"content":"in the worker"}`})
	running := q.json(t)["id"].(string)
	jobDone := make(chan error, 1)
	go func() { jobDone <- r.svc.ProcessJob(ctx, r.q.last(t)) }()
	r.entered(t)
	if c := r.cancel(t, sid, running); c.status != http.StatusOK || c.json(t)["status"] != domain.ExecCancelled {
		t.Fatalf("cancel of the worker's run: %d %s", c.status, c.body)
	}
	select {
	case err := <-jobDone:
		if err != nil {
			t.Errorf("the worker's job: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the worker's run did not end after the cancel")
	}
	if got := r.ev.of(running); len(got) != 1 || got[0] != domain.EventExecutionCancelled+" cancelled" {
		t.Errorf("published %v", got)
	}

	// Paused: cancelled at once, the session waits for nothing and the next message runs.
	fsid := r.s.session(r.key, functionAgent)
	paused := send(t, r.rt, req{method: "POST", path: "/api/v1/runtime/" + fsid + "/execute/", key: r.key, body: `{"content":"lookup {\"word\":\"otter\"}"}`})
	if paused.status != http.StatusOK || paused.json(t)["status"] != domain.ExecRequiresAction {
		t.Fatalf("paused: %d %s", paused.status, paused.body)
	}
	pausedID := paused.json(t)["metadata"].(map[string]any)["execution_id"].(string)
	if c := r.cancel(t, fsid, pausedID); c.status != http.StatusOK || c.json(t)["status"] != domain.ExecCancelled {
		t.Fatalf("cancel of the paused execution: %d %s", c.status, c.body)
	}
	if sess := r.s.ok("GET", "/api/v1/sessions/"+fsid+"/", r.key, nil).json(t); sess["required_action"] != nil {
		t.Errorf("the session still waits: %v", sess["required_action"])
	}
	// (The offline model joins the history's user text with the new message, so it may ask for
	// the tool again: what matters is that a new execution runs instead of a 409.)
	next := send(t, r.rt, req{method: "POST", path: "/api/v1/runtime/" + fsid + "/execute/", key: r.key, body: `{"content":"hello again"}`})
	if next.status != http.StatusOK || next.json(t)["metadata"].(map[string]any)["execution_id"] == pausedID {
		t.Errorf("next message after the cancel: %d %s", next.status, next.body)
	}
	if got := r.ev.of(pausedID); strings.Join(got, ",") != domain.EventExecutionRequiresAction+" requires_action,"+domain.EventExecutionCancelled+" cancelled" {
		t.Errorf("published %v", got)
	}
}
