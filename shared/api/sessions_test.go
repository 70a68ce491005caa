package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// session creates a session from an inline configuration and returns its id.
func (s *stack) session(key string, cfg string) string {
	s.t.Helper()
	res := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: cfg})
	if res.status != 201 {
		s.t.Fatalf("create session: %d %s", res.status, res.body)
	}
	m := res.json(s.t)
	if m["success"] != true || m["config_hash"] == "" {
		s.t.Fatalf("create session = %s", res.body)
	}
	return m["session_id"].(string)
}

// execute runs content in a session and returns the decoded result.
func (s *stack) execute(key, sid string, body string) map[string]any {
	s.t.Helper()
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: body})
	if res.status != 200 {
		s.t.Fatalf("execute: %d %s", res.status, res.body)
	}
	return res.json(s.t)
}

func reply(t testing.TB, result map[string]any) string {
	t.Helper()
	msgs, _ := result["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatalf("no messages in %v", result)
	}
	return msgs[len(msgs)-1].(map[string]any)["content"].(string)
}

const flatSession = `{"name":"Helper","agent_type":"llm_agent","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"}}`

func TestSessionCreateValidation(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.session(key, flatSession)
	s.session(key, `{"name":"Flow","save_messages":true,"persistent_state":true,"entry_point":"a",
		"agents":[{"name":"a","agent_type":"llm_agent","prompt_config":{"system_prompt":"A"},"llm_config":{},"streaming_config":{"show_output_to_user":false}},
		          {"name":"b","agent_type":"react_agent","description":"uses tools","prompt_config":{"system_prompt":"B"},"llm_config":{}}],
		"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"__end__"}]}`)
	tests := []struct {
		name, body string
		fields     []string
	}{
		{"unknown agent_type", `{"name":"x","agent_type":"robot"}`, []string{"agent_type"}},
		{"unknown tool", `{"name":"x","agent_type":"react_agent","tools":["calculator","teleport"]}`, []string{"tools.1"}},
		{"edge to missing node", `{"name":"g","agents":[{"name":"a"}],"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"ghost"}]}`, []string{"edges.1.to"}},
		{"no path to end", `{"name":"g","agents":[{"name":"a"},{"name":"b"}],"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"a"}]}`, []string{"edges"}},
		{"duplicate node", `{"name":"g","agents":[{"name":"a"},{"name":"a"}]}`, []string{"agents.1.name"}},
		{"missing name", `{"agent_type":"llm_agent"}`, []string{"name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: tt.body})
			if res.status != 400 {
				t.Fatalf("status %d: %s", res.status, res.body)
			}
			var got []string
			for _, e := range res.json(t)["error"].(map[string]any)["errors"].([]any) {
				got = append(got, e.(map[string]any)["field"].(string))
			}
			if diff := cmp.Diff(tt.fields, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s\n%s", diff, res.body)
			}
		})
	}
	var list []map[string]any
	if err := jsonUnmarshal(s.do(req{method: "GET", path: "/api/v1/sessions/", key: key}).body, &list); err != nil || len(list) != 2 {
		t.Errorf("sessions after bad creates: %d (%v)", len(list), err)
	}
}

func TestSessionFromAgent(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	a := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Desk Agent","system_prompt":"Desk prompt."}}`}).json(t)
	res := s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=desk-agent", key: key})
	if res.status != 200 {
		t.Fatalf("from-agent: %d %s", res.status, res.body)
	}
	m := res.json(t)
	if m["success"] != true || m["agent_id"] != a["id"] || m["agent_name"] != "Desk Agent" || m["session_id"] == "" {
		t.Errorf("from-agent = %s", res.body)
	}
	out := s.execute(key, m["session_id"].(string), `{"content":"hi desk"}`)
	if r := reply(t, out); !strings.Contains(r, "Desk prompt.") || !strings.Contains(r, "hi desk") {
		t.Errorf("the session does not run the agent's configuration: %q", r)
	}
	if r := s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=nope", key: key}); r.status != 404 {
		t.Errorf("unknown agent_key: %d", r.status)
	}
	if r := s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/", key: key}); r.status != 400 {
		t.Errorf("missing agent_key: %d", r.status)
	}
	if r := s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=desk-agent", key: s.key("eve", "evil")}); r.status != 404 {
		t.Errorf("another company's private agent: %d", r.status)
	}
}

