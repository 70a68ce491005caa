package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreTime leaves message creation times out of comparisons.
var ignoreTime = cmpopts.IgnoreFields(Message{}, "CreatedAt")

func TestRunFlatLLM(t *testing.T) {
	model := &fakeModel{reply: func(_ context.Context, req domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
		return text("Hello, Ada."), nil
	}}
	g := mustGraph(t, `{"name":"bot","system_prompt":"You greet {{ variables.who }}.","tools":["calc"],
		"llm_config":{"model":"m1","max_tokens":50,"temperature":0.3}}`, testTools())
	var streamed []string
	res, err := NewEngine(models(model), testTools(), Limits{}).Run(context.Background(), Run{
		Graph: g,
		History: []Message{
			{Role: domain.RoleUser, Content: "hi"},
			{Role: domain.RoleAssistant, Content: "Hello. "},
			{Role: domain.RoleAssistant, Content: "Who are you?", Visible: false},
		},
		Input:     userInput("I am Ada"),
		Variables: map[string]any{"who": "the user"},
		OnText:    func(node, delta string) { streamed = append(streamed, node+":"+delta) },
		NewID:     seqIDs(),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{
		Messages:   []Message{{ID: "m1", Role: domain.RoleAssistant, Node: "bot", Content: "Hello, Ada.", Visible: true}},
		Usage:      domain.Usage{InputTokens: 10, OutputTokens: 2},
		StopReason: domain.StopEndTurn, Steps: 1, Events: 3,
	}
	if diff := cmp.Diff(want, res, ignoreTime); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if res.Messages[0].CreatedAt.IsZero() {
		t.Error("message has no creation time")
	}
	reqs := model.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	req := reqs[0]
	wantReq := domain.ModelRequest{Model: "m1", System: "You greet the user.", MaxTokens: 50, Temperature: ptr(0.3),
		Turns: []domain.Turn{
			{Role: domain.RoleUser, Parts: userInput("hi")},
			{Role: domain.RoleAssistant, Parts: userInput("Hello.\n\nWho are you?")},
			{Role: domain.RoleUser, Parts: userInput("I am Ada")},
		}}
	if diff := cmp.Diff(wantReq, req, cmpopts.IgnoreFields(domain.ModelRequest{}, "OnText")); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"bot:Hello, Ada."}, streamed); diff != "" {
		t.Errorf("streamed text (-want +got):\n%s", diff)
	}
}

// nodeModel answers each node, recognised by its system prompt, with its own reply function.
func nodeModel(replies map[string]replyFunc) *fakeModel {
	return &fakeModel{reply: func(ctx context.Context, req domain.ModelRequest, n int) (*domain.ModelResponse, error) {
		return replies[req.System](ctx, req, n)
	}}
}

func say(s string) replyFunc {
	return func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) { return text(s), nil }
}

func TestRunFanOutAndJoin(t *testing.T) {
	// C finishes before B answers, yet B's message comes first because B comes first in the
	// configuration.
	cDone := make(chan struct{})
	model := nodeModel(map[string]replyFunc{
		"A": say("from A"),
		"B": func(ctx context.Context, _ domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
			select {
			case <-cDone:
				return text("from B"), nil
			case <-time.After(waitLimit):
				return nil, errors.New("C never ran while B was running")
			}
		},
		"C": func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) {
			defer close(cDone)
			return text("from C"), nil
		},
		"D": say("from D"),
	})
	g := mustGraph(t, `{"name":"g","agents":[
		{"name":"A","prompt_config":{"system_prompt":"A"}},
		{"name":"B","prompt_config":{"system_prompt":"B"}},
		{"name":"C","prompt_config":{"system_prompt":"C"},"streaming_config":{"show_output_to_user":false}},
		{"name":"D","prompt_config":{"system_prompt":"D"}}],
		"edges":[{"from":"__start__","to":"A"},{"from":"A","to":"C"},{"from":"A","to":"B"},
			{"from":"C","to":"D"},{"from":"B","to":"D"},{"from":"D","to":"__end__"}]}`, nil)
	res, err := NewEngine(models(model), nil, Limits{}).Run(context.Background(),
		Run{Graph: g, Input: userInput("go"), NewID: seqIDs()})
	if err != nil {
		t.Fatal(err)
	}
	wantMsgs := []Message{
		{ID: "m1", Role: domain.RoleAssistant, Node: "A", Content: "from A", Visible: true},
		{ID: "m2", Role: domain.RoleAssistant, Node: "B", Content: "from B", Visible: true},
		{ID: "m3", Role: domain.RoleAssistant, Node: "C", Content: "from C", Visible: false},
		{ID: "m4", Role: domain.RoleAssistant, Node: "D", Content: "from D", Visible: true},
	}
	if diff := cmp.Diff(wantMsgs, res.Messages, ignoreTime); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if res.Steps != 3 {
		t.Errorf("steps = %d, want 3", res.Steps)
	}
	seen := map[string][]string{}
	for _, req := range model.requests() {
		seen[req.System] = turnTexts(req.Turns)
	}
	want := map[string][]string{
		"A": {"user: go"},
		"B": {"user: go", "assistant: from A"},
		"C": {"user: go", "assistant: from A"},
		"D": {"user: go", "assistant: from A\n\nfrom B\n\nfrom C"},
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("turns each node saw (-want +got):\n%s", diff)
	}
}

