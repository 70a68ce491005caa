package sessions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// askTool stands in for an MCP tool whose server asks the person a question during the call (the
// connector hands it to the call's elicitor) and answers what it got.
type askTool struct{}

func (askTool) Spec() domain.ToolSpec {
	return domain.ToolSpec{Name: "ask", Description: "Asks who you are.", Schema: map[string]any{"type": "object"}}
}

func (askTool) Call(ctx context.Context, _ map[string]any) (string, error) {
	e := domain.ElicitorFrom(ctx)
	if e == nil {
		return "nobody to ask", nil
	}
	a := e.Elicit(ctx, domain.Elicitation{Message: "Who are you?", Schema: map[string]any{"type": "object", "required": []any{"age"},
		"properties": map[string]any{"age": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string", "default": "Ann"}}}})
	b, _ := json.Marshal(a.Content)
	return a.Action + " " + string(b), nil
}

func askService(st *memStore) *sessions.Service {
	reg := tools.NewRegistry(append(tools.Builtins(tools.Options{}), askTool{})...)
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}}}
	return sessions.New(sessions.Deps{Store: st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg}, sessions.Limits{})
}

// TestElicitationThroughSessions: a question pauses the execution with it (stored with the
// session); an answer whose form does not fit the schema is refused naming the field and
// changes nothing; a fitting one continues the execution with the defaults applied. A run that
// cannot ask (DeclineElicitations) declines the question and completes.
func TestElicitationThroughSessions(t *testing.T) {
	st := newMemStore()
	svc := askService(st)
	ctx := context.Background()
	cfg := domain.ConfigDocOf(map[string]any{"name": "r", "agent_type": "react_agent", "system_prompt": "Use tools.", "tools": []any{"ask"}})
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("ask {}")}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pending
	if p == nil || p.Type != domain.PendingElicitation || len(p.ToolCalls) != 1 || p.ToolCalls[0].Elicitation == nil || p.ToolCalls[0].Elicitation.Message != "Who are you?" {
		t.Fatalf("pending %+v", p)
	}
	stored, err := svc.Get(ctx, alice, sess.ID)
	if err != nil || stored.Pending == nil || stored.Pending.ToolCalls[0].Elicitation == nil {
		t.Fatalf("the session's pending action %+v (%v), want the question", stored.Pending, err)
	}
	id := p.ToolCalls[0].ID
	answer := func(action string, content map[string]any) (*sessions.Result, error) {
		return svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Answer: &sessions.Answer{HasElicitations: true,
			Elicitations: []sessions.ElicitationInput{{ToolCallID: id, Action: action, Content: content}}}}, sessions.Observer{})
	}
	_, err = answer(domain.ElicitAccept, map[string]any{"age": "old"})
	var de *domain.Error
	if !asDomain(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) != 1 || de.Fields[0].Field != "elicitations.0.content.age" {
		t.Fatalf("a form that does not fit: %v, want the invalid field elicitations.0.content.age", err)
	}
	res, err = answer(domain.ElicitAccept, map[string]any{"age": 41})
	if err != nil || res.Pending != nil || res.Execution.Status != domain.ExecCompleted {
		t.Fatalf("answer: %v %+v", err, res)
	}
	if out := res.Messages[len(res.Messages)-1].Content; !strings.Contains(out, `accept {"age":41,"name":"Ann"}`) {
		t.Errorf("reply %q, want the call's result with the default applied", out)
	}

	res, err = svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("ask {}"), DeclineElicitations: true}, sessions.Observer{})
	if err != nil || res.Pending != nil {
		t.Fatalf("a run that cannot ask: %v %+v", err, res.Pending)
	}
	if out := res.Messages[len(res.Messages)-1].Content; !strings.Contains(out, "decline null") || !strings.Contains(out, "no person can answer in this run") {
		t.Errorf("reply %q, want the declined call's result saying so", out)
	}
}
