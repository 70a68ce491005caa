package api_test

import (
	"strings"
	"testing"
)

// TestVersionKeyOrderAPI: the versions' system_config answers with its keys in the order the
// client wrote them (create and PUT, current version and the list), through the stack; the
// config_hash does not see the order, so the same configuration in another order makes no new
// version; the agent's own system_config (with the defaults) stays sorted.
func TestVersionKeyOrderAPI(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	const first = `{"system_prompt":"Zebra <first>","name":"Ordered","llm_config":{"temperature":0.30,"provider":"local"},"agent_type":"llm_agent"}`
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"is_shared":false, "system_config": ` + first + `}`})
	if res.status != 201 {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	a := res.json(t)
	path := "/api/v1/agent/" + a["id"].(string) + "/"
	wantIn := func(what, body, cfg string) {
		t.Helper()
		if !strings.Contains(body, `"system_config":`+cfg) {
			t.Errorf("%s: %s, want system_config %s", what, body, cfg)
		}
	}
	wantIn("current version after the create", string(s.do(req{method: "GET", path: path + "versions/current/", key: key}).body), first)
	if agent := string(s.do(req{method: "GET", path: path, key: key}).body); !strings.Contains(agent, `"system_config":{"agent_type":"llm_agent",`) {
		t.Errorf("the agent's system_config is not sorted: %s", agent)
	}

	second := strings.Replace(first, "Zebra <first>", "Zebra still <first>", 1)
	if res := s.do(req{method: "PUT", path: path, key: key, body: `{"system_config":` + second + `}`}); res.status != 200 {
		t.Fatalf("put: %d %s", res.status, res.body)
	}
	// The same configuration, keys sorted: the same hash, so no third version.
	sorted := `{"agent_type":"llm_agent","llm_config":{"provider":"local","temperature":0.30},"name":"Ordered","system_prompt":"Zebra still <first>"}`
	res = s.do(req{method: "PUT", path: path, key: key, body: `{"system_config":` + sorted + `}`})
	if res.status != 200 || res.json(t)["version_number"] != "1.0.1" {
		t.Fatalf("put sorted: %d %s", res.status, res.body)
	}
	list := string(s.do(req{method: "GET", path: path + "versions/", key: key}).body)
	wantIn("the versions' list", list, first)
	wantIn("the versions' list", list, second)
	if n := strings.Count(list, `"version_number"`); n != 2 {
		t.Errorf("%d versions, want 2: %s", n, list)
	}
	wantIn("current version after the save", string(s.do(req{method: "GET", path: path + "versions/current/", key: key}).body), second)
}
