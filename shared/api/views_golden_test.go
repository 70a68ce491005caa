package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

var updateRuntimeViews = flag.Bool("update-runtime-views", false, "rewrite testdata/runtime_views.json")

// runtimeViewCases are the runtime's answers built from fixed values: execute results in both
// shapes, completed and paused, polls of each status, a session that waits, an error with fields.
func runtimeViewCases() []struct {
	name string
	v    any
} {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	done := at.Add(3 * time.Second)
	corr := "corr-1"
	cites := []domain.Citation{{Index: 1, KnowledgeBaseID: "kb1", FileID: "f1", FileName: "a <b>.txt", ChunkIndex: 2, Score: 0.75, Text: "x & y"}}
	calls := []domain.PendingToolCall{{ID: "c1", Name: "fn", Arguments: map[string]any{"b": 2.0, "a": "x"}, Kind: domain.ToolKindFunction},
		{ID: "c2", Name: "mcp_tool", Node: "n2", Kind: domain.ToolKindMCP, Server: "srv"}}
	pending := &domain.PendingAction{Type: domain.PendingToolCalls, ExecutionID: "e2", ToolCalls: calls, Input: "hi", CreatedAt: at}
	sess := &domain.Session{ID: "s1", Name: "n", Config: map[string]any{"name": "a", "agent_type": "llm_agent"}, ConfigHash: "h",
		AgentID: "a1", UserID: "guest-1", Variables: map[string]any{"v": 1.0}, VisibleCount: 3, Executions: 2, CreatedAt: at, UpdatedAt: done}
	cost := 0.000041 // cost_usd of a priced run (a paused one shows null)
	completed := &domain.Execution{ID: "e1", SessionID: "s1", CorrelationID: &corr, Status: domain.ExecCompleted, StopReason: domain.StopEndTurn,
		Events: []map[string]any{{"type": "x"}}, InputTokens: 5, OutputTokens: 7, CostUSD: &cost, DurationMS: 1200, CreatedAt: at, CompletedAt: &done}
	paused := &domain.Execution{ID: "e2", SessionID: "s1", Status: domain.ExecRequiresAction, StopReason: domain.StopToolUse,
		CreatedAt: at, CompletedAt: &done, Pending: pending}
	msgs := []domain.Message{
		{ID: "m1", Role: domain.RoleAssistant, Content: "first", CreatedAt: at, Citations: cites},
		{ID: "m2", Role: domain.RoleAssistant, Content: "none found", CreatedAt: at, Citations: []domain.Citation{}},
		{ID: "m3", Role: domain.RoleAssistant, Content: "calling", CreatedAt: done, ToolCalls: calls},
	}
	runs := []sessions.ToolCall{{ID: "t1", Name: "calc", Input: map[string]any{"e": "1+1"}, Output: "2"}, {ID: "t2", Name: "x", IsError: true, Output: "bad"}}
	pausedSess := *sess
	pausedSess.Pending = pending
	pausedSess.AgentID = ""
	log := slog.New(slog.DiscardHandler)
	_, invalid := envelope(httptest.NewRequest("GET", "/", nil), log,
		domain.Invalid([]domain.FieldError{{Field: "a.b", Message: "is required"}, {Field: "", Message: "<body>"}}))
	_, internal := envelope(httptest.NewRequest("GET", "/", nil), log, os.ErrClosed)
	return []struct {
		name string
		v    any
	}{
		{"result session", resultView(&sessions.Result{Session: sess, Execution: completed, Messages: msgs[:2], ToolCalls: runs}, "session")},
		{"result session paused", resultView(&sessions.Result{Session: sess, Execution: paused, Messages: msgs[2:], Pending: pending}, "session")},
		{"result message", resultView(&sessions.Result{Session: sess, Execution: completed, Messages: msgs[:1], ToolCalls: runs}, "message")},
		{"result message no calls", resultView(&sessions.Result{Session: sess, Execution: completed, Messages: msgs[1:2]}, "message")},
		{"result message empty", resultView(&sessions.Result{Session: sess, Execution: completed}, "message")},
		{"result message paused", resultView(&sessions.Result{Session: sess, Execution: paused, Messages: msgs[2:], Pending: pending, ToolCalls: runs}, "message")},
		{"execution queued", executionView(&domain.Execution{ID: "e3", SessionID: "s1", Status: domain.ExecQueued, CreatedAt: at}, nil, nil)},
		{"execution failed", executionView(&domain.Execution{ID: "e3", SessionID: "s1", CorrelationID: &corr, Status: domain.ExecFailed,
			Error: "boom", CreatedAt: at, CompletedAt: &done}, sess, nil)},
		{"execution failed typed", executionView(&domain.Execution{ID: "e3", SessionID: "s1", Status: domain.ExecFailed,
			Error: "slow", ErrorType: domain.KindOverloaded.Type(), CreatedAt: at, CompletedAt: &done}, nil, nil)},
		{"execution paused", executionView(paused, sess, msgs[2:])},
		{"execution completed", executionView(completed, sess, msgs)},
		{"execution completed without session", executionView(completed, nil, msgs)},
		{"session", viewSession(sess)},
		{"session paused", viewSession(&pausedSess)},
		{"error with fields", invalid},
		{"error internal", internal},
	}
}

// TestRuntimeViewsGolden holds the runtime's answers to testdata/runtime_views.json, written by
// the code that built them as maps: the view types give the same bytes.
func TestRuntimeViewsGolden(t *testing.T) {
	path := filepath.Join("testdata", "runtime_views.json")
	var got bytes.Buffer
	got.WriteString("{\n")
	for i, c := range runtimeViewCases() {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // as writeJSON
		if err := enc.Encode(c.v); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		name, _ := json.Marshal(c.name)
		if i > 0 {
			got.WriteString(",\n")
		}
		got.Write(name)
		got.WriteString(": ")
		got.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	got.WriteString("\n}\n")
	if *updateRuntimeViews {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range max(len(gl), len(wl)) {
			var g, w []byte
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if !bytes.Equal(g, w) {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
			}
		}
	}
}
