package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// schemaAgent is a react agent with one function tool, "lookup", whose parameters are schema.
func schemaAgent(t *testing.T, schema map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"name": "Client", "agent_type": "react_agent", "system_prompt": "Use tools.",
		"llm_config": map[string]any{"provider": "local", "model": "dev"},
		"tools":      []any{map[string]any{"type": "function", "name": "lookup", "parameters": schema}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bomb is issue 23's schema: 40 levels of anyOf over two $refs to the next level (3.7 KB; its
// check of an object took 2^40 steps).
func bomb(depth int) map[string]any {
	defs := map[string]any{fmt.Sprintf("l%d", depth): map[string]any{"type": "string"}}
	for i := 0; i < depth; i++ {
		ref := map[string]any{"$ref": fmt.Sprintf("#/$defs/l%d", i+1)}
		defs[fmt.Sprintf("l%d", i)] = map[string]any{"anyOf": []any{ref, ref}}
	}
	return map[string]any{"type": "object", "$ref": "#/$defs/l0", "$defs": defs}
}

// toolResult is what the local model's reply says the tool answered (the reply goes on to echo
// the message, arguments and all).
func toolResult(t *testing.T, reply string) string {
	t.Helper()
	_, after, ok := strings.Cut(reply, "Tool result: ")
	got, _, ok2 := strings.Cut(after, "You said:")
	if !ok || !ok2 {
		t.Fatalf("no tool result in %.500q", reply)
	}
	return got
}

// A function tool whose schema expands past the budget is a 400 naming its parameters (it was
// accepted, and its first call took longer than the run).
func TestSchemaBombRefusedAtConfiguration(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	r := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: schemaAgent(t, bomb(40))})
	typ, _ := r.errorType(t)
	if r.status != 400 || typ != "invalid_request_error" || !strings.Contains(string(r.body), "tools.0.parameters") || !strings.Contains(string(r.body), "too complex") {
		t.Fatalf("session with the schema bomb: %d %s", r.status, r.body)
	}
}

// Arguments a recursive schema would take exponential time over, and a 60 KB argument, both come
// back to the model as short error results; the run completes.
func TestSchemaArgumentsUnderBudget(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	branch := map[string]any{"properties": map[string]any{"a": map[string]any{"$ref": "#"}}}
	sid := s.session(key, schemaAgent(t, map[string]any{"type": "object", "anyOf": []any{branch, branch},
		"properties": map[string]any{"word": map[string]any{"type": "string", "pattern": "^[a-z]{1,20}$"}}}))
	deep := strings.Repeat(`{"a":`, 40) + "5" + strings.Repeat("}", 40)
	big := strings.Repeat("x", 60<<10)
	for _, tt := range []struct {
		name, args, says string
	}{
		{"deep", deep, "too deeply nested"},
		{"60 KB", `{"word":"` + big + `"}`, "does not match pattern"},
	} {
		content, _ := json.Marshal("lookup " + tt.args)
		out := s.execute(key, sid, `{"content":`+string(content)+`}`)
		if out["status"] != "completed" {
			t.Fatalf("%s: status = %v: %.500v", tt.name, out["status"], out)
		}
		if got := toolResult(t, reply(t, out)); !strings.Contains(got, tt.says) || len(got) > 1000 {
			t.Errorf("%s: tool result (%d bytes) = %.500s, want a short one saying %q", tt.name, len(got), got, tt.says)
		}
	}
}
