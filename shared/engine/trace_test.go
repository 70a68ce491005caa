package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentorch/agentorch/shared/domain"
)

// TestModelCallEventContent: a model_call event carries the model's output text (cut as tool
// outputs are) always, and what the model was sent only under the content opt-in.
func TestModelCallEventContent(t *testing.T) {
	long := string(make([]byte, 3000))
	for _, capture := range []bool{false, true} {
		model := &fakeModel{reply: func(_ context.Context, _ domain.ModelRequest, n int) (*domain.ModelResponse, error) {
			if n == 1 {
				return toolCalls("Let me look.", "c1", "calc"), nil
			}
			return text("It is 4." + long), nil
		}}
		g := mustGraph(t, `{"name":"r","agent_type":"react_agent","system_prompt":"Be brief.","tools":["calc"]}`, toolSet{"calc": constTool("calc", "4")})
		rec := &recorder{}
		eng := NewEngine(models(model), toolSet{"calc": constTool("calc", "4")}, Limits{}).WithTracing(Tracing{CaptureContent: capture})
		if _, err := eng.Run(context.Background(), Run{Graph: g, Input: userInput("2+2?"), Emit: rec.emit, NewID: seqIDs()}); err != nil {
			t.Fatal(err)
		}
		calls := rec.eventsOf(EventModelCall)
		if len(calls) != 2 {
			t.Fatalf("%d model_call events, want 2", len(calls))
		}
		if got := calls[0].Data["output"]; got != "Let me look." {
			t.Errorf("first output %q", got)
		}
		if got := calls[1].Data["output"].(string); got != domain.Clip("It is 4."+long, maxEventOutput) || len(got) > maxEventOutput+len("…") {
			t.Errorf("second output of %d bytes, want it cut at %d", len(got), maxEventOutput)
		}
		p, ok := calls[1].Data["prompt"]
		if ok != capture {
			t.Fatalf("capture %v: prompt present %v", capture, ok)
		}
		if !capture {
			continue
		}
		want := map[string]any{"system": "Be brief.", "messages": []map[string]any{
			{"role": "user", "text": "2+2?"},
			{"role": "assistant", "text": "Let me look.\n[tool call calc {\"q\":\"c1\"}]"},
			{"role": "user", "text": "[tool result c1] 4"},
		}}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("prompt (-want +got):\n%s", diff)
		}
	}
}

// defaulted is a model that says which model it calls when a node names none.
type defaulted struct{ fakeModel }

func (*defaulted) DefaultModel() string { return "house-model" }

// TestDefaultModelNamesChatSpan: a node that names no model is traced as a call of its provider's
// default model.
func TestDefaultModelNamesChatSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	m := &defaulted{fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) { return text("hi"), nil }}}
	g := mustGraph(t, `{"name":"a","agent_type":"llm_agent","system_prompt":"x"}`, nil)
	eng := NewEngine(models(m), nil, Limits{}).WithTracing(Tracing{Provider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	if _, err := eng.Run(context.Background(), Run{Graph: g, Input: userInput("hello")}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	if !slices.Contains(names, "chat house-model") {
		t.Errorf("spans %v, want chat house-model", names)
	}
}
