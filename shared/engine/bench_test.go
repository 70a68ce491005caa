package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/localmodel"
)

// benchHistory is a stored conversation of n messages, alternating user and assistant.
func benchHistory(n int) []Message {
	h := make([]Message, n)
	for i := range h {
		role := domain.RoleUser
		if i%2 == 1 {
			role = domain.RoleAssistant
		}
		h[i] = Message{Role: role, Content: fmt.Sprintf("message %d of the conversation so far", i), Visible: true}
	}
	return h
}

// BenchmarkEngineOverhead compares one execute of a single llm_agent through the engine (as the
// sessions feature runs it: random message ids, every event recorded) with the hand-written loop
// the engine is held to: the same history turns, one call of the local model and one message,
// with no graph, events or concurrency. The engine's overhead is engine ÷ hand-written.
//
// On a loaded machine count instructions, which other processes do not change:
//
//	go test -c -o /tmp/engine.test ./shared/engine
//	GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//	  /tmp/engine.test -test.run '^$' -test.bench 'EngineOverhead/engine$' -test.benchtime 5001x -test.cpu 1
//
// less the same with -test.benchtime 1x, divided by 5000 (54.6k per execute, hand-written 46.5k;
// 103k before the engine ran a one-node step on the caller's goroutine). "engine traced" records
// the run's spans (invoke_agent twice, chat) as tracing on does, before any export.
func BenchmarkEngineOverhead(b *testing.B) {
	ctx := context.Background()
	model := localmodel.Model{}
	g := mustGraph(b, `{"name":"Helper","agent_type":"llm_agent","system_prompt":"You are terse.",
		"llm_config":{"provider":"local","model":"dev"}}`, nil)
	history := benchHistory(20)
	input := []domain.Part{{Type: domain.PartText, Text: "hello there"}}

	b.Run("engine", func(b *testing.B) {
		e := NewEngine(ModelSet{Default: "local", ByName: map[string]domain.Model{"local": model}}, nil, Limits{})
		var events []Event
		b.ReportAllocs()
		for b.Loop() {
			events = events[:0]
			res, err := e.Run(ctx, Run{Graph: g, History: history, Input: input,
				Emit: func(ev Event) { events = append(events, ev) }})
			if err != nil || len(res.Messages) != 1 || len(events) != 3 {
				b.Fatalf("%+v, %d events, %v", res, len(events), err)
			}
		}
	})
	// As "engine", recording its spans (an SDK provider with no exporter): what tracing on adds
	// before any export.
	b.Run("engine traced", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider()
		e := NewEngine(ModelSet{Default: "local", ByName: map[string]domain.Model{"local": model}}, nil, Limits{}).
			WithTracing(Tracing{Provider: tp})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Run(ctx, Run{Graph: g, History: history, Input: input, Emit: func(Event) {}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand-written", func(b *testing.B) {
		n := g.Nodes[g.Order[0]]
		b.ReportAllocs()
		for b.Loop() {
			turns := make([]domain.Turn, 0, len(history)+1)
			for _, m := range history {
				if k := len(turns); k > 0 && turns[k-1].Role == m.Role {
					turns[k-1].Parts[0].Text += "\n\n" + m.Content
					continue
				}
				turns = append(turns, domain.Turn{Role: m.Role, Parts: []domain.Part{{Type: domain.PartText, Text: m.Content}}})
			}
			turns = append(turns, domain.Turn{Role: domain.RoleUser, Parts: input})
			out, err := model.Converse(ctx, domain.ModelRequest{Provider: n.Provider, Model: n.Model, System: n.SystemPrompt,
				Turns: turns, MaxTokens: domain.DefaultMaxTokens})
			if err != nil {
				b.Fatal(err)
			}
			msgs := []Message{{ID: uuid.NewString(), Role: domain.RoleAssistant, Node: n.Name, Content: out.Text(),
				Visible: n.ShowOutput, CreatedAt: time.Now().UTC()}}
			if len(msgs[0].Content) == 0 {
				b.Fatal("no answer")
			}
		}
	})
}