func TestFeedback(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	msgID := s.execute(key, sid, `{"content":"rate me"}`)["messages"].([]any)[0].(map[string]any)["id"].(string)
	res := s.do(req{method: "POST", path: "/api/v1/sessions/feedback/", key: key, body: `{"message":"` + msgID + `","rating":1}`})
	if res.status != 200 {
		t.Fatalf("feedback: %d %s", res.status, res.body)
	}
	f := res.json(t)
	if f["message"] != msgID || f["rating"] != float64(1) || f["comment"] != nil || f["user"] != "alice" {
		t.Errorf("feedback = %s", res.body)
	}
	upd := s.do(req{method: "POST", path: "/api/v1/sessions/feedback/", key: key, body: `{"message":"` + msgID + `","comment":"great"}`}).json(t)
	if upd["id"] != f["id"] || upd["rating"] != float64(1) || upd["comment"] != "great" || upd["created_at"] != f["created_at"] {
		t.Errorf("updated feedback = %v", upd)
	}
	for name, body := range map[string]string{
		"rating 2":      `{"message":"` + msgID + `","rating":2}`,
		"rating string": `{"message":"` + msgID + `","rating":"up"}`,
		"no message":    `{"rating":1}`,
		"bad uuid":      `{"message":"x","rating":1}`,
	} {
		if r := s.do(req{method: "POST", path: "/api/v1/sessions/feedback/", key: key, body: body}); r.status != 400 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if r := s.do(req{method: "POST", path: "/api/v1/sessions/feedback/", key: key, body: `{"message":"3f1c2d4e-0000-4000-8000-000000000000","rating":1}`}); r.status != 404 {
		t.Errorf("unknown message: %d", r.status)
	}
	if r := s.do(req{method: "POST", path: "/api/v1/sessions/feedback/", key: s.key("bob", "acme"), body: `{"message":"` + msgID + `","rating":-1}`}); r.status != 403 {
		t.Errorf("feedback on another user's message: %d", r.status)
	}
}

func TestSessionGetListDelete(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	g := s.do(req{method: "GET", path: "/api/v1/sessions/" + sid + "/", key: key})
	if g.status != 200 || g.json(t)["id"] != sid {
		t.Fatalf("get: %d %s", g.status, g.body)
	}
	if r := s.do(req{method: "GET", path: "/api/v1/sessions/" + sid + "/", key: s.key("bob", "acme")}); r.status != 403 {
		t.Errorf("another user's session: %d", r.status)
	}
	if r := s.do(req{method: "DELETE", path: "/api/v1/sessions/" + sid + "/", key: key}); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	for _, r := range []req{
		{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"hello?"}`},
		{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/", key: key},
		{method: "GET", path: "/api/v1/sessions/" + sid + "/", key: key},
	} {
		if res := s.do(r); res.status != 404 {
			t.Errorf("%s %s after delete: %d", r.method, r.path, res.status)
		}
	}
}

func TestExecuteWaitsForLeaseThenConflicts(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	p := domain.Principal{Owner: "alice", Company: "acme"}
	now := time.Now()
	if _, err := s.app.Store.AcquireSession(context.Background(), p, sid, "someone-else", now.Add(time.Minute), now); err != nil {
		t.Fatal(err)
	}
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"blocked"}`})
	if typ, _ := res.errorType(t); res.status != 409 || typ != "conflict_error" {
		t.Fatalf("execute on a leased session: %d %s", res.status, res.body)
	}
	if err := s.app.Store.ReleaseSession(context.Background(), sid, "someone-else"); err != nil {
		t.Fatal(err)
	}
	s.execute(key, sid, `{"content":"free again"}`)
}

