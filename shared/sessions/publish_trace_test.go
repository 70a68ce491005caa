package sessions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// tracedRig is a sessions service whose engine records its spans (or, untraced, none), publishing
// through the webhooks' real publish side onto a queue that keeps the messages.
type tracedRig struct {
	spans *tracetest.SpanRecorder
	hooks *queue // the delivery queue
	jobs  *queue // the execution queue
	svc   *sessions.Service
	sess  *domain.Session
}

func newTracedRig(t *testing.T, traced bool, model domain.Model) *tracedRig {
	t.Helper()
	r := &tracedRig{spans: tracetest.NewSpanRecorder(), hooks: &queue{}, jobs: &queue{}}
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	eng := engine.NewEngine(engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": model}}, reg, engine.Limits{})
	if traced {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		eng = eng.WithTracing(engine.Tracing{Provider: tp})
	}
	r.svc = sessions.New(sessions.Deps{Store: newMemStore(), Engine: eng, Tools: reg, Queue: r.jobs,
		Events: webhooks.NewDeliverer(nil, nil, r.hooks, nil)}, sessions.Limits{})
	var err error
	r.sess, err = r.svc.Create(context.Background(), alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// published is the traceparent of the delivery queue's message i ("" when it has none).
func (r *tracedRig) published(t *testing.T, i int) string {
	t.Helper()
	r.hooks.mu.Lock()
	defer r.hooks.mu.Unlock()
	if len(r.hooks.bodies) <= i {
		t.Fatalf("%d events published, want message %d", len(r.hooks.bodies), i)
	}
	var msg struct {
		Event struct {
			Trace map[string]string `json:"trace"`
		} `json:"event"`
	}
	if err := json.Unmarshal([]byte(r.hooks.bodies[i]), &msg); err != nil {
		t.Fatal(err)
	}
	return msg.Event.Trace["traceparent"]
}

// runSpan is the traceparent of the recorded run span (invoke_agent) of execution id, and its
// parent's span id.
func (r *tracedRig) runSpan(t *testing.T, id string) (traceparent, parent string) {
	t.Helper()
	for _, s := range r.spans.Ended() {
		if !strings.HasPrefix(s.Name(), "invoke_agent") {
			continue
		}
		for _, a := range s.Attributes() {
			if string(a.Key) == "agentorch.execution.id" && a.Value.AsString() == id {
				sc := s.SpanContext()
				return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String(), s.Parent().SpanID().String()
			}
		}
	}
	t.Fatalf("no invoke_agent span of execution %s among %d", id, len(r.spans.Ended()))
	return "", ""
}

// withTraceparent is ctx as the API's edge makes it from a caller's traceparent.
func withTraceparent(tp string) context.Context {
	h := http.Header{}
	h.Set("traceparent", tp)
	return propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
}

const callerTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestPublishedUnderRunSpan: with tracing on, the event an execute publishes carries the run's
// own invoke_agent span context, so its delivery joins the run's trace: a synchronous execute
// and a queued one sent without a traceparent, and one sent with one (the run span, the
// caller's child, rather than the caller's span).
func TestPublishedUnderRunSpan(t *testing.T) {
	r := newTracedRig(t, true, localmodel.Model{})
	res, err := r.svc.Execute(context.Background(), alice, r.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := r.runSpan(t, res.Execution.ID); r.published(t, 0) != want {
		t.Errorf("execute without traceparent published under %q, want the run span %q", r.published(t, 0), want)
	}

	e, err := r.svc.Enqueue(context.Background(), alice, r.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.svc.ProcessJob(context.Background(), r.jobs.bodies[0]); err != nil {
		t.Fatal(err)
	}
	if want, _ := r.runSpan(t, e.ID); r.published(t, 1) != want {
		t.Errorf("queued run without traceparent published under %q, want the run span %q", r.published(t, 1), want)
	}

	res, err = r.svc.Execute(withTraceparent(callerTraceparent), alice, r.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	want, parent := r.runSpan(t, res.Execution.ID)
	if parent != "00f067aa0ba902b7" || !strings.HasPrefix(want, "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
		t.Fatalf("run span %s (parent %s) is not the caller's child", want, parent)
	}
	if got := r.published(t, 2); got != want {
		t.Errorf("execute with traceparent published under %q, want the run span %q", got, want)
	}
}

// TestPublishedUntraced: with tracing off nothing changes: an execute without a traceparent
// publishes none, one with a traceparent publishes the caller's.
func TestPublishedUntraced(t *testing.T) {
	r := newTracedRig(t, false, localmodel.Model{})
	if _, err := r.svc.Execute(context.Background(), alice, r.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Execute(withTraceparent(callerTraceparent), alice, r.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{}); err != nil {
		t.Fatal(err)
	}
	if got := [2]string{r.published(t, 0), r.published(t, 1)}; got != [2]string{"", callerTraceparent} {
		t.Errorf("published under %q, want none and the caller's", got)
	}
}

// failingModel fails every call, as a provider that is down.
type failingModel struct{}

func (failingModel) Converse(context.Context, domain.ModelRequest) (*domain.ModelResponse, error) {
	return nil, &domain.Error{Kind: domain.KindOverloaded, Message: "The model is overloaded"}
}

// TestQueuedFailurePublishedUnderRunSpan: with tracing on, a queued run whose model fails is
// recorded failed, and its execution.failed carries the run's invoke_agent span context.
func TestQueuedFailurePublishedUnderRunSpan(t *testing.T) {
	r := newTracedRig(t, true, failingModel{})
	e, err := r.svc.Enqueue(context.Background(), alice, r.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.svc.ProcessJob(context.Background(), r.jobs.bodies[0]) // overloaded: the job's own fate
	if _, got, _, err := r.svc.GetExecution(context.Background(), alice, r.sess.ID, e.ID); err != nil || got.Status != domain.ExecFailed {
		t.Fatalf("queued run: %v %+v", err, got)
	}
	if want, _ := r.runSpan(t, e.ID); r.published(t, 0) != want {
		t.Errorf("execution.failed published under %q, want the run span %q", r.published(t, 0), want)
	}
}
