package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// localAgents is a list of n local-model agents named w0, w1, ….
func localAgents(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"name":"w%d","prompt_config":{"system_prompt":"W%d."},"llm_config":{"provider":"local"}}`, i, i)
	}
	return strings.Join(out, ",")
}

// chainOf is n local-model agents without edges: they run one after another.
func chainOf(n int) string {
	return `{"name":"Chain","agents":[` + localAgents(n) + `]}`
}

// errorFields returns the fields a 400's error envelope names.
func errorFields(t *testing.T, res response) []string {
	t.Helper()
	if res.status != 400 {
		t.Fatalf("status %d, want 400: %.500s", res.status, res.body)
	}
	var got []string
	for _, e := range res.json(t)["error"].(map[string]any)["errors"].([]any) {
		got = append(got, e.(map[string]any)["field"].(string))
	}
	return got
}

// history returns the contents of a session's stored visible messages, oldest first.
func (s *stack) history(key, sid string) []string {
	s.t.Helper()
	var out []string
	for offset := 0; ; offset += 200 {
		page := s.do(req{method: "GET", path: fmt.Sprintf("/api/v1/runtime/%s/messages/?limit=200&offset=%d", sid, offset), key: key}).json(s.t)
		for _, m := range page["messages"].([]any) {
			out = append(out, m.(map[string]any)["content"].(string))
		}
		if page["has_more"] != true {
			return out
		}
	}
}

// TestGraphNodeLimit: an execution commits every agent's message in one transaction of at most
// 100 items, so a graph that would write more is refused when it is created, naming the field.
func TestGraphNodeLimit(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	fan := func(n int) string {
		var edges []string
		for i := range n {
			edges = append(edges, fmt.Sprintf(`{"from":"__start__","to":"w%d"},{"from":"w%d","to":"__end__"}`, i, i))
		}
		return `{"name":"Fan","agents":[` + localAgents(n) + `],"edges":[` + strings.Join(edges, ",") + `]}`
	}
	// The most the commit holds runs, and every message is stored.
	sid := s.session(key, fan(domain.MaxNodeRuns))
	out := s.execute(key, sid, `{"content":"all at once"}`)
	if got := len(out["messages"].([]any)); got != domain.MaxNodeRuns {
		t.Errorf("%d messages, want %d", got, domain.MaxNodeRuns)
	}
	if got := len(s.history(key, sid)); got != domain.MaxNodeRuns+1 {
		t.Errorf("%d stored messages, want %d", got, domain.MaxNodeRuns+1)
	}
	// One more is a 400 at creation, for sessions and for agents.
	if got := errorFields(t, s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: fan(domain.MaxNodeRuns + 1)})); strings.Join(got, " ") != "agents" {
		t.Errorf("session fields = %v", got)
	}
	agent := `{"system_config":` + fan(domain.MaxNodeRuns+1) + `}`
	if got := errorFields(t, s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: agent})); strings.Join(got, " ") != "system_config.agents" {
		t.Errorf("agent fields = %v", got)
	}
	// Fewer agents that run more often than the commit holds: a chain reached at two depths.
	edges := []string{`{"from":"__start__","to":"w0"}`, `{"from":"__start__","to":"p"}`, `{"from":"p","to":"w0"}`}
	for i := 0; i < 59; i++ {
		edges = append(edges, fmt.Sprintf(`{"from":"w%d","to":"w%d"}`, i, i+1))
	}
	edges = append(edges, `{"from":"w59","to":"__end__"}`)
	twice := `{"name":"Twice","agents":[{"name":"p"},` + localAgents(60) + `],"edges":[` + strings.Join(edges, ",") + `]}`
	res := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: twice})
	if got := errorFields(t, res); strings.Join(got, " ") != "edges" || !strings.Contains(string(res.body), "runs 121 agents") {
		t.Errorf("runs over the limit: %s", res.body)
	}
}

// TestGraphStepsAndCycles: the limit counts agent runs, so a long chain runs; a cycle can never
// end (edges are unconditional) and is refused at creation with that reason.
func TestGraphStepsAndCycles(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, chainOf(26))
	out := s.execute(key, sid, `{"content":"pass it on"}`)
	if got := len(out["messages"].([]any)); got != 26 {
		t.Errorf("%d messages, want 26", got)
	}
	if r := reply(t, out); !strings.Contains(r, "System prompt: W25.") {
		t.Errorf("last reply = %q", r)
	}
	cycle := `{"name":"Loop","agents":[{"name":"a"},{"name":"b"}],
		"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"a"},{"from":"b","to":"__end__"}]}`
	for _, tc := range []struct{ path, body, field string }{
		{"/api/v1/sessions/", cycle, "edges.2"},
		{"/api/v1/agent/", `{"system_config":` + cycle + `}`, "system_config.edges.2"},
	} {
		res := s.do(req{method: "POST", path: tc.path, key: key, body: tc.body})
		got := errorFields(t, res)
		if strings.Join(got, " ") != tc.field || !strings.Contains(string(res.body), "a → b → a") || !strings.Contains(string(res.body), "never ends") {
			t.Errorf("%s: %s", tc.path, res.body)
		}
	}
	// A session stored before cycles were refused is told the same when it executes.
	var cfg map[string]any
	if err := json.Unmarshal([]byte(cycle), &cfg); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	old := &domain.Session{ID: uuid.NewString(), Name: "Loop", Owner: "alice", Company: "acme", Config: cfg,
		Variables: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := s.app.Store.CreateSession(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + old.ID + "/execute/", key: key, body: `{"content":"go"}`})
	if got := errorFields(t, res); strings.Join(got, " ") != "edges.2" || !strings.Contains(string(res.body), "never ends") {
		t.Errorf("stored cycle: %s", res.body)
	}
}

