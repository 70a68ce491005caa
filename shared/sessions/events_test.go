package sessions

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCapEvents(t *testing.T) {
	events := []map[string]any{
		{"type": "node_started", "data": map[string]any{"agent_type": "llm_agent"}},
		{"type": "tool_call", "data": map[string]any{"input": strings.Repeat("x", 5000)}},
		{"type": "tool_result", "data": map[string]any{"output": strings.Repeat("y", 3000)}},
		{"type": "node_finished"},
	}
	got := capEvents(events, 4000)
	b, _ := json.Marshal(got)
	if len(b) > 4000 {
		t.Errorf("capped events are %d bytes", len(b))
	}
	if len(got) != 4 || got[1]["truncated"] != true || got[0]["data"] == nil {
		t.Errorf("capEvents dropped the wrong data: %v", got)
	}
	small := []map[string]any{{"type": "a", "data": map[string]any{"k": 1}}}
	if capEvents(small, 1000)[0]["truncated"] != nil {
		t.Error("events under the limit were changed")
	}
}
