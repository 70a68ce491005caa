package sessions_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// spanModel answers "ok" and records the span context each call was made under.
type spanModel struct {
	mu   sync.Mutex
	seen []trace.SpanContext
}

func (m *spanModel) Converse(ctx context.Context, _ domain.ModelRequest) (*domain.ModelResponse, error) {
	m.mu.Lock()
	m.seen = append(m.seen, trace.SpanContextFromContext(ctx))
	m.mu.Unlock()
	return &domain.ModelResponse{Parts: []domain.Part{{Type: domain.PartText, Text: "ok"}}, StopReason: domain.StopEndTurn}, nil
}

// TestQueuedRunJoinsCallersTrace: the trace context an asynchronous execute was made under
// travels in its job, so the worker's run (taking the job under a context of its own) runs under
// it; a job queued under none runs under none.
func TestQueuedRunJoinsCallersTrace(t *testing.T) {
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	model, q := &spanModel{}, &queue{}
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	eng := engine.NewEngine(engine.ModelSet{Default: "rec", ByName: map[string]domain.Model{"rec": model}}, reg, engine.Limits{})
	svc := sessions.New(sessions.Deps{Store: newMemStore(), Engine: eng, Tools: reg, Queue: q}, sessions.Limits{})
	h := http.Header{}
	h.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
	h.Set("tracestate", "vendor=x")
	traced := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	for _, ctx := range []context.Context{traced, context.Background()} {
		sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}); err != nil {
			t.Fatal(err)
		}
	}
	if len(q.bodies) != 2 {
		t.Fatalf("%d jobs, want 2", len(q.bodies))
	}
	for _, body := range q.bodies {
		if err := svc.ProcessJob(context.Background(), body); err != nil {
			t.Fatalf("job %s: %v", body, err)
		}
	}
	if len(model.seen) != 2 {
		t.Fatalf("%d model calls, want 2", len(model.seen))
	}
	if sc := model.seen[0]; sc.TraceID().String() != traceID || sc.SpanID().String() != spanID || !sc.IsRemote() || sc.TraceState().String() != "vendor=x" {
		t.Errorf("the traced job ran under %v, want the caller's context", sc)
	}
	if sc := model.seen[1]; sc.IsValid() {
		t.Errorf("the untraced job ran under %v, want none", sc)
	}
}
