package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestMemoryAPIOnTheStack sends every memory route through the application as template.yaml
// routes it, on DynamoDB Local, OpenSearch's stand-in and the local embedder, each answer held
// to the OpenAPI document: the views as the real feature fills them, the list filters as the
// store applies them, conflicts, another company's 404, the scopes, and forgetting a user.
func TestMemoryAPIOnTheStack(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local stack")
	}
	s := newStack(t)
	key := s.key("alice", "acme")
	// Users of their own: OpenSearch's stand-in outlives one test's stack.
	user, other := "guest-"+uuid.NewString(), "guest-"+uuid.NewString()
	agent := uuid.NewString()
	do := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		res := s.do(req{method: method, path: path, key: key, body: body})
		if res.status != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, res.status, res.body, want)
		}
		if len(res.body) == 0 || res.body[0] != '{' {
			return nil
		}
		return res.json(t)
	}
	list := func(path string) []map[string]any {
		t.Helper()
		res := s.do(req{method: "GET", path: path, key: key})
		var out []map[string]any
		if err := json.Unmarshal(res.body, &out); err != nil || res.status != 200 {
			t.Fatalf("GET %s: %d %s", path, res.status, res.body)
		}
		return out
	}
	texts := func(items []map[string]any, field string) []string {
		out := []string{}
		for _, it := range items {
			out = append(out, it[field].(string))
		}
		return out
	}

	own := do("POST", "/api/v1/memory/records/", map[string]any{"user_id": user, "agent_id": agent, "text": "  Allergic to peanuts.  "}, 201)
	if own["text"] != "Allergic to peanuts." || own["agent_id"] != agent || own["embedding_model"] == "" ||
		own["source"].(map[string]any)["type"] != domain.MemorySourceAPI || own["source"].(map[string]any)["key_id"] == nil {
		t.Errorf("record: %v", own)
	}
	shared := do("POST", "/api/v1/memory/records/", map[string]any{"user_id": user, "text": "Speaks French."}, 201)
	if shared["agent_id"] != nil {
		t.Errorf("a record without agent_id is shared: %v", shared)
	}
	do("POST", "/api/v1/memory/records/", map[string]any{"user_id": other, "agent_id": agent, "text": "Likes jazz."}, 201)

	q := url.QueryEscape
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"user_id=" + q(user), []string{"Allergic to peanuts.", "Speaks French."}},
		{"user_id=" + q(user) + "&agent_id=" + q(agent), []string{"Allergic to peanuts."}},
		{"user_id=" + q(user) + "&shared=true", []string{"Speaks French."}},
		{"agent_id=" + q(agent) + "&limit=100", nil}, // the agent's, of every user: checked below
	} {
		got := texts(list("/api/v1/memory/records/?"+tc.query), "text")
		if tc.want == nil {
			if !slices.Contains(got, "Allergic to peanuts.") || !slices.Contains(got, "Likes jazz.") || slices.Contains(got, "Speaks French.") {
				t.Errorf("?%s: %q", tc.query, got)
			}
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("?%s: %q, want %q", tc.query, got, tc.want)
		}
	}

	id := own["id"].(string)
	changed := do("PATCH", "/api/v1/memory/records/"+id+"/", map[string]any{"text": "Allergic to peanuts and shellfish."}, 200)
	if changed["text"] != "Allergic to peanuts and shellfish." || changed["created_at"] != own["created_at"] {
		t.Errorf("patched: %v", changed)
	}
	if got := do("GET", "/api/v1/memory/records/"+id+"/", nil, 200); got["text"] != changed["text"] {
		t.Errorf("read back: %v", got)
	}
	if res := s.do(req{method: "GET", path: "/api/v1/memory/records/" + id + "/", key: s.key("bob", "globex")}); res.status != 404 {
		t.Errorf("another company's record: %d %s", res.status, res.body)
	}
	if res := s.do(req{method: "GET", path: "/api/v1/memory/records/?user_id=" + q(user), key: s.key("bob", "globex")}); res.status != 200 || string(res.body) != "[]\n" {
		t.Errorf("another company's list: %d %s", res.status, res.body)
	}

	blk := do("POST", "/api/v1/memory/blocks/", map[string]any{"user_id": user, "agent_id": agent, "label": "human", "value": "Name: Sam.", "limit": 20}, 201)
	if blk["limit"] != 20.0 || blk["description"] != "" || blk["value"] != "Name: Sam." {
		t.Errorf("block: %v", blk)
	}
	do("POST", "/api/v1/memory/blocks/", map[string]any{"user_id": user, "agent_id": agent, "label": "human"}, 409)
	do("POST", "/api/v1/memory/blocks/", map[string]any{"user_id": user, "label": "human"}, 201) // the shared scope is another
	bid := blk["id"].(string)
	res := s.do(req{method: "PATCH", path: "/api/v1/memory/blocks/" + bid + "/", key: key, body: `{"value":"Name: Sam. Room 412, late checkout."}`})
	if res.status != 400 || firstField(t, res) != "value" {
		t.Errorf("a value over the limit: %d %s", res.status, res.body)
	}
	if got := do("PATCH", "/api/v1/memory/blocks/"+bid+"/", map[string]any{"limit": 100, "value": "Name: Sam. Room 412."}, 200); got["value"] != "Name: Sam. Room 412." {
		t.Errorf("patched block: %v", got)
	}
	if got := texts(list("/api/v1/memory/blocks/?user_id="+q(user)+"&agent_id="+q(agent)), "value"); !slices.Equal(got, []string{"Name: Sam. Room 412."}) {
		t.Errorf("the agent's blocks: %q", got)
	}

	reader := s.key("carol", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeMemoryRead} })
	if res := s.do(req{method: "DELETE", path: "/api/v1/memory/?user_id=" + q(user), key: reader}); res.status != 403 {
		t.Errorf("forget with memory:read: %d %s", res.status, res.body)
	}
	if res := s.do(req{method: "GET", path: "/api/v1/memory/blocks/" + bid + "/", key: reader}); res.status != 200 {
		t.Errorf("read with memory:read: %d %s", res.status, res.body)
	}

	do("DELETE", "/api/v1/memory/records/"+shared["id"].(string)+"/", nil, http.StatusNoContent)
	do("GET", "/api/v1/memory/records/"+shared["id"].(string)+"/", nil, 404)
	got := do("DELETE", "/api/v1/memory/?user_id="+q(user), nil, 200)
	if got["records_deleted"] != 1.0 || got["blocks_deleted"] != 2.0 || got["user_id"] != user {
		t.Errorf("forget: %v", got)
	}
	if got := do("DELETE", "/api/v1/memory/?user_id="+q(user), nil, 200); got["records_deleted"] != 0.0 || got["blocks_deleted"] != 0.0 {
		t.Errorf("forget again: %v", got)
	}
	if got := list("/api/v1/memory/records/?user_id=" + q(user)); len(got) != 0 {
		t.Errorf("after forgetting: %v", got)
	}
	if got := texts(list("/api/v1/memory/records/?user_id="+q(other)), "text"); !slices.Equal(got, []string{"Likes jazz."}) {
		t.Errorf("another user's memory after forgetting: %q", got)
	}
}
