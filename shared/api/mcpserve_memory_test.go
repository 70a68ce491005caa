package api_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestMCPServeEndUserMemory: an agent tool's user_id names the end user a new session serves, so
// that an agent with memory keeps that user's memory across sessions (the offline model calls
// memory_append when the message names it and echoes its prompt); another user's session and
// one without a user see none of it; a user_id that cannot be one, or one that is not the
// continued session's user, is the tool's error result naming it. A prompt variable named
// user_id is still given the call's user_id, as before it named the end user.
func TestMCPServeEndUserMemory(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", fmt.Sprintf("mcp-memory-%d", time.Now().UnixNano()))
	s.mcpAgent(key, `{"name":"Keeper","agent_type":"react_agent","system_prompt":"You remember.","llm_config":{"provider":"local","model":"dev"},`+
		`"mcp":{"tool_name":"keeper"},"memory":{"blocks":[{"label":"human","limit":200}]}}`)
	s.mcpAgent(key, `{"name":"Namer","system_prompt":"Hello {{ variables.user_id }}.","llm_config":{"provider":"local","model":"dev"},"mcp":{"tool_name":"namer"}}`)
	srv := httptest.NewServer(s.mux)
	defer srv.Close()
	cs := mcpConnect(t, srv, "x-api-key", key)
	props := listTools(t, cs)["keeper"].InputSchema.(map[string]any)["properties"].(map[string]any)
	if u, _ := props["user_id"].(map[string]any); u["type"] != "string" {
		t.Errorf("the tool's input has no string user_id: %v", props["user_id"])
	}
	suffix := fmt.Sprint(time.Now().UnixNano())
	ann, bob := "ann-"+suffix, "bob-"+suffix
	call := func(args map[string]any) (string, map[string]any) {
		t.Helper()
		text, sc, isErr := callTool(t, cs, "keeper", args)
		if isErr {
			t.Fatalf("keeper %v: %s", args, text)
		}
		return text, sc
	}
	text, first := call(map[string]any{"user_id": ann, "message": `memory_append {"label":"human","text":"Ann bakes rye."}`})
	if !strings.Contains(text, "now holds 14 of its 200 characters") {
		t.Fatalf("the tool's result: %q", text)
	}
	if text, _ = call(map[string]any{"user_id": ann, "message": "what do you know of me?"}); !strings.Contains(text, "Ann bakes rye.") {
		t.Errorf("a later session of the user does not remember: %q", text)
	}
	if text, _ = call(map[string]any{"user_id": bob, "message": "what do you know of me?"}); strings.Contains(text, "Ann bakes") {
		t.Errorf("another user's session sees: %q", text)
	}
	if text, _ = call(map[string]any{"user_id": "", "message": "what do you know of me?"}); strings.Contains(text, "Ann bakes") || strings.Contains(text, "# Memory") {
		t.Errorf("a session without a user has memory: %q", text)
	}
	if text, _, isErr := callTool(t, cs, "namer", map[string]any{"user_id": ann, "message": "hi"}); isErr || !strings.Contains(text, "Hello "+ann+".") {
		t.Errorf("a prompt variable named user_id = %v %q", isErr, text)
	}
	// A continued session keeps its user: named again or not named, never another.
	sid := first["session_id"]
	if text, _ = call(map[string]any{"session_id": sid, "user_id": ann, "message": "and now?"}); !strings.Contains(text, "Ann bakes rye.") {
		t.Errorf("the user's continued session does not remember: %q", text)
	}
	if text, _ = call(map[string]any{"session_id": sid, "message": "and now?"}); !strings.Contains(text, "Ann bakes rye.") {
		t.Errorf("the continued session without user_id does not remember: %q", text)
	}
	for _, args := range []map[string]any{
		{"session_id": sid, "user_id": bob, "message": "what do you know of me?"},
		{"user_id": "a\nb", "message": "hi"},
		{"user_id": 7, "message": "hi"},
	} {
		text, _, isErr := callTool(t, cs, "keeper", args)
		if !isErr || !strings.HasPrefix(text, "invalid_request_error: ") || !strings.Contains(text, "user_id") || strings.Contains(text, "Ann bakes") {
			t.Errorf("keeper %v = %v %q, want an invalid_request_error naming user_id", args, isErr, text)
		}
	}
}
