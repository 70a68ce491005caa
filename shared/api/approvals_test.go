package api_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// countingMCP serves the test MCP server and counts the tools/call requests it receives; its
// URL is the Streamable HTTP endpoint.
func countingMCP(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	h := mcptest.Handler()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			if bytes.Contains(b, []byte(`"tools/call"`)) {
				calls.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + mcptest.PathMCP, &calls
}

// approvalAgent binds the server named local, every echo call after a person's approval.
const approvalAgent = `{"name":"m","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},
	"tools":[{"type":"mcp","server":"local","allowed_tools":["echo"],"require_approval":"always"}]}`

// pendingApproval sends an echo message and returns the id of the call that waits for approval.
func pendingApproval(t *testing.T, s *stack, key, sid string) string {
	t.Helper()
	out := s.execute(key, sid, `{"content":"echo {\"message\": \"hi\"}"}`)
	typ, calls := requiredAction(t, out)
	if typ != "approval" || len(calls) != 1 {
		t.Fatalf("required_action = %s %v", typ, calls)
	}
	return calls[0]["id"].(string)
}

func approvalBody(id string, approve bool) string {
	if approve {
		return `{"approvals":[{"tool_call_id":"` + id + `","approve":true}]}`
	}
	return `{"approvals":[{"tool_call_id":"` + id + `","approve":false,"reason":"no"}]}`
}

// TestApprovalAfterTheServerWasDeleted: a call waiting for approval whose MCP server was deleted
// no longer wedges its session. Denied, it completes with the denial; approved, it completes
// with an error result saying the call was not made. The session is then free: a new message is
// not a 409 (it is the 400 of a configuration naming a missing server), and runs once a server
// of that name exists again.
func TestApprovalAfterTheServerWasDeleted(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	for _, tt := range []struct {
		name    string
		approve bool
		want    string // in the call's tool_result
	}{
		{"denied", false, "A person denied this call. Reason: no"},
		{"approved", true, `The MCP server \"local\" was deleted or replaced since the approval was asked; the call was not made.`},
	} {
		t.Logf("case %s", tt.name)
		url, calls := countingMCP(t)
		srv := s.mcpServer(key, "local", url)
		sid := s.session(key, approvalAgent)
		id := pendingApproval(t, s, key, sid)
		if r := s.do(req{method: "DELETE", path: "/api/v1/mcp-servers/" + srv["id"].(string) + "/", key: key}); r.status != 204 {
			t.Fatalf("delete the server: %d %s", r.status, r.body)
		}
		out := s.execute(key, sid, approvalBody(id, tt.approve))
		if out["status"] != "completed" || out["required_action"] != nil {
			t.Fatalf("answer = %v", out)
		}
		results := eventsOf(s.sessionEvents(key, sid), "tool_result")
		if len(results) != 1 || results[0]["data"].(map[string]any)["is_error"] != true || !strings.Contains(toJSON(t, results[0]), tt.want) {
			t.Fatalf("tool_result events = %v, want one error with %q", results, tt.want)
		}
		if n := calls.Load(); n != 0 {
			t.Fatalf("the deleted server got %d calls", n)
		}
		next := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"hello"}`})
		if typ, msg := next.errorType(t); next.status != 400 || typ != "invalid_request_error" || !strings.Contains(msg, "no longer exists") {
			t.Fatalf("a new message after the answer: %d %s", next.status, next.body)
		}
		srv = s.mcpServer(key, "local", url)
		if out := s.execute(key, sid, `{"content":"hello"}`); out["status"] != "completed" {
			t.Fatalf("a new message once the server exists again: %v", out)
		}
		if r := s.do(req{method: "DELETE", path: "/api/v1/mcp-servers/" + srv["id"].(string) + "/", key: key}); r.status != 204 {
			t.Fatalf("delete the server: %d %s", r.status, r.body)
		}
	}
}

// TestApprovalIsNotForAReplacement: a server deleted and registered again under the same name
// (another record, another URL) never receives the call approved for the old one; a call asked
// and approved after the replacement runs on it.
func TestApprovalIsNotForAReplacement(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	oldURL, oldCalls := countingMCP(t)
	newURL, newCalls := countingMCP(t)
	old := s.mcpServer(key, "local", oldURL)
	sid := s.session(key, approvalAgent)
	id := pendingApproval(t, s, key, sid)
	if r := s.do(req{method: "DELETE", path: "/api/v1/mcp-servers/" + old["id"].(string) + "/", key: key}); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	s.mcpServer(key, "local", newURL)
	out := s.execute(key, sid, approvalBody(id, true))
	if out["status"] != "completed" {
		t.Fatalf("answer = %v", out)
	}
	results := eventsOf(s.sessionEvents(key, sid), "tool_result")
	if len(results) != 1 || results[0]["data"].(map[string]any)["is_error"] != true || !strings.Contains(toJSON(t, results[0]), "deleted or replaced") {
		t.Fatalf("tool_result events = %v", results)
	}
	if o, n := oldCalls.Load(), newCalls.Load(); o != 0 || n != 0 {
		t.Fatalf("calls made: old server %d, its replacement %d; want none", o, n)
	}
	// Asked and approved for the new record, a call runs there.
	id = pendingApproval(t, s, key, sid)
	if got := reply(t, s.execute(key, sid, approvalBody(id, true))); !strings.Contains(got, "Tool result: hi") {
		t.Fatalf("approved on the new record: %q", got)
	}
	if o, n := oldCalls.Load(), newCalls.Load(); o != 0 || n != 1 {
		t.Fatalf("calls made: old server %d, its replacement %d; want 0 and 1", o, n)
	}
}

// TestApprovalsNeedTheirScope: answering approvals needs approvals:write, synchronously or
// queued; a key with sessions:write alone gets 403 and the call still waits. Answering function
// calls needs sessions:write only. Unscoped and admin keys hold approvals:write.
func TestApprovalsNeedTheirScope(t *testing.T) {
	url, calls := countingMCP(t)
	s := newStack(t)
	owner := s.key("alice", "acme")
	scoped := func(scopes ...string) string {
		return s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = scopes })
	}
	runner := scoped(domain.ScopeSessionsWrite)
	s.mcpServer(owner, "local", url)
	sid := s.session(owner, approvalAgent)
	exec := "/api/v1/runtime/" + sid + "/execute/"

	var made int32
	for _, tt := range []struct {
		name   string
		key    string
		async  bool
		status int
		runs   bool // the approved call is made
	}{
		{"sessions:write only", runner, false, 403, false},
		{"sessions:write only, queued", runner, true, 403, false},
		{"sessions:write, approvals:write and agents:read", scoped(domain.ScopeSessionsWrite, domain.ScopeApprovals, domain.ScopeAgentsRead), false, 200, true},
		// The run goes on with the answering key's scopes, which bind MCP tools only with
		// agents:read: the approval is given, the call is not made, and the model is told why.
		{"sessions:write and approvals:write", scoped(domain.ScopeSessionsWrite, domain.ScopeApprovals), false, 200, false},
		{"unscoped", owner, false, 200, true},
		{"admin", scoped(domain.ScopeAdmin), false, 200, true},
		{"unscoped, queued", owner, true, 202, true},
	} {
		t.Logf("case %s", tt.name)
		id := pendingApproval(t, s, owner, sid)
		path := exec
		if tt.async {
			path += "?async=true"
		}
		r := s.do(req{method: "POST", path: path, key: tt.key, body: approvalBody(id, true)})
		if r.status != tt.status {
			t.Fatalf("answer: %d %s, want %d", r.status, r.body, tt.status)
		}
		if tt.status == 403 {
			if typ, msg := r.errorType(t); typ != "permission_error" || msg != domain.MsgNoPermission {
				t.Fatalf("403 envelope: %s %q", typ, msg)
			}
			// Nothing changed: the call still waits, and the owner's denial settles it.
			sess := s.ok("GET", "/api/v1/sessions/"+sid+"/", owner, nil).json(t)
			if _, waiting := requiredAction(t, sess); len(waiting) != 1 || waiting[0]["id"] != id {
				t.Fatalf("after the 403 the session waits for %v", waiting)
			}
			s.execute(owner, sid, approvalBody(id, false))
		}
		if tt.runs {
			made++
		}
		if tt.async && tt.status == 202 {
			waitDone(t, s, owner, r.header.Get("Location"))
		}
		if n := calls.Load(); n != made {
			t.Fatalf("calls made = %d, want %d", n, made)
		}
		if tt.status != 403 && !tt.runs {
			results := eventsOf(s.sessionEvents(owner, sid), "tool_result")
			if last := results[len(results)-1]; !strings.Contains(toJSON(t, last), "The call was not made: MCP tools not bound: this API key lacks the agents:read scope") {
				t.Fatalf("the last tool_result = %v", last)
			}
		}
	}

	// The same sessions:write-only key answers function calls.
	fsid := s.session(owner, functionAgent)
	_, fcalls := requiredAction(t, s.execute(runner, fsid, `{"content":"lookup {\"word\":\"otter\"}"}`))
	out := s.execute(runner, fsid, `{"tool_results":[{"tool_call_id":"`+fcalls[0]["id"].(string)+`","output":"an animal"}]}`)
	if out["status"] != "completed" {
		t.Fatalf("function results from a sessions:write key: %v", out)
	}
}

// waitDone polls a queued execution until it is completed.
func waitDone(t *testing.T, s *stack, key, poll string) {
	t.Helper()
	var v map[string]any
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if v = s.ok("GET", poll, key, nil).json(t); v["status"] != "queued" && v["status"] != "running" {
			break
		}
	}
	if v["status"] != "completed" {
		t.Fatalf("queued answer: %v", v)
	}
}

// TestOpenAPIScopes: the document's Scope enum is the scopes a key may carry, no more, no less.
func TestOpenAPIScopes(t *testing.T) {
	doc, err := openapiDoc()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range doc.Components.Schemas["Scope"].Value.Enum {
		got = append(got, v.(string))
	}
	want := slices.Clone(domain.KnownScopes)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Scope enum = %v, want domain.KnownScopes %v", got, want)
	}
}
