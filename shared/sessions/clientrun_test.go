package sessions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// reactAgent has no tools of its own: a run's function tools are the request's.
var reactAgent = map[string]any{"name": "r", "agent_type": "react_agent", "system_prompt": "Use tools."}

var lookupFn = domain.FunctionTool{Name: "lookup", Description: "Look a word up",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}}}

// TestClientFunctions: a run given function tools by its request pauses when the model calls one,
// an answer that brings them again continues it, and the session's configuration is unchanged
// (a run without them has no such tool); a function that clashes with a built-in is refused.
func TestClientFunctions(t *testing.T) {
	ctx := context.Background()
	svc := newService(newMemStore(), nil, sessions.Limits{})
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(reactAgent)})
	if err != nil {
		t.Fatal(err)
	}
	fns := []domain.FunctionTool{lookupFn}
	res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent(`lookup {"word":"otter"}`), Functions: fns}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending == nil || len(res.Pending.ToolCalls) != 1 || res.Pending.ToolCalls[0].Name != "lookup" || res.Pending.ToolCalls[0].Arguments["word"] != "otter" {
		t.Fatalf("the run did not pause for lookup: %+v %+v", res.Execution.Status, res.Pending)
	}
	ans := &sessions.Answer{HasResults: true, ToolResults: []sessions.ToolResultInput{{ToolCallID: res.Pending.ToolCalls[0].ID, Output: "a mammal"}}}
	res, err = svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Answer: ans, Functions: fns}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Execution.Status != domain.ExecCompleted || len(res.Messages) != 1 || !strings.Contains(res.Messages[0].Content, "Tool result: a mammal") {
		t.Fatalf("answered: %s %+v", res.Execution.Status, res.Messages)
	}
	// Without the request's tools the model has no lookup to call: it answers in text.
	res, err = svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent(`lookup {"word":"otter"}`)}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending != nil || res.Execution.Status != domain.ExecCompleted {
		t.Fatalf("a run without functions paused: %+v", res.Pending)
	}

	for _, tc := range []struct {
		fns   []domain.FunctionTool
		field string
	}{
		{[]domain.FunctionTool{{Name: "calculator"}}, "functions.0.name"},
		{[]domain.FunctionTool{{Name: "bad name"}}, "functions.0.name"},
		{[]domain.FunctionTool{lookupFn, lookupFn}, "functions.1.name"},
		{[]domain.FunctionTool{{Name: "f", Parameters: map[string]any{"type": "string"}}}, "functions.0.parameters.type"},
	} {
		_, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hi"), Functions: tc.fns}, sessions.Observer{})
		var de *domain.Error
		if !asDomain(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) == 0 || de.Fields[0].Field != tc.field {
			t.Errorf("functions %+v: %v, want invalid %s", tc.fns, err, tc.field)
		}
	}
}

// TestClientHistory: a run given the client's conversation answers after it (the offline model
// counts the turns before the message), it is not stored, and the stored history is not read.
func TestClientHistory(t *testing.T) {
	ctx := context.Background()
	svc := newService(newMemStore(), nil, sessions.Limits{})
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	history := []domain.Message{
		{Role: domain.RoleAssistant, Content: "an orphan reply is dropped"},
		{Role: domain.RoleUser, Content: "first"}, {Role: domain.RoleAssistant, Content: "one"},
		{Role: domain.RoleUser, Content: "second"}, {Role: domain.RoleAssistant, Content: "two"},
	}
	res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("third"), History: history}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[0].Content; !strings.Contains(got, "history=4") {
		t.Errorf("reply = %q, want history=4", got)
	}
	// The next run without a client history reads the stored one: this session's one exchange.
	res, err = svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("fourth")}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[0].Content; !strings.Contains(got, "history=2") {
		t.Errorf("reply = %q, want history=2 (the seeded turns are not stored)", got)
	}
}
