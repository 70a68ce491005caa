package api_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

func TestExecuteLLMAgent(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	before := time.Now().Unix()
	out := s.execute(key, sid, `{"content":"What is the refund policy?","correlation_id":"corr-1"}`)
	if out["id"] != sid || out["object"] != "agent.session" || out["status"] != "completed" {
		t.Errorf("result header = %v %v %v", out["id"], out["object"], out["status"])
	}
	for _, f := range []string{"created_at", "completed_at"} {
		if v, ok := out[f].(float64); !ok || int64(v) < before-1 || v != float64(int64(v)) {
			t.Errorf("%s = %v, want an integer Unix time", f, out[f])
		}
	}
	if _, ok := out["execution_time"].(float64); !ok {
		t.Errorf("execution_time = %v", out["execution_time"])
	}
	msgs := out["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("messages = %v", msgs)
	}
	m := msgs[0].(map[string]any)
	content := m["content"].(string)
	if m["role"] != "assistant" || !strings.Contains(content, "What is the refund policy?") || !strings.Contains(content, "You are terse.") || !strings.Contains(content, "history=0") {
		t.Errorf("reply = %v", m)
	}
	md := out["metadata"].(map[string]any)
	usage := md["usage"].(map[string]any)
	if md["correlation_id"] != "corr-1" || md["execution_id"] == "" || md["event_count"].(float64) < 2 || usage["input_tokens"].(float64) <= 0 || usage["output_tokens"].(float64) <= 0 {
		t.Errorf("metadata = %v", md)
	}
	// The follow-up sees both earlier messages.
	if r := reply(t, s.execute(key, sid, `{"content":"And shipping?"}`)); !strings.Contains(r, "history=2") || !strings.Contains(r, "And shipping?") {
		t.Errorf("follow-up reply = %q", r)
	}
	// History: oldest first, paged.
	res := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/?limit=3", key: key})
	h := res.json(t)
	hm := h["messages"].([]any)
	if h["total"] != float64(4) || h["has_more"] != true || len(hm) != 3 {
		t.Fatalf("messages page = %s", res.body)
	}
	first := hm[0].(map[string]any)
	if first["role"] != "user" || first["content"] != "What is the refund policy?" {
		t.Errorf("first message = %v", first)
	}
	if _, err := time.Parse(time.RFC3339, first["timestamp"].(string)); err != nil {
		t.Errorf("timestamp %v: %v", first["timestamp"], err)
	}
	rest := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/?limit=3&offset=3", key: key}).json(t)
	if len(rest["messages"].([]any)) != 1 || rest["has_more"] != false {
		t.Errorf("second page = %v", rest)
	}
	// Events are kept with the correlation id.
	ev := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/events/?correlation_id=corr-1", key: key}).json(t)
	if int(ev["total"].(float64)) != int(md["event_count"].(float64)) {
		t.Errorf("events for corr-1: %v, want %v", ev["total"], md["event_count"])
	}
	types := map[string]bool{}
	for _, e := range ev["events"].([]any) {
		types[e.(map[string]any)["type"].(string)] = true
	}
	for _, want := range []string{"node_started", "model_call", "node_finished"} {
		if !types[want] {
			t.Errorf("no %s event in %v", want, types)
		}
	}
}