// TestSessionHandlers: the sessions group's bodies, views and scopes over fakes (the feature's
// rules, such as which configurations are valid, are tested in shared/sessions and above on the
// local stack).
func TestSessionHandlers(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)

	// A session without variables or agent shows them as {} and null.
	got := s.do(req{method: "GET", path: "/api/v1/sessions/" + sid + "/", key: key})
	if got.status != 200 {
		t.Fatalf("get: %d %s", got.status, got.body)
	}
	v := got.json(t)
	if v["id"] != sid || v["agent_id"] != nil || !cmp.Equal(v["variables"], map[string]any{}) || v["message_count"] != float64(0) {
		t.Errorf("session view = %s", got.body)
	}
	var list []map[string]any
	if err := jsonUnmarshal(s.do(req{method: "GET", path: "/api/v1/sessions/", key: key}).body, &list); err != nil || len(list) != 1 || !cmp.Equal(list[0], v) {
		t.Errorf("list = %v (%v), want the view of the one session", list, err)
	}

	// From an agent: the agent's id and name beside the session's.
	a := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Desk Agent"}}`}).json(t)
	res := s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=desk-agent", key: key})
	if m := res.json(t); res.status != 200 || m["success"] != true || m["agent_id"] != a["id"] || m["agent_name"] != "Desk Agent" || m["session_id"] == "" {
		t.Errorf("from-agent: %d %s", res.status, res.body)
	}
	if field := fieldOf(t, s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/", key: key})); field != "agent_key" {
		t.Errorf("from-agent without agent_key names %q", field)
	}

	// Feedback: rating and comment reach the feature as given, absent as nil.
	fb := s.do(req{method: "POST", path: "/api/v1/sessions/feedback/", key: key, body: `{"message":"` + uuidOf(7) + `","rating":-1}`})
	if f := fb.json(t); fb.status != 200 || f["message"] != uuidOf(7) || f["rating"] != float64(-1) || f["comment"] != nil || f["user"] != "alice" {
		t.Errorf("feedback: %d %s", fb.status, fb.body)
	}
	for body, field := range map[string]string{`{"rating":1}`: "message", `{"message":"` + uuidOf(7) + `","rating":"up"}`: "rating", `{"message":7}`: "message"} {
		if got := fieldOf(t, s.do(req{method: "POST", path: "/api/v1/sessions/feedback/", key: key, body: body})); got != field {
			t.Errorf("feedback %s names %q, want %q", body, got, field)
		}
	}

	// Scopes: sessions:read reads, and nothing more.
	reader := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeSessionRead} })
	for _, r := range []req{
		{method: "GET", path: "/api/v1/sessions/", key: reader},
		{method: "GET", path: "/api/v1/sessions/" + sid + "/", key: reader},
	} {
		wantStatus(t, r.method+" "+r.path+" with sessions:read", s.do(r), 200, "", "")
	}
	for _, r := range []req{
		{method: "POST", path: "/api/v1/sessions/", key: reader, body: flatSession},
		{method: "DELETE", path: "/api/v1/sessions/" + sid + "/", key: reader},
		{method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=desk-agent", key: reader},
		{method: "POST", path: "/api/v1/sessions/feedback/", key: reader, body: `{"message":"` + uuidOf(7) + `"}`},
	} {
		wantStatus(t, r.method+" "+r.path+" with sessions:read", s.do(r), 403, "permission_error", domain.MsgNoPermission)
	}

	// Another user's session is refused; a deleted one is gone.
	wantStatus(t, "another user's session", s.do(req{method: "GET", path: "/api/v1/sessions/" + sid + "/", key: s.key("bob", "acme")}), 403, "permission_error", "")
	if d := s.do(req{method: "DELETE", path: "/api/v1/sessions/" + sid + "/", key: key}); d.status != 204 || len(d.body) != 0 {
		t.Errorf("delete: %d %s", d.status, d.body)
	}
	wantStatus(t, "deleted session", s.do(req{method: "GET", path: "/api/v1/sessions/" + sid + "/", key: key}), 404, "not_found_error", "")
}
