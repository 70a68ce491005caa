package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

const supportConfig = `{"system_config":{"name":"Support Bot","agent_type":"llm_agent","system_prompt":"You help.","llm_config":{"model":"m1","temperature":0.2}}}`

func TestCreateAndGetAgent(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig})
	if res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	a := res.json(t)
	for field, want := range map[string]any{
		"agent_key": "support-bot", "name": "Support Bot", "architecture": "llm_agent", "entry_point": "Support Bot",
		"is_public": false, "is_shared": false, "origin_url": nil, "owner": "alice", "company": "acme", "version_number": "1.0.0",
	} {
		if diff := cmp.Diff(want, a[field]); diff != "" {
			t.Errorf("%s (-want +got): %s", field, diff)
		}
	}
	id, _ := a["id"].(string)
	if !uuidRE.MatchString(id) {
		t.Errorf("id %q is not a UUID", id)
	}
	for _, f := range []string{"created_at", "updated_at"} {
		s, _ := a[f].(string)
		if ts, err := time.Parse(time.RFC3339, s); err != nil || !strings.HasSuffix(s, "Z") || time.Since(ts) > time.Minute {
			t.Errorf("%s = %q is not a recent ISO 8601 UTC time", f, s)
		}
	}
	sc := a["system_config"].(map[string]any)
	if mt := sc["llm_config"].(map[string]any)["max_tokens"]; mt != float64(4096) {
		t.Errorf("max_tokens not filled in: %v", mt)
	}

	got := s.do(req{method: "GET", path: "/api/v1/agent/" + id + "/", key: key})
	if got.status != 200 {
		t.Fatalf("get: %d %s", got.status, got.body)
	}
	if diff := cmp.Diff(a, got.json(t)); diff != "" {
		t.Errorf("get differs from create (-create +get):\n%s", diff)
	}
	// Without the trailing slash too.
	if r := s.do(req{method: "GET", path: "/api/v1/agent/" + id, key: key}); r.status != 200 {
		t.Errorf("get without slash: %d", r.status)
	}

	cur := s.do(req{method: "GET", path: "/api/v1/agent/" + id + "/versions/current/", key: key})
	if cur.status != 200 {
		t.Fatalf("current: %d %s", cur.status, cur.body)
	}
	c := cur.json(t)
	wantCfg := map[string]any{"name": "Support Bot", "agent_type": "llm_agent", "system_prompt": "You help.", "llm_config": map[string]any{"model": "m1", "temperature": 0.2}}
	if diff := cmp.Diff(wantCfg, c["system_config"]); diff != "" {
		t.Errorf("current version config is not the explicit one (-want +got):\n%s", diff)
	}
	if c["agent"] != id || c["version_number"] != "1.0.0" || !uuidRE.MatchString(c["id"].(string)) {
		t.Errorf("current version = %s", cur.body)
	}
	if _, ok := c["metadata"].(map[string]any); !ok {
		t.Errorf("metadata missing: %s", cur.body)
	}

	// A second agent of the same name gets a suffixed key, even from another company.
	other := s.key("bob", "globex")
	second := s.do(req{method: "POST", path: "/api/v1/agent", key: other, body: supportConfig}).json(t)
	if k, _ := second["agent_key"].(string); !regexp.MustCompile(`^support-bot-[a-z0-9]{6}$`).MatchString(k) {
		t.Errorf("second agent_key = %v", second["agent_key"])
	}
}

func TestAgentYAMLBody(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	yaml := "system_config:\n  name: Yaml Agent\n  agent_type: react_agent\n  tools: [calculator, current_time]\n  llm_config:\n    max_tokens: 300\n"
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: yaml, header: map[string]string{"Content-Type": "application/yaml"}})
	if res.status != 201 {
		t.Fatalf("yaml create: %d %s", res.status, res.body)
	}
	a := res.json(t)
	if a["architecture"] != "react_agent" || a["agent_key"] != "yaml-agent" {
		t.Errorf("yaml agent = %s", res.body)
	}
	if mt := a["system_config"].(map[string]any)["llm_config"].(map[string]any)["max_tokens"]; mt != float64(300) {
		t.Errorf("max_tokens = %v", mt)
	}
}

