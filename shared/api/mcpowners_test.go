package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// recordingMCP is the test MCP server behind a recorder of what reached it: the Authorization
// header and the JSON-RPC method of every request.
type recordingMCP struct {
	url  string
	mu   sync.Mutex
	seen []string // "<method> <authorization>"
}

func newRecordingMCP(t *testing.T) *recordingMCP {
	t.Helper()
	rec := &recordingMCP{}
	h := mcptest.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var msg struct {
			Method string `json:"method"`
		}
		if len(body) > 0 { // a GET of the stream or a DELETE has none
			if err := json.Unmarshal(body, &msg); err != nil {
				t.Errorf("the service sent a body that is not JSON-RPC: %v", err)
			}
		}
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Method+":"+msg.Method+" "+r.Header.Get("Authorization"))
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rec.url = srv.URL + mcptest.PathMCP
	return rec
}

// count is how many requests so far carried s (a method, a header value).
func (m *recordingMCP) count(s string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, x := range m.seen {
		if strings.Contains(x, s) {
			n++
		}
	}
	return n
}

func (m *recordingMCP) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen)
}

// TestMCPAgentOfAnotherCompany: a public agent that binds MCP servers opens only in its own
// company; opened from another company it would run the opener's server of that name with the
// opener's credentials, so from-agent is a 400 naming the binding and nothing reaches the server.
func TestMCPAgentOfAnotherCompany(t *testing.T) {
	theirs, ours := newRecordingMCP(t), newRecordingMCP(t)
	s := newStack(t)
	author := s.key("erin", "evilcorp")
	opener := s.key("alice", "acme")
	s.mcpServer(author, "crm", theirs.url)
	s.do(req{method: "POST", path: "/api/v1/mcp-servers/", key: opener,
		body: `{"name":"crm","url":"` + ours.url + `","headers":{"Authorization":"Bearer acme-only"}}`})
	cfg := `{"name":"Pub","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},"tools":[{"type":"mcp","server":"crm","require_approval":"never"}]}`
	agent := s.created(author, "/api/v1/agent/", json.RawMessage(`{"is_public":true,"system_config":`+cfg+`}`))
	fromAgent := "/api/v1/sessions/from-agent/?agent_key=" + agent["agent_key"].(string)

	before := ours.total()
	res := s.do(req{method: "GET", path: fromAgent, key: opener})
	wantField(t, res, "tools.0.server")
	if !strings.Contains(string(res.body), "another company") {
		t.Errorf("the refusal does not say why: %s", res.body)
	}
	if n := ours.total() - before; n != 0 {
		t.Errorf("%d requests reached the opener's server", n)
	}
	// Its own company opens and runs it.
	res = s.do(req{method: "GET", path: fromAgent, key: author})
	if res.status != http.StatusOK {
		t.Fatalf("from-agent by its company: %d %s", res.status, res.body)
	}
	sid := res.json(t)["session_id"].(string)
	if got := reply(t, s.execute(author, sid, `{"content":"echo {\"message\":\"hi\"}"}`)); !strings.Contains(got, "hi") {
		t.Errorf("reply %q", got)
	}
	if theirs.count("tools/call") != 1 || ours.count("acme-only") != ours.total() {
		t.Errorf("calls: theirs %d, ours %v", theirs.count("tools/call"), ours.seen)
	}
}

// TestMCPNewURLNeedsHeaders: stored headers go only to the URL they were given for. A change of
// url alone (here by another owner's agents:write key of the company) is a 400 on headers and
// the new URL hears nothing; with headers, the new URL gets those and never the old ones.
func TestMCPNewURLNeedsHeaders(t *testing.T) {
	first, second := newRecordingMCP(t), newRecordingMCP(t)
	s := newStack(t)
	owner := s.key("alice", "acme")
	other := s.key("bob", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeAgentsWrite} })
	srv := s.mcpServer(owner, "crm", first.url)
	path := "/api/v1/mcp-servers/" + srv["id"].(string) + "/"

	res := s.do(req{method: "PATCH", path: path, key: other, body: `{"url":"` + second.url + `"}`})
	wantField(t, res, "headers")
	if n := second.total(); n != 0 {
		t.Errorf("%d requests reached the new URL", n)
	}
	res = s.do(req{method: "PATCH", path: path, key: other, body: `{"url":"` + second.url + `","headers":{"Authorization":"Bearer bobs"}}`})
	if res.status != http.StatusOK {
		t.Fatalf("url with headers: %d %s", res.status, res.body)
	}
	if second.count("s3cret-token") != 0 || second.count("Bearer bobs") != second.total() || second.total() == 0 {
		t.Errorf("the new URL heard %v", second.seen)
	}
	if got := s.ok("GET", path, owner, nil).json(t); got["url"] != second.url {
		t.Errorf("url after the change: %v", got["url"])
	}
}

// TestMCPRunNeedsAgentsRead: a key that may run sessions but not read agents binds no MCP tool
// at run time (as at configuration time): the run completes with an error event saying so, and
// the server is never reached; the same session run by a key with agents:read calls it.
func TestMCPRunNeedsAgentsRead(t *testing.T) {
	server := newRecordingMCP(t)
	s := newStack(t)
	full := s.key("alice", "acme")
	runner := s.key("alice", "acme", func(k *auth.NewKey) {
		k.Scopes = []string{domain.ScopeSessionsWrite, domain.ScopeSessionRead}
	})
	s.mcpServer(full, "crm", server.url)
	sid := s.session(full, `{"name":"m","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},"tools":[{"type":"mcp","server":"crm","allowed_tools":["echo"]}]}`)

	before := server.total()
	out := s.execute(runner, sid, `{"content":"echo {\"message\":\"hi\"}"}`)
	if out["status"] != "completed" {
		t.Fatalf("status %v", out)
	}
	if n := server.total() - before; n != 0 {
		t.Errorf("%d requests reached the server for a key without agents:read", n)
	}
	errs := eventsOf(s.sessionEvents(full, sid), "error")
	if len(errs) != 1 || !strings.Contains(toJSON(t, errs[0]), "agents:read") {
		t.Errorf("error events %v", errs)
	}
	s.execute(full, sid, `{"content":"echo {\"message\":\"hi\"}"}`)
	if n := server.count("tools/call"); n != 1 {
		t.Errorf("%d tools/call with agents:read, want 1", n)
	}
}