// TestLargeContentIsStored: a content under the documented 200,000 bytes is stored whatever its
// characters (JSON takes up to six bytes for some), synchronously and asynchronously.
func TestLargeContentIsStored(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	for _, tc := range []struct{ name, unit string }{
		{"html characters", "<a href=\"x\">&</a>"},
		{"quotes and newlines", "\"\n"},
		{"control characters", "\x01"},
		{"multibyte", "é€😀"},
	} {
		text := strings.Repeat(tc.unit, 199_000/len(tc.unit))
		body, _ := json.Marshal(map[string]any{"content": text})
		sid := s.session(key, flatSession)
		if r := reply(t, s.execute(key, sid, string(body))); !strings.Contains(r, text) {
			t.Errorf("%s: the reply does not hold the content (%d bytes)", tc.name, len(r))
		}
		if h := s.history(key, sid); len(h) != 2 || h[0] != text {
			t.Errorf("%s: stored history: %d messages", tc.name, len(h))
		}
		// A follow-up reads the large history back; the exchange (about 100,000 estimated
		// tokens) is over the local model's history budget, so the model sees none of it.
		if r := reply(t, s.execute(key, sid, `{"content":"and then?"}`)); !strings.Contains(r, "history=0") {
			t.Errorf("%s: follow-up = %.200q", tc.name, r)
		}
	}
	sid := s.session(key, flatSession)
	text := strings.Repeat("<&>", 66_000)
	body, _ := json.Marshal(map[string]any{"content": text, "async": true})
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: string(body)})
	if res.status != 202 {
		t.Fatalf("async: %d %.300s", res.status, res.body)
	}
	var got map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = s.do(req{method: "GET", path: res.header.Get("Location"), key: key}).json(t); got["status"] == "completed" || got["status"] == "failed" {
			break
		}
	}
	if got["status"] != "completed" || !strings.Contains(reply(t, got["result"].(map[string]any)), text) {
		t.Errorf("async execution: %v %v", got["status"], got["error"])
	}
	// The text blocks together are bounded like a string content.
	blocks := fmt.Sprintf(`{"content":[{"type":"text","text":%q},{"type":"text","text":%q}]}`, strings.Repeat("a", 150_000), strings.Repeat("b", 150_000))
	if got := errorFields(t, s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: blocks})); strings.Join(got, " ") != "content" {
		t.Errorf("blocks over the limit: %v", got)
	}
}

// TestLargeRunIsStored: the replies of one execution are stored within the commit's 4 MB; when
// twenty agents each echo a 199 KB message, the longest replies are cut to a common length.
func TestLargeRunIsStored(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, chainOf(20))
	text := strings.Repeat("x", 199_000)
	out := s.execute(key, sid, `{"content":"`+text+`"}`)
	msgs := out["messages"].([]any)
	if len(msgs) != 20 {
		t.Fatalf("%d messages", len(msgs))
	}
	total := len(text)
	for _, m := range msgs {
		c := m.(map[string]any)["content"].(string)
		total += len(c)
		if !strings.Contains(c, "[truncated for storage: the message had") || !strings.HasPrefix(c, "[local model] You said: xxx") {
			t.Errorf("reply of %d bytes: %.60q … %q", len(c), c, c[max(len(c)-60, 0):])
		}
	}
	if total > sessions.MaxStoredRunBytes {
		t.Errorf("the execution's messages are %d bytes, over %d", total, sessions.MaxStoredRunBytes)
	}
	stored := s.history(key, sid)
	if len(stored) != 21 || stored[0] != text || stored[20] != msgs[19].(map[string]any)["content"] {
		t.Errorf("stored %d messages, not the ones returned", len(stored))
	}
}

// TestHistoryTokenBudget: the models see the most recent messages that fit the history budget,
// the oldest dropped first; for the local model half of its 32,000-token window less max_tokens.
func TestHistoryTokenBudget(t *testing.T) {
	meter := &ddbMeter{}
	s := newStack(t, meter.option)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	// Each exchange stores about 20 KB (the message and its echo), about 5,000 estimated tokens;
	// the budget is 16,000 - 4,096 = 11,904 tokens: two exchanges fit, three do not.
	msg := func(i int) string { return fmt.Sprintf(`{"content":"%d %s"}`, i, strings.Repeat("t", 10_000)) }
	for i, want := range []string{"history=0", "history=2", "history=4", "history=4", "history=4"} {
		if r := reply(t, s.execute(key, sid, msg(i))); !strings.Contains(r, want) {
			t.Errorf("execute %d: %s, want %s", i, r[len(r)-12:], want)
		}
	}
	// A history of more than a Query page (1 MB) still costs one Query: reading stops at the
	// budget. An execute is four DynamoDB calls: the lease, the history, the commit and the
	// usage counter's UpdateItem ADD.
	big := `{"content":"` + strings.Repeat("b", 199_000) + `"}`
	for range 3 {
		s.execute(key, sid, big)
	}
	meter.reset()
	s.execute(key, sid, `{"content":"cheap?"}`)
	if got := meter.calls.Load(); got != 4 {
		t.Errorf("an execute made %d DynamoDB calls, want 4", got)
	}
}