// TestValidateEndpoint: a configuration is read as JSON or YAML by its content type and a valid
// one answers {"valid": true, "message"}; which fields an invalid one names is shared/agents'
// TestValidate, its wrapper TestAgentHandlers.
func TestValidateEndpoint(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	for _, tt := range []struct{ name, body, ctype string }{
		{"json", `{"name":"a","agent_type":"llm_agent","system_prompt":"x","llm_config":{"model":"m","temperature":1}}`, "application/json"},
		{"yaml", "name: a\nagent_type: react_agent\ntools: [calculator]\n", "application/x-yaml"},
		{"text/yaml", "name: a\n", "text/yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := s.do(req{method: "POST", path: "/api/v1/agent/validate/", key: key, body: tt.body, header: map[string]string{"Content-Type": tt.ctype}})
			if res.status != 200 {
				t.Fatalf("status %d: %s", res.status, res.body)
			}
			m := res.json(t)
			if msg, _ := m["message"].(string); m["valid"] != true || msg == "" {
				t.Errorf("valid configuration = %s", res.body)
			}
		})
	}
}

// TestUpdateVersionsAndDelete: one agent's life on the stack: a patch makes a version, the
// versions and the current one are read back, a delete ends it. Numbering, PUT, refused updates
// and a deleted agent's key are shared/agents' TestUpdate, TestDelete and TestAgentKeys.
func TestUpdateVersionsAndDelete(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	a := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig}).json(t)
	id := a["id"].(string)
	path := "/api/v1/agent/" + id + "/"

	// A prompt change is a patch release with a new hash, merged into the configuration.
	p := s.do(req{method: "PATCH", path: path, key: key, body: `{"system_config":{"system_prompt":"You help kindly."}}`})
	if p.status != 200 {
		t.Fatalf("patch: %d %s", p.status, p.body)
	}
	pa := p.json(t)
	if pa["version_number"] != "1.0.1" || pa["config_hash"] == a["config_hash"] {
		t.Errorf("after patch: version %v hash %v (was %v)", pa["version_number"], pa["config_hash"], a["config_hash"])
	}
	if pa["system_config"].(map[string]any)["llm_config"].(map[string]any)["model"] != "m1" {
		t.Error("patch did not merge: llm_config.model lost")
	}
	vs := s.do(req{method: "GET", path: path + "versions/", key: key})
	var versions []map[string]any
	if err := jsonUnmarshal(vs.body, &versions); err != nil {
		t.Fatal(err)
	}
	var nums []string
	for _, v := range versions {
		nums = append(nums, v["version_number"].(string))
	}
	if diff := cmp.Diff([]string{"1.0.0", "1.0.1"}, nums); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	cur := s.do(req{method: "GET", path: path + "versions/current/", key: key}).json(t)
	if cur["version_number"] != "1.0.1" || cur["system_config"].(map[string]any)["system_prompt"] != "You help kindly." {
		t.Errorf("current = %v", cur)
	}

	if d := s.do(req{method: "DELETE", path: path, key: key}); d.status != http.StatusNoContent || len(d.body) != 0 {
		t.Fatalf("delete: %d %s", d.status, d.body)
	}
	if g := s.do(req{method: "GET", path: path, key: key}); g.status != 404 {
		t.Errorf("get after delete: %d", g.status)
	}
}

