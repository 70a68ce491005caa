package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

// describedTool is a fake MCP or function tool.
type describedTool struct {
	fakeTool
	meta domain.ToolMeta
}

func (t describedTool) Meta() domain.ToolMeta { return t.meta }

// needsQ checks that the arguments carry a string q, as the fakes' calls do.
func needsQ(args map[string]any) error {
	if _, ok := args["q"].(string); !ok {
		return errors.New("q must be a string")
	}
	return nil
}

// pauseBinder binds the node's named tools from set and its function entries as client tools.
type pauseBinder struct{ set toolSet }

func (b pauseBinder) Bind(ctx context.Context, p domain.Principal, n *Node) ([]domain.Tool, error) {
	out, _ := b.set.Bind(ctx, p, n)
	for _, f := range n.Functions {
		out = append(out, describedTool{fakeTool: fakeTool{name: f.Name}, meta: domain.ToolMeta{Kind: domain.ToolKindFunction, Check: needsQ}})
	}
	return out, nil
}

func approvalTool(name string, calls *atomic.Int32) describedTool {
	return describedTool{
		fakeTool: fakeTool{name: name, call: func(_ context.Context, in map[string]any) (string, error) {
			calls.Add(1)
			return "echo " + in["q"].(string), nil
		}},
		meta: domain.ToolMeta{Kind: domain.ToolKindMCP, Server: "srv", NeedsApproval: true, Check: needsQ},
	}
}

// lastResults are the tool results of the last turn of a request.
func lastResults(req domain.ModelRequest) []domain.ToolResult {
	var out []domain.ToolResult
	for _, p := range req.Turns[len(req.Turns)-1].Parts {
		if p.ToolResult != nil {
			out = append(out, *p.ToolResult)
		}
	}
	return out
}

const lookupFn = `{"type":"function","name":"lookup","parameters":{"type":"object"}}`

