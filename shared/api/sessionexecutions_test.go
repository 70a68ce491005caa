package api_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestSessionExecutionsOnTheStack: GET /api/v1/runtime/{session_id}/executions/ through the
// routes of template.yaml, the sessions service and DynamoDB Local: the session's executions
// in the order they ran, each exactly as its own GET answers it (status, result with the turn's
// messages, usage, stop reason), paged by limit and offset with the Link header naming the next
// page; bad paging 400 at its field; a key without sessions:read, another user's or company's
// session and a missing one answered as the messages list answers them; none of another session.
func TestSessionExecutionsOnTheStack(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	other := s.session(key, flatSession)
	s.execute(key, other, `{"content":"elsewhere"}`)
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		res := s.execute(key, sid, `{"content":"`+text+`"}`)
		ids = append(ids, res["metadata"].(map[string]any)["execution_id"].(string))
	}
	path := "/api/v1/runtime/" + sid + "/executions/"

	res := s.do(req{method: "GET", path: path, key: key})
	if res.status != 200 {
		t.Fatalf("list: %d %s", res.status, res.body)
	}
	var page struct {
		Executions []map[string]any `json:"executions"`
		HasMore    bool             `json:"has_more"`
	}
	if err := json.Unmarshal(res.body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Executions) != 3 || page.HasMore || res.header.Get("Link") != "" {
		t.Fatalf("list: %d executions, has_more %v, Link %q: %s", len(page.Executions), page.HasMore, res.header.Get("Link"), res.body)
	}
	for i, got := range page.Executions {
		want := s.do(req{method: "GET", path: path + ids[i] + "/", key: key}).json(t)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("item %d against its GET (-GET +list):\n%s", i, d)
		}
		if r, _ := got["result"].(map[string]any); r == nil || got["status"] != "completed" || len(r["messages"].([]any)) == 0 {
			t.Errorf("item %d: %v", i, got)
		}
	}

	// Pages of two: the first names the second in its Link header.
	first := s.do(req{method: "GET", path: path + "?limit=2", key: key})
	var p1 struct {
		Executions []map[string]any `json:"executions"`
		HasMore    bool             `json:"has_more"`
	}
	if err := json.Unmarshal(first.body, &p1); err != nil || len(p1.Executions) != 2 || !p1.HasMore {
		t.Fatalf("first page of two: %s (%v)", first.body, err)
	}
	m := nextLink.FindStringSubmatch(first.header.Get("Link"))
	if m == nil {
		t.Fatalf("first page's Link %q", first.header.Get("Link"))
	}
	second := s.do(req{method: "GET", path: m[1], key: key})
	var p2 struct {
		Executions []map[string]any `json:"executions"`
		HasMore    bool             `json:"has_more"`
	}
	if err := json.Unmarshal(second.body, &p2); err != nil || len(p2.Executions) != 1 || p2.HasMore || second.header.Get("Link") != "" {
		t.Fatalf("second page %s: %s (%v)", m[1], second.body, err)
	}
	if got := []any{p1.Executions[0]["id"], p1.Executions[1]["id"], p2.Executions[0]["id"]}; !cmp.Equal(got, []any{ids[0], ids[1], ids[2]}) {
		t.Errorf("pages give %v, want %v", got, ids)
	}

	for q, field := range map[string]string{"limit=0": "limit", "limit=101": "limit", "limit=x": "limit", "offset=-1": "offset"} {
		if got, _ := fieldError(t, s.do(req{method: "GET", path: path + "?" + q, key: key})); got != field {
			t.Errorf("?%s names %q, want %q", q, got, field)
		}
	}
	if r := s.do(req{method: "GET", path: path + "?offset=9", key: key}); r.status != 200 || string(r.body) != `{"executions":[],"has_more":false}`+"\n" && string(r.body) != `{"executions":[],"has_more":false}` {
		t.Errorf("past the end: %d %s", r.status, r.body)
	}

	// Refused as the messages list refuses.
	msgs := "/api/v1/runtime/" + sid + "/messages/"
	missing := "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	for what, k := range map[string]string{
		"another user's session":      s.key("bob", "acme"),
		"another company's session":   s.key("alice", "globex"),
		"a key without sessions:read": s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeAgentsRead} }),
	} {
		want, got := s.do(req{method: "GET", path: msgs, key: k}), s.do(req{method: "GET", path: path, key: k})
		if want.status < 400 || got.status != want.status || !sameError(t, got, want) {
			t.Errorf("%s: %d %s, the messages list %d %s", what, got.status, got.body, want.status, want.body)
		}
	}
	want := s.do(req{method: "GET", path: "/api/v1/runtime/" + missing + "/messages/", key: key})
	got := s.do(req{method: "GET", path: "/api/v1/runtime/" + missing + "/executions/", key: key})
	if got.status != 404 || got.status != want.status || !sameError(t, got, want) {
		t.Errorf("a missing session: %d %s, the messages list %d %s", got.status, got.body, want.status, want.body)
	}
}

// sameError tells whether two error answers have the same type and message.
func sameError(t *testing.T, a, b response) bool {
	at, am := a.errorType(t)
	bt, bm := b.errorType(t)
	return at == bt && am == bm
}
