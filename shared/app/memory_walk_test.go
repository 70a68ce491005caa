package app_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
)

// memoryRig calls the application's HTTP functions as API Gateway routes to them, with a
// company's key, on the test stack with its queues driven (extraction runs from MemoryQueue).
type memoryRig struct {
	t *testing.T
	a *app.App
}

func (r memoryRig) key(company string) string {
	r.t.Helper()
	_, secret, err := r.a.Auth.CreateKey(r.t.Context(), auth.NewKey{Owner: "o", Company: company})
	if err != nil {
		r.t.Fatal(err)
	}
	return secret
}

func (r memoryRig) call(key, group, method, path, body string, want int) []byte {
	r.t.Helper()
	h, err := r.a.Handler(group)
	if err != nil {
		r.t.Fatal(err)
	}
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("x-api-key", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	b, _ := io.ReadAll(w.Result().Body)
	if w.Code != want {
		r.t.Fatalf("%s %s: %d %s, want %d", method, path, w.Code, b, want)
	}
	return b
}

// session opens a session of the agent for user and returns its id.
func (r memoryRig) session(key, agentKey, user string) string {
	r.t.Helper()
	var s struct {
		SessionID string `json:"session_id"`
	}
	b := r.call(key, "sessions", http.MethodGet, "/api/v1/sessions/from-agent/?agent_key="+agentKey+"&user_id="+user, "", http.StatusOK)
	if err := json.Unmarshal(b, &s); err != nil || s.SessionID == "" {
		r.t.Fatalf("from-agent: %s", b)
	}
	return s.SessionID
}

// execute runs content in the session and returns the reply and the execution's events by type.
func (r memoryRig) execute(key, sid, content string) (string, map[string][]map[string]any) {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{"content": content})
	var res struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		Metadata struct {
			ExecutionID string `json:"execution_id"`
		} `json:"metadata"`
	}
	b := r.call(key, "runtime", http.MethodPost, "/api/v1/runtime/"+sid+"/execute/", string(body), http.StatusOK)
	if err := json.Unmarshal(b, &res); err != nil || len(res.Messages) == 0 {
		r.t.Fatalf("execute: %s", b)
	}
	var page struct {
		Events []struct {
			Type        string         `json:"type"`
			ExecutionID string         `json:"execution_id"`
			Data        map[string]any `json:"data"`
		} `json:"events"`
	}
	b = r.call(key, "runtime", http.MethodGet, "/api/v1/runtime/"+sid+"/events/?limit=100", "", http.StatusOK)
	if err := json.Unmarshal(b, &page); err != nil {
		r.t.Fatalf("events: %s", b)
	}
	events := map[string][]map[string]any{}
	for _, e := range page.Events {
		if e.ExecutionID == "" || e.ExecutionID == res.Metadata.ExecutionID {
			events[e.Type] = append(events[e.Type], e.Data)
		}
	}
	return res.Messages[len(res.Messages)-1].Content, events
}

// records lists a user's records through the API.
func (r memoryRig) records(key, user string) []map[string]any {
	r.t.Helper()
	var out []map[string]any
	b := r.call(key, "memory", http.MethodGet, "/api/v1/memory/records/?user_id="+user, "", http.StatusOK)
	if err := json.Unmarshal(b, &out); err != nil {
		r.t.Fatalf("records: %s", b)
	}
	return out
}

// TestMemoryAcrossSessions is docs/memory.md's walk-through through the functions and queues
// make dev runs: a react agent with memory, offline model, one user's first session saving a
// fact with its tool and another by extraction (from MemoryQueue), the user's second session
// recalling both into its prompt, another user and another company seeing nothing, and the
// user forgotten, twice.
func TestMemoryAcrossSessions(t *testing.T) {
	env := localstack.NewTestEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	env.RunEventSources(t, a.Processor)
	r := memoryRig{t: t, a: a}
	key, other := r.key("company-memory"), r.key("company-memory-other")

	r.call(key, "agents", http.MethodPost, "/api/v1/agent/", `{"system_config":{"name":"Concierge","agent_type":"react_agent",`+
		`"system_prompt":"You help.","llm_config":{"provider":"local"},`+
		`"memory":{"enabled":true,"blocks":[{"label":"human","description":"What you know of the user"}],"recall":{"top_k":5},"extract":{}}}}`,
		http.StatusCreated)

	s1 := r.session(key, "concierge", "alice")
	reply, ev := r.execute(key, s1, `memory_save {"text":"Alice prefers green tea"}`)
	if len(ev["memory_write"]) != 1 || !strings.Contains(reply, "Tool result") {
		t.Fatalf("first turn: reply %q, memory_write events %v", reply, ev["memory_write"])
	}
	r.execute(key, s1, "I live in Lisbon. What is the weather like?")

	// Extraction runs after the turn from MemoryQueue: the first-person sentence is saved.
	deadline := time.Now().Add(90 * time.Second)
	var recs []map[string]any
	for {
		recs = r.records(key, "alice")
		if len(recs) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	sources := map[string]string{}
	for _, rec := range recs {
		src, _ := rec["source"].(map[string]any)
		typ, _ := src["type"].(string)
		text, _ := rec["text"].(string)
		sources[typ] = text
	}
	if !strings.Contains(sources["tool"], "green tea") || !strings.Contains(sources["extraction"], "Lisbon") {
		t.Fatalf("alice's records %v, want one saved by the tool (green tea) and one extracted (Lisbon)", recs)
	}

	s2 := r.session(key, "concierge", "alice")
	reply, ev = r.execute(key, s2, "What do I like to drink?")
	if !strings.Contains(reply, "Alice prefers green tea") || !strings.Contains(reply, "Lisbon") {
		t.Errorf("alice's second session does not remember both records: %q", reply)
	}
	if len(ev["memory_recall"]) != 1 {
		t.Errorf("memory_recall events %v, want one", ev["memory_recall"])
	}

	bob := r.session(key, "concierge", "bob")
	if reply, _ := r.execute(key, bob, "What do I like to drink? Where do I live?"); strings.Contains(reply, "green tea") || strings.Contains(reply, "Lisbon") {
		t.Errorf("bob's session sees alice's memory: %q", reply)
	}
	if got := r.records(other, "alice"); len(got) != 0 {
		t.Errorf("another company lists alice's records: %v", got)
	}

	var forgot struct {
		Records int `json:"records_deleted"`
		Blocks  int `json:"blocks_deleted"`
	}
	b := r.call(key, "memory", http.MethodDelete, "/api/v1/memory/?user_id=alice", "", http.StatusOK)
	if err := json.Unmarshal(b, &forgot); err != nil || forgot.Records < 2 {
		t.Fatalf("forget alice: %s", b)
	}
	b = r.call(key, "memory", http.MethodDelete, "/api/v1/memory/?user_id=alice", "", http.StatusOK)
	if err := json.Unmarshal(b, &forgot); err != nil || forgot.Records != 0 || forgot.Blocks != 0 {
		t.Errorf("forgetting alice again: %s, want nothing deleted", b)
	}
	s3 := r.session(key, "concierge", "alice")
	if reply, _ := r.execute(key, s3, "What do I like to drink?"); strings.Contains(reply, "green tea") {
		t.Errorf("alice forgotten, yet her session remembers: %q", reply)
	}
}
