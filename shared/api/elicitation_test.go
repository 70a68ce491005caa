package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/infra/mcptest"
)

// askAgent binds the test server's asking tool (the server named asker).
const askAgent = `{"name":"m","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},
	"tools":[{"type":"mcp","server":"asker","allowed_tools":["ask"]}]}`

// elicited sends body and returns the call that waits for a person's answer, with its question.
func elicited(t *testing.T, s *stack, key, sid, body string) map[string]any {
	t.Helper()
	r := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: body})
	if r.status != 200 {
		t.Fatalf("execute %s: %d %s", body, r.status, r.body)
	}
	out := r.json(t)
	typ, calls := requiredAction(t, out)
	if typ != "elicitation" || len(calls) != 1 || out["status"] != "requires_action" {
		t.Fatalf("status %v, required_action %s %v", out["status"], typ, calls)
	}
	return calls[0]
}

// TestElicitationEndToEnd: an MCP server's question mid-call pauses the execution (required
// action "elicitation": the call, its server, the message and the requested schema); the
// person's answer through the execute endpoint continues it, the call made again with the
// answer (defaults applied) and the model given that result; a form that does not fit the
// schema is a 400 naming the field; a second question pauses again.
func TestElicitationEndToEnd(t *testing.T) {
	base := startMCPTest(t)
	s := newStack(t)
	key := s.key("alice", "acme")
	s.mcpServer(key, "asker", base+mcptest.PathElicit)
	sid := s.session(key, askAgent)

	call := elicited(t, s, key, sid, `{"content":"ask {\"questions\": 2}"}`)
	if call["kind"] != "mcp" || call["server"] != "asker" || call["name"] != "ask" {
		t.Errorf("call %v", call)
	}
	q, _ := call["elicitation"].(map[string]any)
	if q["message"] != "Question 1 of 2: who are you?" {
		t.Errorf("elicitation %v", q)
	}
	if diff := cmp.Diff(mcptest.AskSchema, q["requested_schema"]); diff != "" {
		t.Errorf("requested_schema (-want +got):\n%s", diff)
	}
	// The poll and the session show the same question.
	if got := s.ok("GET", "/api/v1/sessions/"+sid+"/", key, nil).json(t)["required_action"]; !strings.Contains(toJSON(t, got), "Question 1 of 2") {
		t.Errorf("session's required_action %v", got)
	}
	id := call["id"].(string)

	for _, bad := range []struct{ body, field string }{
		{`{"elicitations":[{"tool_call_id":"` + id + `","action":"accept","content":{"age":"old"}}]}`, "elicitations.0.content.age"},
		{`{"elicitations":[{"tool_call_id":"` + id + `","action":"accept","content":{}}]}`, "elicitations.0.content.age"},
		{`{"elicitations":[{"tool_call_id":"` + id + `","action":"maybe"}]}`, "elicitations.0.action"},
		{`{"approvals":[{"tool_call_id":"` + id + `","approve":true}]}`, "approvals"},
	} {
		r := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: bad.body})
		if r.status != 400 || !strings.Contains(string(r.body), `"`+bad.field) {
			t.Errorf("%s: %d %s, want 400 naming %s", bad.body, r.status, r.body, bad.field)
		}
	}

	call = elicited(t, s, key, sid, `{"elicitations":[{"tool_call_id":"`+id+`","action":"accept","content":{"age":41}}]}`)
	if q, _ := call["elicitation"].(map[string]any); q["message"] != "Question 2 of 2: who are you?" {
		t.Fatalf("second question %v", call)
	}
	out := s.execute(key, sid, `{"elicitations":[{"tool_call_id":"`+call["id"].(string)+`","action":"decline"}]}`)
	if out["status"] != "completed" || out["required_action"] != nil {
		t.Fatalf("after the answers: %v", out)
	}
	results := eventsOf(s.sessionEvents(key, sid), "tool_result")
	if len(results) != 1 {
		t.Fatalf("tool_result events %v, want one (the answered call)", results)
	}
	var data struct {
		Output  string `json:"output"`
		IsError bool   `json:"is_error"`
	}
	b, _ := json.Marshal(results[0]["data"])
	_ = json.Unmarshal(b, &data)
	if want := "accept {\"age\":41,\"name\":\"John Doe\",\"verified\":true}\ndecline"; data.Output != want || data.IsError {
		t.Errorf("the call's result %q (error %v), want %q", data.Output, data.IsError, want)
	}
	if n := len(eventsOf(s.sessionEvents(key, sid), "elicitation")); n != 2 {
		t.Errorf("%d elicitation events, want 2 (the answers)", n)
	}
}

// TestElicitationDeclinedWhereNoOneCanBeAsked: the surfaces whose clients cannot be asked an MCP
// server's question (the MCP server surface, stateless; the OpenAI API) run the agent with its
// questions declined: the call goes on and its result says so, instead of a pause no one could
// answer.
func TestElicitationDeclinedWhereNoOneCanBeAsked(t *testing.T) {
	base := startMCPTest(t)
	s := newStack(t)
	key := s.key("alice", "acme")
	s.mcpServer(key, "asker", base+mcptest.PathElicit)
	cfg := `{"system_config":{"name":"Quizzer","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},
		"tools":[{"type":"mcp","server":"asker","allowed_tools":["ask"]}]}}`
	if r := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: cfg}); r.status != 201 {
		t.Fatalf("create agent: %d %s", r.status, r.body)
	}
	const said = "no person can answer in this run, so it was declined"
	srv := httptest.NewServer(s.mux)
	defer srv.Close()

	cs := mcpConnect(t, srv, "x-api-key", key)
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "quizzer", Arguments: map[string]any{"message": "ask {}"}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if text := res.Content[0].(*mcpsdk.TextContent).Text; res.IsError || !strings.Contains(text, "decline") || !strings.Contains(text, said) {
		t.Errorf("MCP: result %v %q, want the declined question in the call's result", res.IsError, text)
	}

	r := s.do(req{method: "POST", path: "/api/v1/openai/v1/chat/completions", key: key,
		body: `{"model":"quizzer","messages":[{"role":"user","content":"ask {}"}]}`})
	if r.status != 200 || !strings.Contains(string(r.body), said) {
		t.Errorf("OpenAI: %d %s, want a completion whose call declined the question", r.status, r.body)
	}
}
