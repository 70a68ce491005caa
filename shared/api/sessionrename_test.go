package api_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestSessionRenameHandler: PATCH /api/v1/sessions/{id}/ over a fake service: the body is one
// field, title (a string or null), any other a 400 naming it; the answer is the session as GET
// shows it with its title, and the list shows it too; sessions:write, the owner's session only.
func TestSessionRenameHandler(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	path := "/api/v1/sessions/" + sid + "/"
	before := s.do(req{method: "GET", path: path, key: key}).json(t)
	if v, ok := before["title"]; !ok || v != nil {
		t.Errorf("a new session's title = %v (present %v), want null", v, ok)
	}

	res := s.do(req{method: "PATCH", path: path, key: key, body: `{"title":"Refunds, March"}`})
	if res.status != 200 {
		t.Fatalf("rename: %d %s", res.status, res.body)
	}
	want := map[string]any{}
	for k, v := range before {
		want[k] = v
	}
	want["title"] = "Refunds, March"
	if d := cmp.Diff(want, res.json(t)); d != "" {
		t.Errorf("renamed view (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, s.do(req{method: "GET", path: path, key: key}).json(t)); d != "" {
		t.Errorf("GET after the rename (-want +got):\n%s", d)
	}
	var list []map[string]any
	if err := jsonUnmarshal(s.do(req{method: "GET", path: "/api/v1/sessions/", key: key}).body, &list); err != nil || len(list) != 1 || list[0]["title"] != "Refunds, March" {
		t.Errorf("list after the rename = %v (%v)", list, err)
	}
	// Without the trailing slash, as every route of the API.
	if r := s.do(req{method: "PATCH", path: strings.TrimSuffix(path, "/"), key: key, body: `{"title":"Refunds"}`}); r.status != 200 || r.json(t)["title"] != "Refunds" {
		t.Errorf("rename without the slash: %d %s", r.status, r.body)
	}

	for body, field := range map[string]string{
		`{}`:                          "title",
		`{"title":7}`:                 "title",
		`{"title":["a"]}`:             "title",
		`{"title":"a","name":"b"}`:    "name",
		`{"name":"b"}`:                "name",
		`{"Title":"case matters"}`:    "Title",
		`{"title":"a","pinned":true}`: "pinned",
	} {
		if got := fieldOf(t, s.do(req{method: "PATCH", path: path, key: key, body: body})); got != field {
			t.Errorf("PATCH %s names %q, want %q", body, got, field)
		}
	}
	wantStatus(t, "an array body", s.do(req{method: "PATCH", path: path, key: key, body: `["a"]`}), 400, "invalid_request_error", "")
	wantStatus(t, "no body", s.do(req{method: "PATCH", path: path, key: key}), 400, "invalid_request_error", "")
	if got := s.do(req{method: "GET", path: path, key: key}).json(t)["title"]; got != "Refunds" {
		t.Errorf("refused bodies changed the title to %v", got)
	}

	reader := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeSessionRead} })
	wantStatus(t, "PATCH with sessions:read", s.do(req{method: "PATCH", path: path, key: reader, body: `{"title":"x"}`}), 403, "permission_error", domain.MsgNoPermission)
	wantStatus(t, "another user's session", s.do(req{method: "PATCH", path: path, key: s.key("bob", "acme"), body: `{"title":"x"}`}), 403, "permission_error", "")
	wantStatus(t, "another company's session", s.do(req{method: "PATCH", path: path, key: s.key("alice", "globex"), body: `{"title":"x"}`}), 403, "permission_error", "")

	res = s.do(req{method: "PATCH", path: path, key: key, body: `{"title":null}`})
	if v, ok := res.json(t)["title"]; res.status != 200 || !ok || v != nil {
		t.Errorf("title null: %d %s, want the title taken away", res.status, res.body)
	}
}

// TestSessionRenameOnTheStack: the rename through the routes of template.yaml, the sessions
// service and DynamoDB Local: the title shows in GET and the list and stays through a run; the
// feature's rule refuses a title with the field named in the envelope; another company's
// session is refused as GET refuses it, a missing one is 404.
func TestSessionRenameOnTheStack(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	other := s.session(key, flatSession)
	path := "/api/v1/sessions/" + sid + "/"

	if r := s.do(req{method: "PATCH", path: path, key: key, body: `{"title":"Refunds — Émile"}`}); r.status != 200 || r.json(t)["title"] != "Refunds — Émile" || r.json(t)["id"] != sid {
		t.Fatalf("rename: %d %s", r.status, r.body)
	}
	s.execute(key, sid, `{"content":"hello"}`)
	got := s.do(req{method: "GET", path: path, key: key}).json(t)
	if got["title"] != "Refunds — Émile" || got["message_count"] != float64(2) {
		t.Errorf("after a run: title %v, %v messages; want the title kept beside the run's messages", got["title"], got["message_count"])
	}
	var list []map[string]any
	if err := jsonUnmarshal(s.do(req{method: "GET", path: "/api/v1/sessions/", key: key}).body, &list); err != nil || len(list) != 2 {
		t.Fatalf("list: %v (%v)", list, err)
	}
	titles := map[any]any{}
	for _, v := range list {
		titles[v["id"]] = v["title"]
	}
	if d := cmp.Diff(map[any]any{sid: "Refunds — Émile", other: nil}, titles); d != "" {
		t.Errorf("titles in the list (-want +got):\n%s", d)
	}

	for _, bad := range []string{`""`, `"   "`, `"` + strings.Repeat("é", domain.MaxSessionTitle+1) + `"`, `"two\nlines"`, `"tab\there"`} {
		res := s.do(req{method: "PATCH", path: path, key: key, body: `{"title":` + bad + `}`})
		if field, msg := fieldError(t, res); field != "title" || msg != domain.SessionTitleRule {
			t.Errorf("title %s: %s %q", bad, field, msg)
		}
	}
	wantStatus(t, "another company's session", s.do(req{method: "PATCH", path: path, key: s.key("alice", "globex"), body: `{"title":"x"}`}), 403, "permission_error", "")
	wantStatus(t, "GET of another company's session", s.do(req{method: "GET", path: path, key: s.key("alice", "globex")}), 403, "permission_error", "")
	wantStatus(t, "a missing session", s.do(req{method: "PATCH", path: "/api/v1/sessions/5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f/", key: key, body: `{"title":"x"}`}), 404, "not_found_error", "")
	if g := s.do(req{method: "GET", path: path, key: key}).json(t); g["title"] != "Refunds — Émile" {
		t.Errorf("refused renames changed the title to %v", g["title"])
	}
	if r := s.do(req{method: "PATCH", path: path, key: key, body: `{"title":null}`}); r.status != 200 || r.json(t)["title"] != nil {
		t.Errorf("title null: %d %s", r.status, r.body)
	}
}
