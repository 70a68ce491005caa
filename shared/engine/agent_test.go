package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/google/go-cmp/cmp"
)

// reactConfig is a react agent that may use the given tools.
func reactConfig(tools string) string {
	return `{"name":"r","agent_type":"react_agent","system_prompt":"Use tools.","tools":[` + tools + `]}`
}

// script answers the n-th model call with the n-th response and then with a final text.
func script(resps ...*domain.ModelResponse) *fakeModel {
	return &fakeModel{reply: func(_ context.Context, _ domain.ModelRequest, n int) (*domain.ModelResponse, error) {
		if n <= len(resps) {
			return resps[n-1], nil
		}
		return text("done"), nil
	}}
}

func TestReactRunsToolsConcurrently(t *testing.T) {
	tests := []struct {
		name      string
		calls     int // tool uses in one model turn
		parallel  int // Limits.MaxParallelTools
		wantMaxIn int // most tool calls seen in flight at once
	}{
		{"two tools in one turn", 2, 0, 2},
		{"bounded by MaxParallelTools", 3, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every call waits at the barrier until two calls are in flight, so a run that
			// called tools one at a time would fail with a barrier error.
			b := newBarrier(2)
			tool := fakeTool{name: "wait", call: func(ctx context.Context, in map[string]any) (string, error) {
				if err := b.wait(ctx); err != nil {
					return "", err
				}
				return "ok " + in["q"].(string), nil
			}}
			tools := toolSet{"wait": tool}
			var uses []string
			for i := range tt.calls {
				uses = append(uses, string(rune('a'+i)), "wait")
			}
			model := script(toolCalls("Let me check.", uses...))
			g := mustGraph(t, reactConfig(`"wait"`), tools)
			res, err := NewEngine(models(model), tools, Limits{MaxParallelTools: tt.parallel, ToolTimeout: 2 * waitLimit}).
				Run(context.Background(), Run{Graph: g, Input: userInput("check")})
			if err != nil {
				t.Fatal(err)
			}
			if b.max != tt.wantMaxIn {
				t.Errorf("at most %d calls in flight, want %d", b.max, tt.wantMaxIn)
			}
			reqs := model.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want 2", len(reqs))
			}
			want := []string{"user: check", "assistant: Let me check. | use a wait | use b wait", "user: result a error=false ok a | result b error=false ok b"}
			if tt.calls == 3 {
				want = []string{"user: check", "assistant: Let me check. | use a wait | use b wait | use c wait",
					"user: result a error=false ok a | result b error=false ok b | result c error=false ok c"}
			}
			if diff := cmp.Diff(want, turnTexts(reqs[1].Turns)); diff != "" {
				t.Errorf("second call's turns (-want +got):\n%s", diff)
			}
			if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "wait" {
				t.Errorf("tools offered = %+v, want the wait tool", reqs[0].Tools)
			}
			if len(res.Messages) != 1 || res.Messages[0].Content != "done" {
				t.Errorf("messages = %+v, want only the final answer", res.Messages)
			}
		})
	}
}

func TestReactToolFailuresAreResults(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tools := toolSet{
		"fail": fakeTool{name: "fail", call: func(context.Context, map[string]any) (string, error) {
			return "", errors.New("division by zero")
		}},
		"boom": fakeTool{name: "boom", call: func(context.Context, map[string]any) (string, error) { panic("kaput") }},
		"slow": fakeTool{name: "slow", call: func(context.Context, map[string]any) (string, error) {
			<-release // ignores its context: the engine must not wait for it
			return "late", nil
		}},
		"calc": constTool("calc", "4"),
	}
	model := script(toolCalls("", "1", "fail", "2", "boom", "3", "nope", "4", "slow", "5", "calc"))
	g := mustGraph(t, reactConfig(`"fail","boom","slow","calc"`), tools)
	rec := &recorder{}
	res, err := NewEngine(models(model), tools, Limits{ToolTimeout: 50 * time.Millisecond}).
		Run(context.Background(), Run{Graph: g, Input: userInput("go"), Emit: rec.emit})
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	got := turnTexts(reqs[1].Turns)[2]
	want := "user: " + strings.Join([]string{
		"result 1 error=true division by zero",
		`result 2 error=true tool "boom" failed: panic: kaput`,
		`result 3 error=true unknown tool "nope"`,
		`result 4 error=true tool "slow" timed out after 50ms`,
		"result 5 error=false 4",
	}, " | ")
	if got != want {
		t.Errorf("tool results:\n got %s\nwant %s", got, want)
	}
	if res.Messages[0].Content != "done" || res.StopReason != domain.StopEndTurn {
		t.Errorf("result = %+v, want the run to finish normally", res)
	}
	errorsByID := map[string]bool{}
	for _, ev := range rec.events {
		if ev.Type == EventError {
			errorsByID[ev.Data["tool_use_id"].(string)] = true
		}
	}
	if diff := cmp.Diff(map[string]bool{"1": true, "2": true, "3": true, "4": true}, errorsByID); diff != "" {
		t.Errorf("error events by tool use (-want +got):\n%s", diff)
	}
}

