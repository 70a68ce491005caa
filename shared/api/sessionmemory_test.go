package api_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// memorySession opens a session of cfg (an object's JSON) for user.
func (s *stack) memorySession(key, user, cfg string) string {
	s.t.Helper()
	return s.session(key, `{"user_id":"`+user+`",`+cfg[1:])
}

// eventData are the data of a session's recorded events of one type, read back.
func (s *stack) eventData(key, sid, typ string) []map[string]any {
	s.t.Helper()
	res := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/events/?limit=100", key: key})
	if res.status != 200 {
		s.t.Fatalf("events: %d %s", res.status, res.body)
	}
	var out []map[string]any
	list, _ := res.json(s.t)["events"].([]any)
	for _, e := range list {
		ev := e.(map[string]any)
		if ev["type"] == typ {
			d, _ := ev["data"].(map[string]any)
			out = append(out, d)
		}
	}
	return out
}

// TestMemoryToolsAcrossSessions runs memory through the real stack and the local model: a react
// agent's memory_append (the local model calls the tool the message names) writes the user's
// block, a later session of the same user sees it in its prompt, another user's session and a
// caller without memory:write do not write or see it.
func TestMemoryToolsAcrossSessions(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	cfg := `{"name":"Keeper","agent_type":"react_agent","system_prompt":"You remember.","llm_config":{"provider":"local"},` +
		`"memory":{"blocks":[{"label":"human","description":"What you know of the user","limit":200}],"recall":{"top_k":3}}}`
	ann, bob := "ann-"+uuid.NewString()[:8], "bob-"+uuid.NewString()[:8]

	first := s.memorySession(key, ann, cfg)
	out := s.execute(key, first, `{"content":"memory_append {\"label\":\"human\",\"text\":\"Ann bakes rye in Lyon.\"}"}`)
	if r := reply(t, out); !strings.Contains(r, "now holds 22 of its 200 characters") {
		t.Fatalf("the tool's result: %q", r)
	}
	writes := s.eventData(key, first, "memory_write")
	if len(writes) != 1 || writes[0]["op"] != "append" || writes[0]["label"] != "human" {
		t.Errorf("memory_write events %v", writes)
	}
	if recalls := s.eventData(key, first, "memory_recall"); len(recalls) != 1 || recalls[0]["agent_id"] != "inline:Keeper" {
		t.Errorf("memory_recall events %v", recalls)
	}

	second := s.memorySession(key, ann, cfg)
	if r := reply(t, s.execute(key, second, `{"content":"what do you know of me?"}`)); !strings.Contains(r, "### human (22/200 characters)\nWhat you know of the user\nAnn bakes rye in Lyon.") {
		t.Errorf("a later session of the user does not remember: %q", r)
	}
	other := s.memorySession(key, bob, cfg)
	if r := reply(t, s.execute(key, other, `{"content":"what do you know of me?"}`)); strings.Contains(r, "Ann bakes") || !strings.Contains(r, "(empty)") {
		t.Errorf("another user's session sees: %q", r)
	}
	otherCompany := s.key("eve", "evilcorp")
	sid := s.memorySession(otherCompany, ann, cfg)
	if r := reply(t, s.execute(otherCompany, sid, `{"content":"what do you know of me?"}`)); strings.Contains(r, "Ann bakes") {
		t.Errorf("a user of the same id in another company sees: %q", r)
	}

	reader := s.key("alice", "acme", func(k *auth.NewKey) {
		k.Scopes = []string{domain.ScopeSessionsWrite, domain.ScopeSessionRead, domain.ScopeMemoryRead}
	})
	ro := s.memorySession(reader, ann, cfg)
	if r := reply(t, s.execute(reader, ro, `{"content":"memory_append {\"label\":\"human\",\"text\":\"Ann moved.\"}"}`)); !strings.Contains(r, "lacks the memory:write scope") {
		t.Errorf("a write without memory:write: %q", r)
	}
	if r := reply(t, s.execute(key, s.memorySession(key, ann, cfg), `{"content":"and now?"}`)); strings.Contains(r, "Ann moved") || !strings.Contains(r, "Ann bakes rye in Lyon.") {
		t.Errorf("after the refused write: %q", r)
	}
}
