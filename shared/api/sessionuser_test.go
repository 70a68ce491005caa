package api_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// errorFields lists the fields of a 400's error body.
func badFields(t *testing.T, r response) []string {
	t.Helper()
	if r.status != 400 {
		t.Fatalf("status %d, want 400: %s", r.status, r.body)
	}
	var got []string
	errs, _ := r.json(t)["error"].(map[string]any)["errors"].([]any)
	for _, e := range errs {
		got = append(got, e.(map[string]any)["field"].(string))
	}
	return got
}

// TestSessionUserIDOverHTTP: user_id stands beside the configuration's fields in a session
// create body (no part of the configuration stored and hashed) and in from-agent's query; a bad
// one is a 400 on user_id.
func TestSessionUserIDOverHTTP(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	with := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: `{"user_id":"customer-7",` + flatSession[1:]})
	if with.status != 201 {
		t.Fatalf("create with user_id: %d %s", with.status, with.body)
	}
	without := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: flatSession}).json(t)
	created := with.json(t)
	if created["config_hash"] != without["config_hash"] {
		t.Errorf("user_id changed the configuration's hash: %v != %v", created["config_hash"], without["config_hash"])
	}
	view := s.do(req{method: "GET", path: "/api/v1/sessions/" + created["session_id"].(string) + "/", key: key}).json(t)
	if cfg, _ := view["config"].(map[string]any); cfg == nil || cfg["user_id"] != nil || cfg["name"] != "Helper" {
		t.Errorf("the configuration shown = %v, want it without user_id", view["config"])
	}
	for _, body := range []string{`{"user_id":"",`, `{"user_id":7,`, `{"user_id":"a\u0000b",`, `{"user_id":"` + strings.Repeat("u", 257) + `",`} {
		if diff := cmp.Diff([]string{"user_id"}, badFields(t, s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: body + flatSession[1:]}))); diff != "" {
			t.Errorf("%s…: fields (-want +got):\n%s", body, diff)
		}
	}
	if r := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: `{"user_id":null,` + flatSession[1:]}); r.status != 201 {
		t.Errorf("user_id null: %d %s", r.status, r.body)
	}

	if r := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Desk Agent","system_prompt":"Desk prompt."}}`}); r.status != 201 {
		t.Fatalf("agent create: %d %s", r.status, r.body)
	}
	if r := s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=desk-agent&user_id=" + url.QueryEscape("customer 7"), key: key}); r.status != 200 {
		t.Errorf("from-agent with user_id: %d %s", r.status, r.body)
	}
	for _, q := range []string{"&user_id=", "&user_id=" + url.QueryEscape("a\nb")} {
		if diff := cmp.Diff([]string{"user_id"}, badFields(t, s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=desk-agent" + q, key: key}))); diff != "" {
			t.Errorf("from-agent %s: fields (-want +got):\n%s", q, diff)
		}
	}
}

// TestMemoryConfigOverHTTP: a configuration's memory object is accepted by session create,
// agent create and validate, and a bad one refused with its dotted fields; memory on needs
// memory:read to open a session.
func TestMemoryConfigOverHTTP(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	good := `{"name":"Mem","agent_type":"react_agent","memory":{"enabled":true,"blocks":[{"label":"human","description":"the user","limit":500}],"recall":{"top_k":3},"extract":{"enabled":false}}}`
	bad := `{"name":"Mem","memory":{"blocks":[{"label":"Human"},{"label":"x","limit":0}],"recall":{"top_k":99},"remember":true}}`
	s.session(key, good)
	if diff := cmp.Diff([]string{"memory.remember", "memory.blocks.0.label", "memory.blocks.1.limit", "memory.recall.top_k"},
		badFields(t, s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: bad}))); diff != "" {
		t.Errorf("session create: fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tools.0"}, badFields(t, s.do(req{method: "POST", path: "/api/v1/sessions/", key: key,
		body: `{"name":"T","agent_type":"react_agent","tools":["memory_save"]}`}))); diff != "" {
		t.Errorf("a memory tool in tools: fields (-want +got):\n%s", diff)
	}
	if r := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":` + good + `}`}); r.status != 201 {
		t.Errorf("agent create: %d %s", r.status, r.body)
	}
	if diff := cmp.Diff([]string{"system_config.memory.remember", "system_config.memory.blocks.0.label", "system_config.memory.blocks.1.limit", "system_config.memory.recall.top_k"},
		badFields(t, s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":` + bad + `}`}))); diff != "" {
		t.Errorf("agent create: fields (-want +got):\n%s", diff)
	}
	if m := s.do(req{method: "POST", path: "/api/v1/agent/validate/", key: key, body: bad}).json(t); m["valid"] != false || len(m["errors"].([]any)) != 4 {
		t.Errorf("validate = %v", m)
	}
	if m := s.do(req{method: "POST", path: "/api/v1/agent/validate/", key: key, body: good}).json(t); m["valid"] != true {
		t.Errorf("validate = %v", m)
	}
	noMemory := s.key("bob", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeSessionsWrite, domain.ScopeSessionRead} })
	if r := s.do(req{method: "POST", path: "/api/v1/sessions/", key: noMemory, body: good}); r.status != 403 {
		t.Errorf("memory on without memory:read: %d %s", r.status, r.body)
	}
	withMemory := s.key("bob", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeSessionsWrite, domain.ScopeMemoryRead} })
	s.session(withMemory, good)
}