func TestFunctionToolPausesAndResumes(t *testing.T) {
	set := toolSet{"calc": constTool("calc", "4")}
	model := script(toolCalls("Let me check.", "c1", "calc", "c2", "lookup"), text("the answer"))
	e := NewEngine(models(model), pauseBinder{set}, Limits{})
	g := mustGraph(t, reactConfig(`"calc",`+lookupFn), set)
	rec := &recorder{}
	run := Run{Graph: g, Input: userInput("hi"), NewID: seqIDs(), Emit: rec.emit}
	res, err := e.Run(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pending
	if p == nil || p.Type != PauseToolCalls || len(p.Calls) != 1 || p.Calls[0].ID != "c2" || p.Calls[0].Kind != domain.ToolKindFunction || p.Calls[0].Node != "r" {
		t.Fatalf("pending = %+v", p)
	}
	if p.Text["r"] != "Let me check." || len(res.Messages) != 0 || res.Usage.InputTokens != 5 {
		t.Fatalf("text %q, messages %d, usage %+v", p.Text["r"], len(res.Messages), res.Usage)
	}
	if got := rec.types(); got[len(got)-1] != EventRequiresAction || !slices.Contains(got, EventToolResult) || slices.Contains(got, EventNodeFinished) {
		t.Fatalf("events %v", got)
	}
	rec2 := &recorder{}
	run.Emit = rec2.emit
	res, err = e.Resume(context.Background(), run, p.Checkpoint, Answers{Results: map[string]domain.ToolResult{"c2": {Content: "42"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending != nil || len(res.Messages) != 1 || res.Messages[0].Content != "the answer" || res.Resumed != 0 {
		t.Fatalf("resumed result %+v", res)
	}
	if res.Usage.InputTokens != 15 || res.Usage.OutputTokens != 3 {
		t.Fatalf("usage %+v, want both model calls", res.Usage)
	}
	reqs := model.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	got := lastResults(reqs[1])
	if len(got) != 2 || got[0].ToolUseID != "c1" || got[0].Content != "4" || got[1].ToolUseID != "c2" || got[1].Content != "42" {
		t.Fatalf("results given to the model: %+v", got)
	}
	if first := reqs[1].Turns[0]; first.Role != domain.RoleUser || first.Parts[0].Text != "hi" {
		t.Fatalf("the resumed conversation lost its start: %+v", reqs[1].Turns)
	}
	if ty := rec2.types(); ty[0] != EventToolResult || ty[len(ty)-1] != EventNodeFinished {
		t.Fatalf("resume events %v", ty)
	}
}

func TestApprovalsComeFirstAndDenialsReachTheModel(t *testing.T) {
	var calls atomic.Int32
	set := toolSet{"echo": approvalTool("echo", &calls)}
	model := script(toolCalls("", "a1", "echo", "a2", "echo", "f1", "lookup"), text("fine"))
	e := NewEngine(models(model), pauseBinder{set}, Limits{})
	g := mustGraph(t, reactConfig(`"echo",`+lookupFn), set)
	run := Run{Graph: g, Input: userInput("go")}
	res, err := e.Run(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Pending; p == nil || p.Type != PauseApproval || len(p.Calls) != 2 || p.Calls[0].Kind != domain.ToolKindMCP || p.Calls[0].Server != "srv" || calls.Load() != 0 {
		t.Fatalf("pending %+v, calls made %d", res.Pending, calls.Load())
	}
	res, err = e.Resume(context.Background(), run, res.Pending.Checkpoint, Answers{Approvals: map[string]Decision{
		"a1": {Approve: true}, "a2": {Approve: false, Reason: "not today"}}})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Pending; p == nil || p.Type != PauseToolCalls || len(p.Calls) != 1 || p.Calls[0].ID != "f1" || calls.Load() != 1 {
		t.Fatalf("after approvals: pending %+v, calls made %d", res.Pending, calls.Load())
	}
	res, err = e.Resume(context.Background(), run, res.Pending.Checkpoint, Answers{Results: map[string]domain.ToolResult{"f1": {Content: "boom", IsError: true}}})
	if err != nil || res.Pending != nil {
		t.Fatalf("final: %v %+v", err, res.Pending)
	}
	got := lastResults(model.requests()[1])
	if len(got) != 3 || got[0].Content != "echo a1" || !got[1].IsError || !strings.Contains(got[1].Content, "not today") || !got[2].IsError || got[2].Content != "boom" {
		t.Fatalf("results %+v", got)
	}
}

func TestBadArgumentsGoBackToTheModelWithoutPausing(t *testing.T) {
	model := script(&domain.ModelResponse{StopReason: domain.StopToolUse, Parts: []domain.Part{{Type: domain.PartToolUse,
		ToolUse: &domain.ToolUse{ID: "x", Name: "lookup", Input: map[string]any{"q": 3.0}}}}}, text("sorry"))
	e := NewEngine(models(model), pauseBinder{}, Limits{})
	res, err := e.Run(context.Background(), Run{Graph: mustGraph(t, reactConfig(lookupFn), toolSet{}), Input: userInput("go")})
	if err != nil || res.Pending != nil {
		t.Fatalf("%v %+v", err, res.Pending)
	}
	if got := lastResults(model.requests()[1]); len(got) != 1 || !got[0].IsError || !strings.Contains(got[0].Content, "q must be a string") {
		t.Fatalf("results %+v", got)
	}
}

func TestReactPausesOnEveryRoundTrip(t *testing.T) {
	model := script(toolCalls("", "1", "lookup"), toolCalls("", "2", "lookup"), text("done twice"))
	e := NewEngine(models(model), pauseBinder{}, Limits{})
	run := Run{Graph: mustGraph(t, reactConfig(lookupFn), toolSet{}), Input: userInput("go")}
	res, err := e.Run(context.Background(), run)
	for _, id := range []string{"1", "2"} {
		if err != nil || res.Pending == nil || res.Pending.Calls[0].ID != id {
			t.Fatalf("call %s: %v %+v", id, err, res.Pending)
		}
		res, err = e.Resume(context.Background(), run, res.Pending.Checkpoint, Answers{Results: map[string]domain.ToolResult{id: {Content: "r" + id}}})
	}
	if err != nil || res.Pending != nil || res.Messages[0].Content != "done twice" {
		t.Fatalf("%v %+v", err, res)
	}
	if n := len(model.requests()); n != 3 {
		t.Fatalf("%d model calls, want 3", n)
	}
}

func TestGraphPausesAStepAndKeepsItsFinishedNodes(t *testing.T) {
	var bCalls atomic.Int32
	model := nodeModel(map[string]replyFunc{
		"A": func(_ context.Context, req domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
			if len(lastResults(req)) > 0 {
				return text("A done"), nil
			}
			return toolCalls("", "fa", "lookup"), nil
		},
		"B": func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) {
			bCalls.Add(1)
			return text("B done"), nil
		},
		"C": func(_ context.Context, req domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
			return text("C saw " + strings.Join(turnTexts(req.Turns), "|")), nil
		},
	})
	g := mustGraph(t, `{"name":"g","agents":[
		{"name":"A","agent_type":"react_agent","prompt_config":{"system_prompt":"A"},"tools":[`+lookupFn+`]},
		{"name":"B","prompt_config":{"system_prompt":"B"}},
		{"name":"C","prompt_config":{"system_prompt":"C"}}],
		"edges":[{"from":"__start__","to":"A"},{"from":"__start__","to":"B"},{"from":"A","to":"C"},{"from":"B","to":"C"},{"from":"C","to":"__end__"}]}`, toolSet{})
	e := NewEngine(models(model), pauseBinder{}, Limits{})
	run := Run{Graph: g, Input: userInput("go"), NewID: seqIDs()}
	res, err := e.Run(context.Background(), run)
	if err != nil || res.Pending == nil || res.Pending.Calls[0].Node != "A" {
		t.Fatalf("%v %+v", err, res.Pending)
	}
	res, err = e.Resume(context.Background(), run, res.Pending.Checkpoint, Answers{Results: map[string]domain.ToolResult{"fa": {Content: "x"}}})
	if err != nil || res.Pending != nil {
		t.Fatalf("%v %+v", err, res.Pending)
	}
	var got []string
	for _, m := range res.Messages {
		got = append(got, m.Node+":"+strings.SplitN(m.Content, " saw", 2)[0])
	}
	if strings.Join(got, ",") != "A:A done,B:B done,C:C" || bCalls.Load() != 1 || res.Steps != 2 {
		t.Fatalf("messages %v, B ran %d times, steps %d", got, bCalls.Load(), res.Steps)
	}
	if c := res.Messages[2].Content; !strings.Contains(c, "A done") || !strings.Contains(c, "B done") {
		t.Fatalf("C did not see both: %q", c)
	}
}

func TestResumeRefusesAGarbledCheckpoint(t *testing.T) {
	e := NewEngine(models(script()), pauseBinder{}, Limits{})
	run := Run{Graph: mustGraph(t, reactConfig(lookupFn), toolSet{}), Input: userInput("go")}
	if _, err := e.Resume(context.Background(), run, []byte("{"), Answers{}); err == nil {
		t.Fatal("resumed from garbage")
	}
}

func TestParallelNodesWithTheSameCallIDs(t *testing.T) {
	// Both nodes' models number their calls alike; the client answers each by its node.
	reply := func(_ context.Context, req domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
		if r := lastResults(req); len(r) > 0 {
			return text(req.System + " got " + r[0].Content), nil
		}
		return toolCalls("", "c1", "lookup"), nil
	}
	model := nodeModel(map[string]replyFunc{"A": reply, "B": reply})
	g := mustGraph(t, `{"name":"g","agents":[
		{"name":"A","agent_type":"react_agent","prompt_config":{"system_prompt":"A"},"tools":[`+lookupFn+`]},
		{"name":"B","agent_type":"react_agent","prompt_config":{"system_prompt":"B"},"tools":[`+lookupFn+`]}],
		"edges":[{"from":"__start__","to":"A"},{"from":"__start__","to":"B"},{"from":"A","to":"__end__"},{"from":"B","to":"__end__"}]}`, toolSet{})
	e := NewEngine(models(model), pauseBinder{}, Limits{})
	run := Run{Graph: g, Input: userInput("go")}
	res, err := e.Run(context.Background(), run)
	if err != nil || res.Pending == nil || len(res.Pending.Calls) != 2 {
		t.Fatalf("%v %+v", err, res.Pending)
	}
	ids := []string{res.Pending.Calls[0].ID, res.Pending.Calls[1].ID}
	if ids[0] != "A/c1" || ids[1] != "B/c1" {
		t.Fatalf("pending ids = %v", ids)
	}
	res, err = e.Resume(context.Background(), run, res.Pending.Checkpoint, Answers{Results: map[string]domain.ToolResult{
		"A/c1": {Content: "for A"}, "B/c1": {Content: "for B"}}})
	if err != nil || res.Pending != nil || len(res.Messages) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	if a, b := res.Messages[0].Content, res.Messages[1].Content; a != "A got for A" || b != "B got for B" {
		t.Fatalf("messages %q %q", a, b)
	}
}

// TestApprovalIsBoundToTheServerRecord: a call approved after its MCP server was deleted, or
// deleted and registered again under the same name (another record), is not made: it settles as
// an error result for the model and the run completes; a denial is the usual one; the record
// the approval was asked for runs it. A deleted server's tool is still offered (as unavailable),
// so that the conversation's calls never go to a provider without any tool.
func TestApprovalIsBoundToTheServerRecord(t *testing.T) {
	mcpTool := func(serverID string, calls *atomic.Int32) describedTool {
		tool := approvalTool("echo", calls)
		tool.meta.ServerID = serverID
		return tool
	}
	tests := []struct {
		name      string
		resume    func(old, replacement *atomic.Int32) toolSet // what binds when the answer comes
		approve   bool
		legacy    bool // a checkpoint written before approvals recorded the server's record
		wantCalls int32
		wantNew   int32
		wantError bool
		want      string // in the result the model gets
	}{
		{name: "same record", resume: func(old, _ *atomic.Int32) toolSet { return toolSet{"echo": mcpTool("s1", old)} },
			approve: true, wantCalls: 1, want: "echo a1"},
		{name: "deleted, approved", resume: func(_, _ *atomic.Int32) toolSet { return toolSet{} },
			approve: true, wantError: true, want: `The MCP server "srv" was deleted or replaced since the approval was asked; the call was not made.`},
		{name: "deleted, denied", resume: func(_, _ *atomic.Int32) toolSet { return toolSet{} },
			approve: false, wantError: true, want: "A person denied this call."},
		{name: "replaced under the same name, approved", resume: func(_, repl *atomic.Int32) toolSet { return toolSet{"echo": mcpTool("s2", repl)} },
			approve: true, wantError: true, want: "was deleted or replaced"},
		{name: "legacy checkpoint, same name", resume: func(old, _ *atomic.Int32) toolSet { return toolSet{"echo": mcpTool("s1", old)} },
			approve: true, legacy: true, wantCalls: 1, want: "echo a1"},
		{name: "legacy checkpoint, deleted", resume: func(_, _ *atomic.Int32) toolSet { return toolSet{} },
			approve: true, legacy: true, wantError: true, want: `its MCP server "srv" was deleted`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old, replacement atomic.Int32
			model := script(toolCalls("", "a1", "echo"), text("fine"))
			e := NewEngine(models(model), nil, Limits{})
			first := toolSet{"echo": mcpTool("s1", &old)}
			run := Run{Graph: mustGraph(t, reactConfig(`"echo"`), first), Input: userInput("go"), Tools: first}
			res, err := e.Run(context.Background(), run)
			if err != nil || res.Pending == nil || res.Pending.Type != PauseApproval {
				t.Fatalf("run: %v, pending %+v", err, res.Pending)
			}
			cp := res.Pending.Checkpoint
			if tt.legacy {
				cp = []byte(strings.Replace(string(cp), `"server_ids":{"a1":"s1"},`, "", 1))
				if strings.Contains(string(cp), "server_ids") {
					t.Fatalf("the checkpoint kept its server_ids: %s", cp)
				}
			}
			run.Tools = tt.resume(&old, &replacement)
			rec := &recorder{}
			run.Emit = rec.emit
			res, err = e.Resume(context.Background(), run, cp, Answers{Approvals: map[string]Decision{"a1": {Approve: tt.approve}}})
			if err != nil || res.Pending != nil || len(res.Messages) != 1 || res.Messages[0].Content != "fine" {
				t.Fatalf("resume: %v, %+v", err, res)
			}
			if got := old.Load(); got != tt.wantCalls {
				t.Errorf("calls to the record the approval was asked for = %d, want %d", got, tt.wantCalls)
			}
			if got := replacement.Load(); got != tt.wantNew {
				t.Errorf("calls to the replacement = %d, want %d", got, tt.wantNew)
			}
			reqs := model.requests()
			got := lastResults(reqs[len(reqs)-1])
			if len(got) != 1 || got[0].IsError != tt.wantError || !strings.Contains(got[0].Content, tt.want) {
				t.Errorf("result given to the model = %+v, want error %t with %q", got, tt.wantError, tt.want)
			}
			var offered []string
			for _, s := range reqs[len(reqs)-1].Tools {
				offered = append(offered, s.Name)
			}
			if !slices.Equal(offered, []string{"echo"}) {
				t.Errorf("tools offered after the answer = %v, want [echo]", offered)
			}
			if ty := rec.types(); !slices.Contains(ty, EventApproval) || !slices.Contains(ty, EventToolResult) {
				t.Errorf("events %v", ty)
			}
		})
	}
}