func TestExecuteVariables(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, `{"name":"V","system_prompt":"Serve {{ variables.customer }} in {{variables.lang}}."}`)
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"hi","inputs":{"customer":"Ada"}}`})
	if res.status != 400 || !strings.Contains(string(res.body), "inputs.lang") {
		t.Fatalf("missing variable: %d %s", res.status, res.body)
	}
	if r := reply(t, s.execute(key, sid, `{"content":"hi","inputs":{"customer":"Ada","lang":"French"}}`)); !strings.Contains(r, "Serve Ada in French.") {
		t.Errorf("reply = %q", r)
	}
	// Reloaded from the checkpoint; a new value replaces the old one.
	if r := reply(t, s.execute(key, sid, `{"content":"again"}`)); !strings.Contains(r, "Serve Ada in French.") {
		t.Errorf("variables not reloaded: %q", r)
	}
	if r := reply(t, s.execute(key, sid, `{"content":"again","inputs":{"lang":"Welsh"}}`)); !strings.Contains(r, "Serve Ada in Welsh.") {
		t.Errorf("variables not updated: %q", r)
	}
}

func TestExecuteReactAgentTools(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, `{"name":"Calc","agent_type":"react_agent","system_prompt":"Use tools.","tools":["calculator","current_time","http_request"]}`)
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?format=message", key: key, body: `{"content":"Please run calculator {\"expression\": \"2+2*3\"}","correlation_id":"c2"}`})
	if res.status != 200 {
		t.Fatalf("execute: %d %s", res.status, res.body)
	}
	m := res.json(t)
	resp := m["response"].(map[string]any)
	if m["success"] != true || m["message_id"] == "" || m["correlation_id"] != "c2" || !strings.Contains(resp["content"].(string), "8") {
		t.Errorf("message shape = %s", res.body)
	}
	calls := resp["tool_calls"].([]any)
	if len(calls) != 1 || calls[0].(map[string]any)["name"] != "calculator" || calls[0].(map[string]any)["output"] != "8" {
		t.Errorf("tool_calls = %v", calls)
	}
	// A failing tool is reported to the model, never a 500; private addresses are refused.
	out := s.execute(key, sid, `{"content":"http_request {\"url\": \"http://169.254.169.254/latest/meta-data/\"}"}`)
	if r := reply(t, out); !strings.Contains(r, "[error]") {
		t.Errorf("SSRF attempt reply = %q", r)
	}
}

func TestExecuteGraph(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, `{"name":"Flow","agents":[
		{"name":"draft","agent_type":"llm_agent","prompt_config":{"system_prompt":"Draft it."},"streaming_config":{"show_output_to_user":false}},
		{"name":"review","agent_type":"llm_agent","prompt_config":{"system_prompt":"Review it."}}],
		"edges":[{"from":"__start__","to":"draft"},{"from":"draft","to":"review"},{"from":"review","to":"__end__"}],"entry_point":"draft"}`)
	out := s.execute(key, sid, `{"content":"write a haiku"}`)
	msgs := out["messages"].([]any)
	if len(msgs) != 1 || !strings.Contains(msgs[0].(map[string]any)["content"].(string), "Review it.") {
		t.Errorf("visible messages = %v", msgs)
	}
	// A cycle never ends and is refused when the session is created: see TestGraphStepsAndCycles.
}

func TestSaveMessagesAndPersistentState(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, `{"name":"Ephemeral","save_messages":false,"agents":[{"name":"a","prompt_config":{"system_prompt":"P"}}]}`)
	s.execute(key, sid, `{"content":"one"}`)
	if r := reply(t, s.execute(key, sid, `{"content":"two"}`)); !strings.Contains(r, "history=0") {
		t.Errorf("save_messages false kept history: %q", r)
	}
	if h := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/", key: key}).json(t); h["total"] != float64(0) {
		t.Errorf("save_messages false kept messages: %v", h)
	}
	fresh := s.session(key, `{"name":"Fresh","persistent_state":false,"agents":[{"name":"a","prompt_config":{"system_prompt":"Hi {{variables.x}}"}}]}`)
	s.execute(key, fresh, `{"content":"one","inputs":{"x":"1"}}`)
	if r := reply(t, s.execute(key, fresh, `{"content":"two","inputs":{"x":"2"}}`)); !strings.Contains(r, "history=0") || !strings.Contains(r, "Hi 2") {
		t.Errorf("persistent_state false: %q", r)
	}
	if r := s.do(req{method: "POST", path: "/api/v1/runtime/" + fresh + "/execute/", key: key, body: `{"content":"three"}`}); r.status != 400 {
		t.Errorf("persistent_state false reloaded variables: %d", r.status)
	}
}

func TestExecuteBadInput(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	big := base64.StdEncoding.EncodeToString(make([]byte, 3_800_000))
	tests := []struct {
		name, path, body string
		status           int
	}{
		{"unknown session", "/api/v1/runtime/3f1c2d4e-0000-4000-8000-000000000000/execute/", `{"content":"x"}`, 404},
		{"malformed session id", "/api/v1/runtime/nope/execute/", `{"content":"x"}`, 404},
		{"empty content", "", `{"content":"  "}`, 400},
		{"missing content", "", `{"correlation_id":"x"}`, 400},
		{"empty blocks", "", `{"content":[]}`, 400},
		{"content number", "", `{"content":5}`, 400},
		{"unknown block type", "", `{"content":[{"type":"audio","audio":"x"}]}`, 400},
		{"image_url not a URL", "", `{"content":[{"type":"image_url","image_url":{"url":"not a url"}}]}`, 400},
		{"image type not allowed", "", `{"content":[{"type":"image_url","image_url":{"url":"data:image/bmp;base64,AAAA"}}]}`, 400},
		{"image too large", "", `{"content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + big + `"}}]}`, 400},
		{"image from a private address", "", `{"content":[{"type":"image_url","image_url":{"url":"http://127.0.0.1:1/x.png"}}]}`, 400},
		{"inputs too large to keep", "", `{"content":"x","inputs":{"blob":"` + strings.Repeat("b", 100<<10) + `"}}`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" || strings.HasPrefix(path, "?") {
				path = "/api/v1/runtime/" + sid + "/execute/" + tt.path
			}
			res := s.do(req{method: "POST", path: path, key: key, body: tt.body})
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", res.status, tt.status, res.body)
			}
			res.errorType(t)
		})
	}
	if r := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: s.key("bob", "acme"), body: `{"content":"x"}`}); r.status != 403 {
		t.Errorf("another user's session: %d", r.status)
	}
	if h := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/", key: key}).json(t); h["total"] != float64(0) {
		t.Errorf("bad input stored messages: %v", h)
	}
}

// TestExecuteBadRequest: what the runtime handlers refuse before the feature sees it (over
// fakes; TestExecuteBadInput has the contents the feature refuses), storing nothing.
func TestExecuteBadRequest(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	run := "/api/v1/runtime/" + sid + "/execute/"
	for _, tt := range []struct{ name, query, body, field string }{
		{"inputs not an object", "", `{"content":"x","inputs":["a"]}`, "inputs"},
		{"correlation_id not a string", "", `{"content":"x","correlation_id":7}`, "correlation_id"},
		{"bad format", "?format=xml", `{"content":"x"}`, "response_format"},
		{"bad response_format", "", `{"content":"x","response_format":"html"}`, "response_format"},
		{"stream not a boolean", "", `{"content":"x","stream":"yes"}`, "stream"},
	} {
		res := s.do(req{method: "POST", path: run + tt.query, key: key, body: tt.body})
		if res.status != 400 || fieldOf(t, res) != tt.field {
			t.Errorf("%s: %d %s, want 400 naming %s", tt.name, res.status, res.body, tt.field)
		}
	}
	for _, q := range []string{"limit=0", "limit=-1", "limit=abc", "limit=1000", "offset=-2", "offset=x"} {
		if r := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/?" + q, key: key}); r.status != 400 || fieldOf(t, r) != strings.Split(q, "=")[0] {
			t.Errorf("messages?%s: %d %s", q, r.status, r.body)
		}
	}
	if n := len(s.history(key, sid)); n != 0 {
		t.Errorf("refused executes stored %d messages", n)
	}
}

func TestConcurrentExecutesNeverInterleave(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	const n = 6
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			statuses[i] = s.serve("POST", "/api/v1/runtime/"+sid+"/execute/", key, []byte(fmt.Sprintf(`{"content":"message %d"}`, i)))
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, st := range statuses {
		if st != 200 && st != 409 {
			t.Errorf("status %d", st)
		}
		if st == 200 {
			ok++
		}
	}
	h := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/?limit=200", key: key}).json(t)
	msgs := h["messages"].([]any)
	if len(msgs) != 2*ok {
		t.Fatalf("%d successful executes stored %d messages", ok, len(msgs))
	}
	for i := 0; i < len(msgs); i += 2 {
		u, a := msgs[i].(map[string]any), msgs[i+1].(map[string]any)
		if u["role"] != "user" || a["role"] != "assistant" || !strings.Contains(a["content"].(string), u["content"].(string)) ||
			!strings.Contains(a["content"].(string), fmt.Sprintf("history=%d", i)) {
			t.Errorf("pair %d interleaved: %v / %v", i/2, u["content"], a["content"])
		}
	}
}

func TestAsyncAndStreaming(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: key, body: `{"content":"later please","correlation_id":"bg"}`})
	if res.status != 202 || res.header.Get("Location") == "" {
		t.Fatalf("async: %d %s", res.status, res.body)
	}
	exec := res.json(t)
	var got map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got = s.do(req{method: "GET", path: res.header.Get("Location"), key: key}).json(t)
		if got["status"] == "completed" || got["status"] == "failed" {
			break
		}
	}
	if got["status"] != "completed" || got["id"] != exec["id"] {
		t.Fatalf("async execution = %v", got)
	}
	if r := reply(t, got["result"].(map[string]any)); !strings.Contains(r, "later please") {
		t.Errorf("async reply = %q", r)
	}
	stream := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"stream it"}`,
		header: map[string]string{"Accept": "text/event-stream"}})
	body := string(stream.body)
	if stream.status != 200 || !strings.HasPrefix(stream.header.Get("Content-Type"), "text/event-stream") ||
		!strings.Contains(body, "event: node_started") || !strings.Contains(body, "event: text") || !strings.Contains(body, "event: result") || !strings.Contains(body, "stream it") {
		t.Errorf("stream: %d %s", stream.status, body)
	}
}