// TestTenantIsolation: on the stack, another company's private agent is a 403 and the lists
// hold what each caller may read; who may read and change what is shared/agents' TestTenancy.
func TestTenantIsolation(t *testing.T) {
	s := newStack(t)
	alice := s.key("alice", "acme")
	carol := s.key("carol", "acme")
	mallory := s.key("mallory", "evil")
	private := s.do(req{method: "POST", path: "/api/v1/agent/", key: alice, body: supportConfig}).json(t)["id"].(string)
	s.do(req{method: "POST", path: "/api/v1/agent/", key: alice, body: `{"is_shared":true,"system_config":{"name":"Shared"}}`})
	s.do(req{method: "POST", path: "/api/v1/agent/", key: alice, body: `{"is_public":true,"system_config":{"name":"Public"}}`})

	res := s.do(req{method: "GET", path: "/api/v1/agent/" + private + "/", key: mallory})
	wantStatus(t, "other company reading a private agent", res, 403, "permission_error", "You do not have permission to access this resource")
	// Lists: alice sees her three; carol the shared and the public one; mallory none of acme's.
	if got := []int{agentCount(t, s, alice), agentCount(t, s, carol), agentCount(t, s, mallory)}; !cmp.Equal(got, []int{3, 2, 0}) {
		t.Errorf("list sizes alice/carol/mallory = %v, want [3 2 0]", got)
	}
}

// TestAgentToolsCheckedLikeSessions: agent create, validate, PATCH and PUT apply the rules of
// session creation, so an unknown tool is refused when the agent is stored, not later.
func TestAgentToolsCheckedLikeSessions(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	bad := `{"name":"toolbot","agent_type":"react_agent","tools":["calculator","teleport"]}`
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":` + bad + `}`})
	if res.status != 400 || !strings.Contains(string(res.body), "system_config.tools.1") || !strings.Contains(string(res.body), "teleport") {
		t.Fatalf("create with an unknown tool: %d %s", res.status, res.body)
	}
	res = s.do(req{method: "POST", path: "/api/v1/agent/validate/", key: key, body: bad})
	if res.status != 200 || res.json(t)["valid"] != false || !strings.Contains(string(res.body), `"tools.1"`) {
		t.Fatalf("validate with an unknown tool: %d %s", res.status, res.body)
	}
	sess := s.do(req{method: "POST", path: "/api/v1/sessions/", key: key, body: bad})
	if sess.status != 400 || !strings.Contains(string(sess.body), "tools.1") {
		t.Fatalf("session with an unknown tool: %d %s", sess.status, sess.body)
	}
	good := s.do(req{method: "POST", path: "/api/v1/agent/", key: key,
		body: `{"system_config":{"name":"toolbot","agent_type":"react_agent","tools":["calculator"]}}`})
	if good.status != 201 {
		t.Fatalf("create: %d %s", good.status, good.body)
	}
	id := good.json(t)["id"].(string)
	res = s.do(req{method: "PATCH", path: "/api/v1/agent/" + id + "/", key: key, body: `{"system_config":{"tools":["teleport"]}}`})
	if res.status != 400 || !strings.Contains(string(res.body), "system_config.tools.0") {
		t.Fatalf("patch with an unknown tool: %d %s", res.status, res.body)
	}
}

