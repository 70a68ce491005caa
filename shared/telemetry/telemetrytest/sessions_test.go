package telemetrytest

import (
	"context"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
)

// heldQueue keeps the jobs sent, for a worker to take later.
type heldQueue struct {
	mu   sync.Mutex
	jobs []string
}

func (q *heldQueue) Send(_ context.Context, body, _ string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, body)
	return nil
}

// TestExecuteSpansAtCollector: an execute sent with a traceparent, run by the sessions feature
// (as the runtime function does) and queued and taken by a worker (as the worker function does,
// under a context of its own), makes an invoke_agent root whose parent is the caller's span,
// naming the session, the agent and the execution, at a real OTLP receiver.
func TestExecuteSpansAtCollector(t *testing.T) {
	rcv, tr := exporting(t)
	eng := engine.NewEngine(engine.ModelSet{Default: "bedrock", ByName: map[string]domain.Model{"bedrock": scripted{}}}, catalog{}, engine.Limits{}).
		WithTracing(engine.Tracing{Provider: tr.Provider(), Flush: tr.Flush})
	q := &heldQueue{}
	svc := sessions.New(sessions.Deps{Store: sessionstest.NewStore(), Engine: eng, Tools: catalog{}, Queue: q}, sessions.Limits{})
	p := domain.Principal{Owner: "alice", Company: "acme"}
	sess, err := svc.Create(context.Background(), p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{
		"name": "support", "agent_type": "react_agent", "system_prompt": "secret-system", "tools": []any{"lookup"}})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := callerContext()

	res, err := svc.Execute(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("where is A-1?")}, sessions.Observer{})
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	e, err := svc.Enqueue(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("and A-2?")})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	if len(q.jobs) != 1 {
		t.Fatalf("%d jobs queued, want 1", len(q.jobs))
	}
	if err := svc.ProcessJob(context.Background(), q.jobs[0]); err != nil {
		t.Fatalf("worker: %v", err)
	}
	var roots []Span
	for _, s := range rcv.Spans() {
		if s.Attrs["gen_ai.operation.name"] == "invoke_agent" && s.Attrs["agentorch.execution.id"] != nil {
			roots = append(roots, s)
		}
	}
	if len(roots) != 2 {
		t.Fatalf("%d run spans, want 2 (the execute's, the queued one's)", len(roots))
	}
	for i, want := range []string{res.Execution.ID, e.ID} {
		r := roots[i]
		if r.TraceID != callerTrace || r.ParentID != callerSpan {
			t.Errorf("run %d in trace %s under %s, want the caller's %s under %s", i, r.TraceID, r.ParentID, callerTrace, callerSpan)
		}
		if r.Attrs["gen_ai.conversation.id"] != sess.ID || r.Attrs["agentorch.execution.id"] != want {
			t.Errorf("run %d attributes %v, want session %s and execution %s", i, r.Attrs, sess.ID, want)
		}
	}
}