func TestUnavailableProviderIsA400(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	for _, provider := range []string{"openai", "bedrock", "nonsense"} {
		sid := s.session(key, `{"name":"P","llm_config":{"provider":"`+provider+`"}}`)
		res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"hi"}`})
		if typ, msg := res.errorType(t); res.status != 400 || typ != "invalid_request_error" || !strings.Contains(msg, provider) {
			t.Errorf("%s: %d %s", provider, res.status, res.body)
		}
		if h := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/", key: key}).json(t); h["total"] != float64(0) {
			t.Errorf("%s: a failed execute stored messages", provider)
		}
	}
}

// TestRuntimeHandlers: how the runtime group chooses among a plain answer, a queued execution and
// a stream, and the views of each, over fakes (the runs themselves are tested above).
func TestRuntimeHandlers(t *testing.T) {
	s, f := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	run := "/api/v1/runtime/" + sid + "/execute/"

	out := s.execute(key, sid, `{"content":"hi","correlation_id":"c1"}`)
	md, _ := out["metadata"].(map[string]any)
	if out["id"] != sid || out["object"] != "agent.session" || out["status"] != "completed" || md["correlation_id"] != "c1" || md["event_count"] != float64(3) {
		t.Errorf("session shape = %v", out)
	}
	if r := reply(t, out); r != "echo: hi" {
		t.Errorf("reply = %q", r)
	}

	// Queued by header or body; the Location polls the execution.
	for name, r := range map[string]req{
		"Prefer header": {method: "POST", path: run, key: key, body: `{"content":"later"}`, header: map[string]string{"Prefer": "respond-async"}},
		"body flag":     {method: "POST", path: run, key: key, body: `{"content":"later","async":true}`},
	} {
		res := s.do(r)
		loc := res.header.Get("Location")
		e := res.json(t)
		if res.status != 202 || e["status"] != "queued" || e["object"] != "agent.execution" || loc != run[:len(run)-len("execute/")]+"executions/"+e["id"].(string)+"/" {
			t.Errorf("%s: %d Location %q %s", name, res.status, loc, res.body)
		}
	}

	// Streamed when the client accepts an event stream: events, text, then the result.
	res := s.do(req{method: "POST", path: run, key: key, body: `{"content":"flow"}`, header: map[string]string{"Accept": "text/event-stream"}})
	body := string(res.body)
	if res.status != 200 || res.header.Get("Content-Type") != "text/event-stream" || !strings.Contains(body, "event: node_started\n") ||
		!strings.Contains(body, "event: text\ndata: {\"delta\":\"echo: flow\",\"node\":\"agent\"}\n") || !strings.HasSuffix(body, "\n\n") ||
		strings.Index(body, "event: result\n") < strings.LastIndex(body, "event: text\n") {
		t.Errorf("stream: %d %q %s", res.status, res.header.Get("Content-Type"), body)
	}

	// A failed execution carries its error as the envelope does; one recorded before errors
	// kept their type is an api_error.
	queued := s.do(req{method: "POST", path: run + "?async=1", key: key, body: `{"content":"fail"}`}).json(t)
	id := queued["id"].(string)
	f.sessions.mu.Lock()
	e := f.sessions.execs[id]
	e.Status, e.Error, e.ErrorType = domain.ExecFailed, "The run failed", ""
	f.sessions.mu.Unlock()
	got := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/executions/" + id + "/", key: key}).json(t)
	if diff := cmp.Diff(map[string]any{"type": "api_error", "message": "The run failed"}, got["error"]); diff != "" || got["status"] != "failed" || got["result"] != nil {
		t.Errorf("failed execution (-want +got error):\n%s\n%v", diff, got)
	}
	wantStatus(t, "unknown execution", s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/executions/" + uuidOf(3) + "/", key: key}), 404, "not_found_error", "")

	// The history: oldest first, RFC 3339 timestamps, no citations where none were kept.
	h := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/?limit=2", key: key})
	page := h.json(t)
	msgs := page["messages"].([]any)
	first := msgs[0].(map[string]any)
	if _, err := time.Parse(time.RFC3339, first["timestamp"].(string)); err != nil || first["content"] != "hi" || first["role"] != "user" {
		t.Errorf("first message = %v (%v)", first, err)
	}
	if _, ok := first["citations"]; ok || page["has_more"] != true || page["total"] != float64(len(s.history(key, sid))) || !strings.Contains(h.header.Get("Link"), "offset=2") {
		t.Errorf("messages page = %s Link %q", h.body, h.header.Get("Link"))
	}
}