// TestAgentHandlers: what the agents group reads from a body (the configuration, its wrapper and
// the flags), the scopes it requires and how it answers, over a fake agents service (versioning,
// keys and tenancy are the feature's, tested in shared/agents over an in-memory store).
func TestAgentHandlers(t *testing.T) {
	s, f := newFakeStack(t)
	key := s.key("alice", "acme")

	// Validate: a wrapped configuration is judged as its content, with the wrapper's own fields.
	f.agents.invalid = []domain.FieldError{{Field: "system_config.name", Message: "is required"}}
	res := s.do(req{method: "POST", path: "/api/v1/agent/validate/", key: key, body: `{"system_config":{"agent_type":"llm_agent"},"is_public":true,"publc":1}`})
	var v struct {
		Valid  bool
		Errors []domain.FieldError
	}
	if err := json.Unmarshal(res.body, &v); err != nil || res.status != 200 || v.Valid {
		t.Fatalf("validate: %d %s", res.status, res.body)
	}
	var fields []string
	for _, e := range v.Errors {
		fields = append(fields, e.Field)
	}
	if !cmp.Equal(fields, []string{"publc", "system_config.name"}) {
		t.Errorf("validate errors = %+v", v.Errors)
	}
	f.agents.invalid = nil
	if m := s.do(req{method: "POST", path: "/api/v1/agent/validate/", key: key, body: "name: a\n", header: map[string]string{"Content-Type": "application/yaml"}}).json(t); m["valid"] != true || m["message"] == "" {
		t.Errorf("valid configuration = %v", m)
	}
	want := []validated{{map[string]any{"agent_type": "llm_agent"}, "system_config"}, {map[string]any{"name": "a"}, ""}}
	if diff := cmp.Diff(want, f.agents.checked, cmp.AllowUnexported(validated{})); diff != "" {
		t.Errorf("validated (-want +got):\n%s", diff)
	}

	// Create: the flags beside system_config, each of its type.
	res = s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Flagged"},"is_public":true,"is_shared":false,"origin_url":"https://example.com/a"}`})
	a := res.json(t)
	if res.status != 201 || a["is_public"] != true || a["is_shared"] != false || a["origin_url"] != "https://example.com/a" || a["name"] != "Flagged" {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	path := "/api/v1/agent/" + a["id"].(string) + "/"
	for _, tt := range []struct{ method, body, field string }{
		{"POST", `{"system_config":{"name":"a"},"is_shared":"no"}`, "is_shared"},
		{"POST", `{"system_config":{"name":"a"},"origin_url":5}`, "origin_url"},
		{"POST", `{"is_public":true}`, "system_config"},
		{"PUT", `{"is_shared":true}`, "system_config"},
		{"PATCH", `{"system_config":"x"}`, "system_config"},
	} {
		p := "/api/v1/agent/"
		if tt.method != "POST" {
			p = path
		}
		if got := fieldOf(t, s.do(req{method: tt.method, path: p, key: key, body: tt.body})); got != tt.field {
			t.Errorf("%s %s names %q, want %q", tt.method, tt.body, got, tt.field)
		}
	}

	// A patch that changes the configuration makes a version; the current one is the last.
	if p := s.do(req{method: "PATCH", path: path, key: key, body: `{"system_config":{"system_prompt":"New."}}`}); p.status != 200 {
		t.Fatalf("patch: %d %s", p.status, p.body)
	}
	var versions []map[string]any
	if err := json.Unmarshal(s.do(req{method: "GET", path: path + "versions/", key: key}).body, &versions); err != nil || len(versions) != 2 {
		t.Fatalf("versions: %v (%v)", versions, err)
	}
	if cur := s.do(req{method: "GET", path: path + "versions/current/", key: key}).json(t); cur["id"] != versions[1]["id"] {
		t.Errorf("current version %v, want the last of %v", cur["id"], versions)
	}

	// Scopes: agents:read reads and validates, and writes nothing.
	reader := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeAgentsRead} })
	for _, r := range []req{
		{method: "GET", path: "/api/v1/agent/"}, {method: "GET", path: path}, {method: "GET", path: path + "versions/"},
		{method: "GET", path: path + "versions/current/"}, {method: "POST", path: "/api/v1/agent/validate/", body: `{"name":"a"}`},
	} {
		r.key = reader
		wantStatus(t, r.method+" "+r.path+" with agents:read", s.do(r), 200, "", "")
	}
	for _, r := range []req{
		{method: "POST", path: "/api/v1/agent/", body: supportConfig}, {method: "PUT", path: path, body: supportConfig},
		{method: "PATCH", path: path, body: `{"is_shared":true}`}, {method: "DELETE", path: path},
	} {
		r.key = reader
		wantStatus(t, r.method+" "+r.path+" with agents:read", s.do(r), 403, "permission_error", domain.MsgNoPermission)
	}

	if d := s.do(req{method: "DELETE", path: path, key: key}); d.status != 204 || len(d.body) != 0 {
		t.Errorf("delete: %d %s", d.status, d.body)
	}
	wantStatus(t, "deleted agent", s.do(req{method: "GET", path: path, key: key}), 404, "not_found_error", "")
}
