package engine

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// askSchema is the form the asking tool's server requests: a name with a default, a required
// age.
var askSchema = map[string]any{"type": "object", "required": []any{"age"}, "properties": map[string]any{
	"name": map[string]any{"type": "string", "default": "John Doe"},
	"age":  map[string]any{"type": "integer"},
}}

// askingTool is an MCP tool whose server asks a person for input on every call (through the
// call's elicitor, as the connector does) and answers what it got.
func askingTool(calls *atomic.Int32) describedTool {
	return describedTool{
		fakeTool: fakeTool{name: "ask", call: func(ctx context.Context, _ map[string]any) (string, error) {
			calls.Add(1)
			e := domain.ElicitorFrom(ctx)
			if e == nil {
				return "no elicitor", nil
			}
			a := e.Elicit(ctx, domain.Elicitation{Message: "Who are you?", Schema: askSchema})
			b, _ := json.Marshal(a.Content)
			return a.Action + " " + string(b), nil
		}},
		meta: domain.ToolMeta{Kind: domain.ToolKindMCP, Server: "srv"},
	}
}

// TestElicitationPausesAndResumes: a server's question pauses the run with the question (its
// schema, the call and its server); the answer makes the call again, the server then gets the
// answer with the schema's defaults applied, and the model sees that result only.
func TestElicitationPausesAndResumes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer domain.ElicitAnswer
		want   string // the result the model gets
	}{
		{"accepted", domain.ElicitAnswer{Action: domain.ElicitAccept, Content: map[string]any{"age": 30}}, `accept {"age":30,"name":"John Doe"}`},
		{"declined", domain.ElicitAnswer{Action: domain.ElicitDecline, Content: map[string]any{"age": 30}}, `decline null`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			set := toolSet{"ask": askingTool(&calls)}
			model := script(toolCalls("", "e1", "ask"), text("done"))
			e := NewEngine(models(model), pauseBinder{set}, Limits{})
			rec := &recorder{}
			run := Run{Graph: mustGraph(t, reactConfig(`"ask"`), set), Input: userInput("go"), Emit: rec.emit}
			res, err := e.Run(context.Background(), run)
			if err != nil {
				t.Fatal(err)
			}
			p := res.Pending
			if p == nil || p.Type != PauseElicitation || len(p.Calls) != 1 || calls.Load() != 1 {
				t.Fatalf("pending %+v, calls %d", p, calls.Load())
			}
			c := p.Calls[0]
			want := PendingCall{ID: "e1", Name: "ask", Arguments: map[string]any{"q": "e1"}, Node: "r", Kind: domain.ToolKindMCP, Server: "srv",
				Elicitation: &domain.Elicitation{Message: "Who are you?", Schema: askSchema}}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Fatalf("pending call (-want +got):\n%s", diff)
			}
			if n := len(model.requests()); n != 1 {
				t.Fatalf("the model was called %d times before the answer", n)
			}
			res, err = e.Resume(context.Background(), run, p.Checkpoint, Answers{Elicitations: map[string]domain.ElicitAnswer{"e1": tt.answer}})
			if err != nil || res.Pending != nil {
				t.Fatalf("resume: %v %+v", err, res.Pending)
			}
			if calls.Load() != 2 {
				t.Errorf("the call was made %d times, want twice (asked, then answered)", calls.Load())
			}
			got := lastResults(model.requests()[1])
			if len(got) != 1 || got[0].Content != tt.want || got[0].IsError {
				t.Errorf("results %+v, want %q", got, tt.want)
			}
		})
	}
}

// TestElicitationDeclinedWhenNoOneCanAsk: in a run that cannot ask, the question is declined at
// once, the run does not pause, and the result and an event say so.
func TestElicitationDeclinedWhenNoOneCanAsk(t *testing.T) {
	var calls atomic.Int32
	set := toolSet{"ask": askingTool(&calls)}
	model := script(toolCalls("", "e1", "ask"), text("done"))
	e := NewEngine(models(model), pauseBinder{set}, Limits{})
	rec := &recorder{}
	res, err := e.Run(context.Background(), Run{Graph: mustGraph(t, reactConfig(`"ask"`), set), Input: userInput("go"), Emit: rec.emit,
		DeclineElicitations: true})
	if err != nil || res.Pending != nil {
		t.Fatalf("%v %+v", err, res.Pending)
	}
	got := lastResults(model.requests()[1])
	if len(got) != 1 || !strings.HasPrefix(got[0].Content, "decline null") || !strings.Contains(got[0].Content, "no person can answer in this run") {
		t.Fatalf("results %+v", got)
	}
	var asked int
	for _, ev := range rec.events {
		if ev.Type == EventElicitation && ev.Data["action"] == domain.ElicitDecline {
			asked++
		}
	}
	if asked != 1 || calls.Load() != 1 {
		t.Errorf("elicitation events %d, calls %d; want 1 and 1", asked, calls.Load())
	}
}
