package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/mcpnpm"
	"github.com/agentorch/agentorch/infra/mcptest"
)

// everything is the real server-everything from npm, started once for the package's tests.
var everything struct {
	once sync.Once
	url  string
	err  error
}

func everythingURL(t *testing.T) string {
	t.Helper()
	everything.once.Do(func() {
		root, err := localstack.RepoRoot()
		if err == nil {
			err = mcpnpm.EnsureDeps(context.Background(), root, os.Stderr)
		}
		if err == nil {
			// Stopped when the test process ends (its process group is the test's child).
			everything.url, _, err = mcpnpm.StartEverything(context.Background(), root)
		}
		everything.err = err
	})
	if errors.Is(everything.err, mcpnpm.ErrNoNPM) {
		t.Skip("npm is not installed")
	}
	if everything.err != nil {
		t.Fatal(everything.err)
	}
	return everything.url
}

// startMCPTest serves the test MCP servers (infra/mcptest) on a free port for the test; base is
// their address.
func startMCPTest(t *testing.T) (base string) {
	t.Helper()
	base, stop, err := mcptest.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return base
}

func (s *stack) mcpServer(key, name, url string) map[string]any {
	s.t.Helper()
	r := s.do(req{method: "POST", path: "/api/v1/mcp-servers/", key: key,
		body: `{"name":"` + name + `","url":"` + url + `","headers":{"Authorization":"Bearer s3cret-token"}}`})
	if r.status != 201 {
		s.t.Fatalf("register %s: %d %s", name, r.status, r.body)
	}
	return r.json(s.t)
}

