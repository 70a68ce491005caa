package app_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// placeholderPaused names an execution paused for a function tool's result: the cancel event's,
// which a finished execution would answer with 409.
const placeholderPaused = "{{PAUSED_EXECUTION_ID}}"

// pausedExecution opens a session of the caller's whose agent has a client-side function tool
// and runs a message that calls it (the local model asks for it by name), so that the execution
// waits for the client's result; it returns the session and the execution.
func (r *replayer) pausedExecution(t *testing.T, secret string) (sessionID, execID string) {
	t.Helper()
	ctx := t.Context()
	p, err := r.app.Auth.Authenticate(ctx, secret, "")
	if err != nil {
		t.Fatal(err)
	}
	svc := r.app.Sessions()
	sess, err := svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{
		"name": "Client", "agent_type": "react_agent", "system_prompt": "Use tools.", "llm_config": map[string]any{"provider": "local"},
		"tools": []any{map[string]any{"type": "function", "name": "lookup", "description": "Look a word up",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}}}},
	})})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Execute(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent(`lookup {"word":"otter"}`)}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Execution.Status != domain.ExecRequiresAction {
		t.Fatalf("execution %s, want it paused", res.Execution.Status)
	}
	return sess.ID, res.Execution.ID
}
