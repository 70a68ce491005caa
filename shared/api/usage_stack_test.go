package api_test

import (
	"fmt"
	"testing"
	"time"
)

// TestUsageThroughTheStack: an execute through the routed functions on DynamoDB Local shows its
// cost (0 for the local model) and is counted by the usage report of its company, under its key.
func TestUsageThroughTheStack(t *testing.T) {
	s := newStack(t)
	company := fmt.Sprintf("usage-%d", time.Now().UnixNano())
	key := s.key("alice", company)
	sid := s.session(key, flatSession)
	out := s.execute(key, sid, `{"content":"hello there"}`)
	u := out["metadata"].(map[string]any)["usage"].(map[string]any)
	if c, ok := u["cost_usd"].(float64); !ok || c != 0 {
		t.Errorf("usage %v: want cost_usd 0 for the local model", u)
	}
	s.execute(key, sid, `{"content":"and again"}`)
	today := time.Now().UTC().Format(time.DateOnly)
	rep := s.ok("GET", "/api/v1/usage/?group_by=api_key&from="+today+"&to="+today, key, nil).json(t)
	data := rep["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("report %v: want one key's row", rep)
	}
	row := data[0].(map[string]any)
	in, outTok := u["input_tokens"].(float64), u["output_tokens"].(float64)
	if row["requests"] != 2.0 || row["executions"] != 2.0 || row["input_tokens"].(float64) <= in || row["output_tokens"].(float64) <= outTok ||
		row["cost_usd"] != 0.0 || row["api_key_id"] == "" {
		t.Errorf("row %v: want 2 requests and executions of this key, more tokens than the first run's (%v in, %v out)", row, in, outTok)
	}
	if res := s.do(req{method: "GET", path: "/api/v1/usage/?group_by=week", key: key}); res.status != 400 {
		t.Errorf("group_by=week: %d %s", res.status, res.body)
	}
}