func TestMCPToolsEndToEnd(t *testing.T) {
	url := everythingURL(t)
	s := newStack(t)
	key := s.key("alice", "acme")
	srv := s.mcpServer(key, "everything", url)
	if strings.Contains(string(s.ok("GET", "/api/v1/mcp-servers/"+srv["id"].(string)+"/", key, nil).body), "s3cret") {
		t.Fatal("a header value was shown")
	}
	tools := s.ok("GET", "/api/v1/mcp-servers/"+srv["id"].(string)+"/tools/", key, nil).json(t)["tools"].([]any)
	var names []string
	for _, x := range tools {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	if !strings.Contains(strings.Join(names, ","), "get-sum") {
		t.Fatalf("tools = %v", names)
	}

	// Bad bindings are 400s naming the field; another company's server is unknown all the same.
	for body, field := range map[string]string{
		`{"name":"x","agent_type":"react_agent","tools":[{"type":"mcp","server":"nope"}]}`:                                                                  "tools.0.server",
		`{"name":"x","agent_type":"react_agent","tools":[{"type":"mcp","server":"everything","allowed_tools":["zzz"]}]}`:                                    "tools.0.allowed_tools.0",
		`{"name":"x","agent_type":"react_agent","tools":[{"type":"mcp","server":"everything","allowed_tools":["echo"]},{"type":"function","name":"echo"}]}`: "tools.1",
	} {
		r := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: body})
		if r.status != 400 || !strings.Contains(string(r.body), field) {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	other := s.key("mallory", "evil")
	if r := s.do(req{method: "POST", path: "/api/v1/sessions/", key: other,
		body: `{"name":"x","agent_type":"react_agent","tools":[{"type":"mcp","server":"` + srv["id"].(string) + `"}]}`}); r.status != 400 {
		t.Fatalf("another company's server: %d %s", r.status, r.body)
	}

	// A react agent calls get-sum, with no approval asked.
	sid := s.session(key, `{"name":"Math","agent_type":"react_agent","system_prompt":"Use tools.","llm_config":{"provider":"local","model":"dev"},
		"tools":[{"type":"mcp","server":"everything","allowed_tools":["get-sum","echo"],"require_approval":{"always":["echo"]}}]}`)
	out := s.execute(key, sid, `{"content":"get-sum {\"a\": 2, \"b\": 40}"}`)
	if got := reply(t, out); !strings.Contains(got, "42") {
		t.Fatalf("reply = %q", got)
	}
	// Arguments the tool's schema refuses go back to the model as a tool error; the run completes.
	if out := s.execute(key, sid, `{"content":"get-sum {\"a\": \"two\", \"b\": 1}"}`); out["status"] != "completed" || !strings.Contains(reply(t, out), "/a") {
		t.Fatalf("bad arguments: %v", out)
	}
	evs := s.sessionEvents(key, sid)
	res := eventsOf(evs, "tool_result")[:1]
	if len(res) != 1 || res[0]["data"].(map[string]any)["kind"] != "mcp" || res[0]["data"].(map[string]any)["server"] != "everything" {
		t.Fatalf("tool_result events = %v", res)
	}

	// echo needs approval: the run waits, a denial reaches the model, an approval runs it.
	out = s.execute(key, sid, `{"content":"echo {\"message\": \"hi\"}"}`)
	typ, calls := requiredAction(t, out)
	if typ != "approval" || calls[0]["name"] != "echo" || calls[0]["server"] != "everything" {
		t.Fatalf("required_action = %s %v", typ, calls)
	}
	out = s.execute(key, sid, `{"approvals":[{"tool_call_id":"`+calls[0]["id"].(string)+`","approve":false,"reason":"not now"}]}`)
	if got := reply(t, out); !strings.Contains(got, "not now") || out["status"] != "completed" {
		t.Fatalf("denied reply = %q", got)
	}
	out = s.execute(key, sid, `{"content":"echo {\"message\": \"hello there\"}"}`)
	_, calls = requiredAction(t, out)
	out = s.execute(key, sid, `{"approvals":[{"tool_call_id":"`+calls[0]["id"].(string)+`","approve":true}]}`)
	if got := reply(t, out); !strings.Contains(got, "Echo: hello there") {
		t.Fatalf("approved reply = %q", got)
	}
	if evs := eventsOf(s.sessionEvents(key, sid), "approval"); len(evs) != 2 {
		t.Fatalf("approval events = %v", evs)
	}
	for _, e := range s.sessionEvents(key, sid) {
		if strings.Contains(toJSON(t, e), "s3cret") {
			t.Fatalf("a header value reached an event: %v", e)
		}
	}
}

func TestMCPFailuresAreToolErrors(t *testing.T) {
	base, stop, err := mcptest.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newStack(t)
	key := s.key("alice", "acme")
	flaky := s.mcpServer(key, "flaky", base+mcptest.PathMCP)
	// A graph whose second node has its own tools; the server then goes away.
	sid := s.session(key, `{"name":"g","agents":[
		{"name":"first","agent_type":"llm_agent","llm_config":{"provider":"local","model":"dev"}},
		{"name":"second","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},"tools":[{"type":"mcp","server":"flaky","allowed_tools":["fail","echo"]}]}],
		"edges":[{"from":"__start__","to":"first"},{"from":"first","to":"second"},{"from":"second","to":"__end__"}]}`)
	out := s.execute(key, sid, `{"content":"fail {}"}`)
	if out["status"] != "completed" {
		t.Fatalf("status %v", out)
	}
	if r := eventsOf(s.sessionEvents(key, sid), "tool_result"); len(r) != 1 || r[0]["data"].(map[string]any)["is_error"] != true {
		t.Fatalf("fail: %v", r)
	}
	stop()
	out = s.execute(key, sid, `{"content":"echo {\"message\":\"x\"}"}`)
	if out["status"] != "completed" {
		t.Fatalf("status with the server down: %v", out)
	}
	errs := eventsOf(s.sessionEvents(key, sid), "error")
	if len(errs) == 0 || !strings.Contains(toJSON(t, errs[len(errs)-1]), "mcp:") {
		t.Fatalf("error events = %v", errs)
	}
	// The record tells what the run met.
	rec := s.ok("GET", "/api/v1/mcp-servers/"+flaky["id"].(string)+"/", key, nil).json(t)
	if rec["status"] != "error" || !strings.Contains(rec["last_error"].(string), "could not be used") {
		t.Fatalf("the server's record after a failed run: %v", rec)
	}
	// A server that does not speak MCP is refused at registration, and so is an internal address.
	for _, u := range []string{base + mcptest.PathHTML, "http://169.254.169.254/latest/", "ftp://example.com/"} {
		if r := s.do(req{method: "POST", path: "/api/v1/mcp-servers/", key: key, body: `{"name":"bad","url":"` + u + `"}`}); r.status != 400 {
			t.Errorf("%s: %d %s", u, r.status, r.body)
		}
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMCPExecuteRoundTrips: an execute that binds an MCP server costs today's four DynamoDB
// calls (the lease, the history, the commit, the usage counter) and one BatchGetItem of the server it binds (by
// the id its name had when the session was checked), however many calls of how many of its
// tools the run makes; the connection is opened once per run.
func TestMCPExecuteRoundTrips(t *testing.T) {
	base := startMCPTest(t)
	meter := &ddbMeter{}
	s := newStack(t, meter.option)
	key := s.key("alice", "acme")
	s.mcpServer(key, "local", base+mcptest.PathMCP)
	sid := s.session(key, `{"name":"m","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},"tools":[{"type":"mcp","server":"local","allowed_tools":["echo"]}]}`)
	meter.reset()
	out := s.execute(key, sid, `{"content":"echo {\"message\":\"one\"} echo {\"message\":\"two\"}"}`)
	if got := reply(t, out); !strings.Contains(got, "one") || !strings.Contains(got, "two") {
		t.Fatalf("reply = %q", got)
	}
	if got := meter.calls.Load(); got != 5 { // and the usage counter's UpdateItem ADD
		t.Errorf("an execute binding an MCP server made %d DynamoDB calls, want 5", got)
	}
}

// TestAsyncPauseShowsInThePoll: a queued execution that pauses is requires_action in its poll,
// and a synchronous answer completes it under the same execution id.
func TestAsyncPauseShowsInThePoll(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, functionAgent)
	r := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: key, body: `{"content":"lookup {\"word\":\"x\"}"}`})
	if r.status != 202 {
		t.Fatalf("enqueue: %d %s", r.status, r.body)
	}
	poll := "/api/v1/runtime/" + sid + "/executions/" + r.json(t)["id"].(string) + "/"
	var v map[string]any
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		v = s.ok("GET", poll, key, nil).json(t)
		if v["status"] != "queued" && v["status"] != "running" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v["status"] != "requires_action" {
		t.Fatalf("poll = %v", v)
	}
	_, calls := requiredAction(t, v)
	s.execute(key, sid, `{"tool_results":[{"tool_call_id":"`+calls[0]["id"].(string)+`","output":"X"}]}`)
	if v = s.ok("GET", poll, key, nil).json(t); v["status"] != "completed" || v["required_action"] != nil {
		t.Fatalf("poll after the answer = %v", v)
	}
}