func TestReactIterationLimit(t *testing.T) {
	tests := []struct {
		name string
		say  string
		want string
	}{
		{"last text kept", "still thinking", "still thinking"},
		{"no text at all", "", "Stopped after 3 iterations without a final answer."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) {
				return toolCalls(tt.say, "x", "calc"), nil
			}}
			tools := testTools()
			g := mustGraph(t, reactConfig(`"calc"`), tools)
			res, err := NewEngine(models(model), tools, Limits{MaxIterations: 3}).
				Run(context.Background(), Run{Graph: g, Input: userInput("loop")})
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != StopMaxIterations || len(model.requests()) != 3 {
				t.Errorf("stop %q after %d calls, want %q after 3", res.StopReason, len(model.requests()), StopMaxIterations)
			}
			if len(res.Messages) != 1 || res.Messages[0].Content != tt.want {
				t.Errorf("messages = %+v, want one with %q", res.Messages, tt.want)
			}
			if want := (domain.Usage{InputTokens: 15, OutputTokens: 3}); res.Usage != want {
				t.Errorf("usage = %+v, want %+v", res.Usage, want)
			}
		})
	}
}

func TestReactEvents(t *testing.T) {
	tools := testTools()
	model := script(toolCalls("", "t1", "calc"))
	g := mustGraph(t, reactConfig(`"calc"`), tools)
	rec := &recorder{}
	res, err := NewEngine(models(model), tools, Limits{}).
		Run(context.Background(), Run{Graph: g, Input: userInput("2+2?"), Emit: rec.emit})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{EventNodeStarted, EventModelCall, EventToolCall, EventToolResult, EventModelCall, EventNodeFinished}
	if diff := cmp.Diff(want, rec.types()); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if res.Events != len(rec.events) {
		t.Errorf("Result.Events = %d, emitted %d", res.Events, len(rec.events))
	}
	for i, ev := range rec.events {
		if ev.Node != "r" || ev.Time.IsZero() || (i > 0 && ev.Time.Before(rec.events[i-1].Time)) {
			t.Errorf("event %d = %+v: want node r and a time not before the previous event's", i, ev)
		}
	}
	checks := []struct {
		event int
		key   string
		want  any
	}{
		{0, "agent_type", "react_agent"},
		{1, "iteration", 1},
		{1, "stop_reason", domain.StopToolUse},
		{1, "input_tokens", 5},
		{2, "tool", "calc"},
		{2, "input", map[string]any{"q": "t1"}},
		{3, "output", "4"},
		{3, "is_error", false},
		{4, "iteration", 2},
		{5, "stop_reason", domain.StopEndTurn},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, rec.events[c.event].Data[c.key]); diff != "" {
			t.Errorf("event %d %s (-want +got):\n%s", c.event, c.key, diff)
		}
	}
	for _, i := range []int{1, 3, 5} {
		if _, ok := rec.events[i].Data["duration_ms"].(int64); !ok {
			t.Errorf("event %d has no duration_ms", i)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // é is two bytes; it is not split
	}
	for _, tt := range tests {
		if got := domain.Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("domain.Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// tenantBinder binds one tool that answers with the tenant it was bound for, and records binds.
type tenantBinder struct {
	mu    sync.Mutex
	binds []string
}

func (b *tenantBinder) Bind(_ context.Context, p domain.Principal, n *Node) ([]domain.Tool, error) {
	b.mu.Lock()
	b.binds = append(b.binds, n.Name+"@"+p.Company+"/"+p.Owner)
	b.mu.Unlock()
	who := p.Company + "/" + p.Owner
	return []domain.Tool{constTool("whoami", who)}, nil
}

// TestToolsBoundPerRunAndTenant: a node's tools are bound for each run, for the run's caller,
// passed explicitly; the tool the model calls is the one bound for that caller.
func TestToolsBoundPerRunAndTenant(t *testing.T) {
	b := &tenantBinder{}
	g := mustGraph(t, `{"name":"r","agent_type":"react_agent"}`, nil)
	for _, p := range []domain.Principal{{Company: "acme", Owner: "alice"}, {Company: "globex", Owner: "bob"}} {
		model := script(toolCalls("", "t1", "whoami"))
		rec := &recorder{}
		_, err := NewEngine(models(model), b, Limits{}).
			Run(context.Background(), Run{Graph: g, Principal: p, Input: userInput("who?"), Emit: rec.emit})
		if err != nil {
			t.Fatal(err)
		}
		var out any
		for _, ev := range rec.events {
			if ev.Type == EventToolResult {
				out = ev.Data["output"]
			}
		}
		if want := p.Company + "/" + p.Owner; out != want {
			t.Errorf("tool result %v, want %q (events %v)", out, want, rec.types())
		}
	}
	if diff := cmp.Diff([]string{"r@acme/alice", "r@globex/bob"}, b.binds); diff != "" {
		t.Errorf("binds (-want +got):\n%s", diff)
	}
}
