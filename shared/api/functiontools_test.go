package api_test

import (
	"strings"
	"sync"
	"testing"
)

// A react agent with a client-side function tool, run by the offline model: it asks for
// "lookup" when the message names it with arguments.
const functionAgent = `{"name":"Client","agent_type":"react_agent","system_prompt":"Use tools.","llm_config":{"provider":"local","model":"dev"},
	"tools":["calculator",{"type":"function","name":"lookup","description":"Look a word up","parameters":{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}}]}`

func requiredAction(t *testing.T, m map[string]any) (string, []map[string]any) {
	t.Helper()
	ra, ok := m["required_action"].(map[string]any)
	if !ok {
		t.Fatalf("no required_action in %v", m)
	}
	var calls []map[string]any
	for _, c := range ra["tool_calls"].([]any) {
		calls = append(calls, c.(map[string]any))
	}
	return ra["type"].(string), calls
}

func TestFunctionToolsEndToEnd(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, functionAgent)
	exec := "/api/v1/runtime/" + sid + "/execute/"

	// Nothing pending yet: an answer is a 400 and changes nothing.
	if r := s.do(req{method: "POST", path: exec, key: key, body: `{"tool_results":[{"tool_call_id":"x","output":"y"}]}`}); r.status != 400 {
		t.Fatalf("answer with nothing pending: %d %s", r.status, r.body)
	}

	out := s.execute(key, sid, `{"content":"calculator {\"expression\":\"1+1\"} and lookup {\"word\":\"otter\"}"}`)
	if out["status"] != "requires_action" {
		t.Fatalf("status = %v: %v", out["status"], out)
	}
	typ, calls := requiredAction(t, out)
	if typ != "tool_calls" || len(calls) != 1 || calls[0]["name"] != "lookup" || calls[0]["arguments"].(map[string]any)["word"] != "otter" || calls[0]["kind"] != "function" {
		t.Fatalf("required_action = %s %v", typ, calls)
	}
	id := calls[0]["id"].(string)

	// The session and history show what waits.
	sess := s.ok("GET", "/api/v1/sessions/"+sid+"/", key, nil).json(t)
	if _, c := requiredAction(t, sess); c[0]["id"] != id {
		t.Fatalf("session required_action = %v", sess["required_action"])
	}
	msgs := s.ok("GET", "/api/v1/runtime/"+sid+"/messages/", key, nil).json(t)["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "assistant" || len(last["tool_calls"].([]any)) != 1 {
		t.Fatalf("history does not show the tool-call turn: %v", msgs)
	}

	// A new message while waiting is a conflict naming what is pending; bad answers are 400s.
	r := s.do(req{method: "POST", path: exec, key: key, body: `{"content":"hello?"}`})
	if typ, msg := r.errorType(t); r.status != 409 || typ != "conflict_error" || !strings.Contains(msg, id) {
		t.Fatalf("message while pending: %d %s", r.status, r.body)
	}
	for _, body := range []string{
		`{"tool_results":[{"tool_call_id":"nope","output":"x"}]}`,
		`{"tool_results":[]}`,
		`{"tool_results":[{"tool_call_id":5,"output":"x"}]}`,
		`{"tool_results":"x"}`,
		`{"approvals":[{"tool_call_id":"` + id + `","approve":true}]}`,
		`{"tool_results":[{"tool_call_id":"` + id + `","output":"x","extra":1}]}`,
		`{"tool_results":[{"tool_call_id":"` + id + `","output":"x","is_error":"no"}]}`,
		`{"content":"hi","tool_results":[{"tool_call_id":"` + id + `","output":"x"}]}`,
		`{"inputs":{"a":1},"tool_results":[{"tool_call_id":"` + id + `","output":"x"}]}`,
	} {
		if r := s.do(req{method: "POST", path: exec, key: key, body: body}); r.status != 400 {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	// Another company's key cannot answer (sessions belong to their key's owner: 403).
	other := s.key("mallory", "evil")
	if r := s.do(req{method: "POST", path: exec, key: other, body: `{"tool_results":[{"tool_call_id":"` + id + `","output":"x"}]}`}); r.status != 403 && r.status != 404 {
		t.Fatalf("foreign answer: %d %s", r.status, r.body)
	}

	// Two answers racing: one runs, the other is a 409 (or, arriving after, a 400); never two runs.
	answer := `{"tool_results":[{"tool_call_id":"` + id + `","output":"an otter is a mammal"}]}`
	var wg sync.WaitGroup
	codes := make([]int, 2)
	bodies := make([][]byte, 2)
	for i := range codes {
		wg.Go(func() {
			r := s.do(req{method: "POST", path: exec, key: key, body: answer})
			codes[i], bodies[i] = r.status, r.body
		})
	}
	wg.Wait()
	ok := 0
	for i, c := range codes {
		switch c {
		case 200:
			ok++
			if !strings.Contains(string(bodies[i]), "an otter is a mammal") || !strings.Contains(string(bodies[i]), `"status":"completed"`) {
				t.Errorf("resumed result: %s", bodies[i])
			}
		case 409, 400:
		default:
			t.Errorf("racing answer: %d %s", c, bodies[i])
		}
	}
	if ok != 1 {
		t.Fatalf("racing answers: %v", codes)
	}
	if sess := s.ok("GET", "/api/v1/sessions/"+sid+"/", key, nil).json(t); sess["required_action"] != nil {
		t.Fatalf("still pending: %v", sess)
	}
	// The conversation goes on.
	if got := reply(t, s.execute(key, sid, `{"content":"thanks"}`)); !strings.Contains(got, "thanks") {
		t.Fatalf("next message: %q", got)
	}
	// Arguments that do not match the function's schema go back to the model; nothing waits.
	out = s.execute(key, sid, `{"content":"lookup {\"word\": 5}"}`)
	if out["status"] != "completed" || !strings.Contains(reply(t, out), "/word") {
		t.Fatalf("bad arguments: %v", out)
	}
	evs := s.sessionEvents(key, sid)
	var kinds []string
	for _, e := range evs {
		if e["type"] == "tool_result" {
			kinds = append(kinds, e["data"].(map[string]any)["kind"].(string))
		}
	}
	if strings.Join(kinds, ",") != "builtin,function,function" { // the last: the refused arguments
		t.Fatalf("tool_result kinds = %v", kinds)
	}
}

func TestFunctionToolsStreamAndAsync(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, functionAgent)
	exec := "/api/v1/runtime/" + sid + "/execute/"
	r := s.do(req{method: "POST", path: exec + "?stream=true", key: key, body: `{"content":"lookup {\"word\":\"a\"}"}`})
	body := string(r.body)
	if r.status != 200 || !strings.Contains(body, "event: requires_action") || strings.Contains(body, "event: result") {
		t.Fatalf("stream: %d %s", r.status, body)
	}
	i := strings.LastIndex(body, "event: requires_action")
	if strings.TrimSpace(body[i:]) == "" || !strings.Contains(body[i:], `"required_action"`) {
		t.Fatalf("the stream does not end with the required action: %s", body[i:])
	}
	sess := s.ok("GET", "/api/v1/sessions/"+sid+"/", key, nil).json(t)
	_, calls := requiredAction(t, sess)
	r = s.do(req{method: "POST", path: exec + "?stream=true", key: key, body: `{"tool_results":[{"tool_call_id":"` + calls[0]["id"].(string) + `","output":{"meaning":"A"}}]}`})
	if body := string(r.body); r.status != 200 || !strings.Contains(body, "event: result") || !strings.Contains(body, `meaning`) {
		t.Fatalf("streamed answer: %d %s", r.status, body)
	}
}