// TestAsyncAnswer: an answer may be queued too: 202 with the paused execution, which the worker
// continues and the poll shows completed; with nothing pending a queued answer is a 400.
func TestAsyncAnswer(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, functionAgent)
	_, calls := requiredAction(t, s.execute(key, sid, `{"content":"lookup {\"word\":\"y\"}"}`))
	path := "/api/v1/runtime/" + sid + "/execute/?async=true"
	for _, bad := range []string{`{"tool_results":[{"tool_call_id":"nope","output":"x"}]}`, `{"approvals":[{"tool_call_id":"` + calls[0]["id"].(string) + `","approve":true}]}`} {
		if r := s.do(req{method: "POST", path: path, key: key, body: bad}); r.status != 400 {
			t.Fatalf("%s: %d %s", bad, r.status, r.body)
		}
	}
	r := s.do(req{method: "POST", path: path, key: key, body: `{"tool_results":[{"tool_call_id":"` + calls[0]["id"].(string) + `","output":"queued Y"}]}`})
	if r.status != 202 {
		t.Fatalf("queued answer: %d %s", r.status, r.body)
	}
	q := r.json(t)
	if q["status"] != "queued" || q["required_action"] != nil {
		t.Fatalf("queued answer = %v", q)
	}
	poll := "/api/v1/runtime/" + sid + "/executions/" + q["id"].(string) + "/"
	var v map[string]any
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if v = s.ok("GET", poll, key, nil).json(t); v["status"] != "queued" && v["status"] != "running" {
			break
		}
	}
	if v["status"] != "completed" || !strings.Contains(toJSON(t, v["result"]), "queued Y") {
		t.Fatalf("poll = %v", v)
	}
	if r := s.do(req{method: "POST", path: path, key: key, body: `{"tool_results":[{"tool_call_id":"` + calls[0]["id"].(string) + `","output":"again"}]}`}); r.status != 400 {
		t.Fatalf("a queued answer with nothing pending: %d %s", r.status, r.body)
	}
}

// TestRacingApprovalsRunOnce: while an approved call runs, a second answer to the same pending
// call is a 409 conflict and runs nothing; after the run it is a 400 (nothing pending).
func TestRacingApprovalsRunOnce(t *testing.T) {
	base := startMCPTest(t)
	s := newStack(t)
	key := s.key("alice", "acme")
	s.mcpServer(key, "local", base+mcptest.PathMCP)
	sid := s.session(key, `{"name":"m","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},
		"tools":[{"type":"mcp","server":"local","allowed_tools":["slow"],"require_approval":"always"}]}`)
	_, calls := requiredAction(t, s.execute(key, sid, `{"content":"slow {\"ms\": 1500}"}`))
	answer := `{"approvals":[{"tool_call_id":"` + calls[0]["id"].(string) + `","approve":true}]}`
	path := "/api/v1/runtime/" + sid + "/execute/"
	first := make(chan response, 1)
	go func() { first <- s.do(req{method: "POST", path: path, key: key, body: answer}) }()
	time.Sleep(500 * time.Millisecond) // the first answer holds the session while slow runs
	if r := s.do(req{method: "POST", path: path, key: key, body: answer}); r.status != 409 {
		t.Fatalf("a racing answer: %d %s", r.status, r.body)
	}
	if r := <-first; r.status != 200 {
		t.Fatalf("the first answer: %d %s", r.status, r.body)
	}
	if r := s.do(req{method: "POST", path: path, key: key, body: answer}); r.status != 400 {
		t.Fatalf("an answer after the run: %d %s", r.status, r.body)
	}
	if n := len(eventsOf(s.sessionEvents(key, sid), "tool_result")); n != 1 {
		t.Fatalf("the call ran %d times", n)
	}
}