// chain is a configuration of n agents without edges: they run one after another.
func chain(n int) string {
	agents := make([]string, n)
	for i := range agents {
		agents[i] = fmt.Sprintf(`{"name":"n%d","prompt_config":{"system_prompt":"n%d"}}`, i, i)
	}
	return `{"name":"chain","agents":[` + strings.Join(agents, ",") + `]}`
}

// TestRunLongChain runs a chain longer than the 25 supersteps the engine once allowed: the
// limit counts agent runs, which a chain of domain.MaxNodeRuns agents stays within.
func TestRunLongChain(t *testing.T) {
	model := &fakeModel{reply: func(_ context.Context, req domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
		return text("from " + req.System), nil
	}}
	g := mustGraph(t, chain(domain.MaxNodeRuns), nil)
	res, err := NewEngine(models(model), nil, Limits{}).Run(context.Background(), Run{Graph: g, Input: userInput("go")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != domain.MaxNodeRuns || res.Steps != domain.MaxNodeRuns {
		t.Errorf("messages %d, steps %d; want %d each", len(res.Messages), res.Steps, domain.MaxNodeRuns)
	}
}

func TestRunStopsAtNodeRunLimit(t *testing.T) {
	tests := []struct {
		name      string
		cfg       string
		wantCalls int
	}{
		{"chain stops before the third agent", chain(3), 2},
		{"a step of three parallel agents does not start", `{"name":"g","agents":[{"name":"a"},{"name":"b"},{"name":"c"}],
			"edges":[{"from":"__start__","to":"a"},{"from":"__start__","to":"b"},{"from":"__start__","to":"c"},
			{"from":"a","to":"__end__"},{"from":"b","to":"__end__"},{"from":"c","to":"__end__"}]}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &fakeModel{reply: say("ok")}
			res, err := NewEngine(models(model), nil, Limits{MaxNodeRuns: 2}).Run(context.Background(),
				Run{Graph: mustGraph(t, tt.cfg, nil), Input: userInput("go")})
			var nre *NodeRunLimitError
			if !errors.As(err, &nre) || nre.Limit != 2 {
				t.Fatalf("err = %v, want NodeRunLimitError at 2", err)
			}
			if got, want := err.Error(), "the graph would run more than 2 agents in one execution"; got != want {
				t.Errorf("message = %q, want %q", got, want)
			}
			if len(res.Messages) != tt.wantCalls || len(model.requests()) != tt.wantCalls {
				t.Errorf("messages %d, calls %d; want %d each", len(res.Messages), len(model.requests()), tt.wantCalls)
			}
		})
	}
}

func TestRunVariables(t *testing.T) {
	g := mustGraph(t, `{"name":"g","agents":[
		{"name":"a","prompt_config":{"system_prompt":"Help {{variables.user}} ({{ variables.age }}) with {{ variables.topic }}."}},
		{"name":"b","prompt_config":{"system_prompt":"Check {{ variables.topic }} for {{variables.user}}."}}]}`, nil)
	tests := []struct {
		name       string
		vars       map[string]any
		wantSystem []string
		wantFields []domain.FieldError
	}{
		{"all supplied", map[string]any{"user": "Ada", "age": 36, "topic": map[string]any{"x": "<y>"}},
			[]string{`Help Ada (36) with {"x":"<y>"}.`, `Check {"x":"<y>"} for Ada.`}, nil},
		{"missing", map[string]any{"age": true}, nil, []domain.FieldError{
			{Field: "inputs.topic", Message: `is required by the prompt of agent "a", "b"`},
			{Field: "inputs.user", Message: `is required by the prompt of agent "a", "b"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) { return text("ok"), nil }}
			_, err := NewEngine(models(model), nil, Limits{}).Run(context.Background(),
				Run{Graph: g, Input: userInput("hi"), Variables: tt.vars})
			var gotFields []domain.FieldError
			var de *domain.Error
			if errors.As(err, &de) && de.Kind == domain.KindInvalid {
				gotFields = de.Fields
			} else if err != nil {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tt.wantFields, gotFields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			var systems []string
			for _, r := range model.requests() {
				systems = append(systems, r.System)
			}
			if diff := cmp.Diff(tt.wantSystem, systems); diff != "" {
				t.Errorf("system prompts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunModelError(t *testing.T) {
	failure := errors.New("throttled")
	model := nodeModel(map[string]replyFunc{
		"A": say("fine"),
		"B": func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) { return nil, failure },
	})
	g := mustGraph(t, `{"name":"g","agents":[{"name":"A","prompt_config":{"system_prompt":"A"}},{"name":"B","prompt_config":{"system_prompt":"B"}}]}`, nil)
	rec := &recorder{}
	res, err := NewEngine(models(model), nil, Limits{}).Run(context.Background(),
		Run{Graph: g, Input: userInput("hi"), Emit: rec.emit})
	if !errors.Is(err, failure) || !strings.Contains(err.Error(), `agent "B"`) {
		t.Fatalf("err = %v, want the model error wrapped with the agent name", err)
	}
	wantTypes := []string{EventNodeStarted, EventModelCall, EventNodeFinished, EventNodeStarted, EventError}
	if diff := cmp.Diff(wantTypes, rec.types()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(res.Messages) != 1 || res.Events != len(wantTypes) {
		t.Errorf("partial result: %d messages, %d events; want 1 and %d", len(res.Messages), res.Events, len(wantTypes))
	}
}

func TestRunCancelled(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	model := &fakeModel{reply: func(ctx context.Context, _ domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
		once.Do(func() { close(started) })
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(waitLimit):
			return nil, errors.New("the context was never cancelled")
		}
	}}
	g := mustGraph(t, `{"name":"bot"}`, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := NewEngine(models(model), nil, Limits{}).Run(ctx, Run{Graph: g, Input: userInput("hi")})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestRunRejectsEmptyInput(t *testing.T) {
	g := mustGraph(t, `{"name":"bot"}`, nil)
	_, err := NewEngine(models(&fakeModel{}), nil, Limits{}).Run(context.Background(), Run{Graph: g})
	if domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("err = %v, want an invalid request", err)
	}
}

// TestRunCallbacksNeverOverlap runs 50 nodes in one step and checks that Emit and OnText are
// never called during one another: a consumer such as an event stream writes both to the same
// place, and must see one sequence in which each node starts, speaks, and finishes in order.
func TestRunCallbacksNeverOverlap(t *testing.T) {
	const n = 50
	all := newBarrier(n) // every node is in its model call before any answers
	model := &fakeModel{reply: func(ctx context.Context, req domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
		if err := all.wait(ctx); err != nil {
			return nil, err
		}
		return text("answer of " + req.System), nil
	}}
	var agents []string
	for i := range n {
		agents = append(agents, fmt.Sprintf(`{"name":"n%d","prompt_config":{"system_prompt":"n%d"}}`, i, i))
	}
	var edges []string
	for i := range n {
		edges = append(edges, fmt.Sprintf(`{"from":"__start__","to":"n%d"},{"from":"n%d","to":"__end__"}`, i, i))
	}
	g := mustGraph(t, `{"name":"g","agents":[`+strings.Join(agents, ",")+`],"edges":[`+strings.Join(edges, ",")+`]}`, nil)

	var inside, overlaps atomic.Int32
	var seq []string // written by both callbacks without a lock of its own, as a stream writer does
	enter := func(entry string) {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		seq = append(seq, entry)
		time.Sleep(50 * time.Microsecond) // widen the window another callback could enter
		inside.Add(-1)
	}
	_, err := NewEngine(models(model), nil, Limits{}).Run(context.Background(), Run{
		Graph: g, Input: userInput("go"),
		Emit:   func(e Event) { enter(e.Node + " " + e.Type) },
		OnText: func(node, _ string) { enter(node + " text") },
	})
	if err != nil {
		t.Fatal(err)
	}
	if k := overlaps.Load(); k > 0 {
		t.Errorf("callbacks ran during one another %d times", k)
	}
	perNode := map[string][]string{}
	for _, entry := range seq {
		node, what, _ := strings.Cut(entry, " ")
		perNode[node] = append(perNode[node], what)
	}
	want := []string{EventNodeStarted, "text", EventModelCall, EventNodeFinished}
	for i := range n {
		node := fmt.Sprintf("n%d", i)
		if diff := cmp.Diff(want, perNode[node]); diff != "" {
			t.Errorf("node %s (-want +got):\n%s", node, diff)
		}
	}
}
