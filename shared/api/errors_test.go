package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/auth"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// badInput is a request the API refuses, and how.
type badInput struct {
	name, method, path, body, ctype string
	status                          int
	typ                             string
}

// refuses sends each request and checks the refusal: status, envelope, Allow on a 405.
func refuses(t *testing.T, s *stack, key string, tests []badInput) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.ctype != "" {
				h["Content-Type"] = tt.ctype
			}
			var body any
			if tt.body != "" {
				body = tt.body
			}
			res := s.do(req{method: tt.method, path: tt.path, key: key, body: body, header: h})
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", res.status, tt.status, res.body)
			}
			if typ, _ := res.errorType(t); typ != tt.typ {
				t.Errorf("type %q, want %q", typ, tt.typ)
			}
			if tt.status == 405 && res.header.Get("Allow") == "" {
				t.Error("405 without Allow header")
			}
		})
	}
}

// agentCount is the number of agents key lists.
func agentCount(t *testing.T, s *stack, key string) int {
	t.Helper()
	var list []map[string]any
	if err := jsonUnmarshal(s.do(req{method: "GET", path: "/api/v1/agent/", key: key}).body, &list); err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// TestBadInputChangesNothing: bodies, routes and methods the handlers refuse before the
// feature sees them (over fakes; TestBadConfigChangesNothing has what the feature refuses).
func TestBadInputChangesNothing(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	existing := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig}).json(t)["id"].(string)
	huge := `{"system_config":{"name":"x","system_prompt":"` + strings.Repeat("a", 20<<20) + `"}}`
	refuses(t, s, key, []badInput{
		{"malformed json", "POST", "/api/v1/agent/", `{"system_config":`, "", 400, "invalid_request_error"},
		{"trailing garbage", "POST", "/api/v1/agent/", `{"system_config":{"name":"a"}} x`, "", 400, "invalid_request_error"},
		{"malformed yaml", "POST", "/api/v1/agent/", "system_config: [unclosed", "application/yaml", 400, "invalid_request_error"},
		{"yaml scalar", "POST", "/api/v1/agent/", "just text", "application/yaml", 400, "invalid_request_error"},
		{"array body", "POST", "/api/v1/agent/", `[{"system_config":{"name":"a"}}]`, "", 400, "invalid_request_error"},
		{"empty body", "POST", "/api/v1/agent/", ``, "", 400, "invalid_request_error"},
		{"missing system_config", "POST", "/api/v1/agent/", `{"name":"a"}`, "", 400, "invalid_request_error"},
		{"system_config not object", "POST", "/api/v1/agent/", `{"system_config":"a"}`, "", 400, "invalid_request_error"},
		{"flag wrong type", "POST", "/api/v1/agent/", `{"is_public":"yes","system_config":{"name":"a"}}`, "", 400, "invalid_request_error"},
		{"unsupported media type", "POST", "/api/v1/agent/", `name=a`, "application/x-www-form-urlencoded", 415, "invalid_request_error"},
		{"20 MB body", "POST", "/api/v1/agent/", huge, "", 413, "request_too_large"},
		{"wrong method", "DELETE", "/api/v1/agent/", "", "", 405, "invalid_request_error"},
		{"wrong method on validate", "GET", "/api/v1/agent/validate/", "", "", 405, "invalid_request_error"},
		{"unknown route", "GET", "/api/v1/nothing-here/", "", "", 404, "not_found_error"},
		{"unknown agent subroute", "GET", "/api/v1/agent/" + existing + "/whatever/", "", "", 404, "not_found_error"},
	})
	if n := agentCount(t, s, key); n != 1 {
		t.Errorf("bad input created agents: %d agents", n)
	}
}

// TestBadConfigChangesNothing: a configuration the agents feature refuses is a 400 naming the
// dotted path of the field, an unknown id a 404, and neither changes anything. The feature's
// whole list of refusals is shared/agents' TestCreateRefusesBadConfig and TestTenancy.
func TestBadConfigChangesNothing(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig})
	refuses(t, s, key, []badInput{
		{"missing name", "POST", "/api/v1/agent/", `{"system_config":{"agent_type":"llm_agent"}}`, "", 400, "invalid_request_error"},
		{"unknown id delete", "DELETE", "/api/v1/agent/3f1c2d4e-0000-4000-8000-000000000000/", "", "", 404, "not_found_error"},
	})
	if n := agentCount(t, s, key); n != 1 {
		t.Errorf("bad input created agents: %d agents", n)
	}
	// The field errors name dotted paths.
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"a","llm_config":{"temperature":5}}}`})
	if _, msg := res.errorType(t); !strings.Contains(msg, "system_config.llm_config.temperature") {
		t.Errorf("message does not name the field: %s", msg)
	}
}

func TestAuthentication(t *testing.T) {
	s := newStack(t)
	good := s.key("alice", "acme")
	expired := expiredKey(s, "alice", "acme")
	revoked := s.key("alice", "acme")
	var revokedID string
	var keys []map[string]any
	if err := jsonUnmarshal(s.do(req{method: "GET", path: "/api/v1/api-keys/", key: good}).body, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(revoked, k["prefix"].(string)) {
			revokedID = k["id"].(string)
		}
		if _, ok := k["key"]; ok {
			t.Error("key list shows a secret")
		}
		if _, ok := k["hash"]; ok {
			t.Error("key list shows a hash")
		}
	}
	// Use the key once so it sits in the cache, then revoke it: it must stop working at once.
	if r := s.do(req{method: "GET", path: "/api/v1/agent/", key: revoked}); r.status != 200 {
		t.Fatalf("fresh key: %d", r.status)
	}
	if r := s.do(req{method: "DELETE", path: "/api/v1/api-keys/" + revokedID + "/", key: good}); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	tests := []struct {
		name, key, auth, msg string
	}{
		{"missing", "", "", "Invalid or missing authentication credentials"},
		{"unknown", "ak_nope", "", "Invalid or missing authentication credentials"},
		{"malformed", strings.Repeat("x", 5000), "", "Invalid or missing authentication credentials"},
		{"revoked", revoked, "", "Invalid or missing authentication credentials"},
		{"expired", expired, "", "API key has expired"},
		{"bad bearer", "", "Bearer not.a.token", "Invalid or missing authentication credentials"},
		{"basic auth", "", "Basic YTpi", "Invalid or missing authentication credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.auth != "" {
				h["Authorization"] = tt.auth
			}
			res := s.do(req{method: "GET", path: "/api/v1/agent/", key: tt.key, header: h})
			typ, msg := res.errorType(t)
			if res.status != 401 || typ != "authentication_error" || msg != tt.msg {
				t.Errorf("got %d %s %q", res.status, typ, msg)
			}
		})
	}
	if r := s.do(req{method: "GET", path: "/api/v1/health/"}); r.status != 200 {
		t.Errorf("health without key: %d", r.status)
	}
}

func TestBearerToken(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	res := s.do(req{method: "POST", path: "/api/v1/auth/token/", key: key})
	if res.status != 200 {
		t.Fatalf("token: %d %s", res.status, res.body)
	}
	tok := res.json(t)
	if tok["token_type"] != "Bearer" || tok["expires_in"].(float64) <= 0 || tok["expires_in"].(float64) > 900 {
		t.Errorf("token response = %s", res.body)
	}
	bearer := map[string]string{"Authorization": "Bearer " + tok["access_token"].(string)}
	id := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig}).json(t)["id"].(string)
	if r := s.do(req{method: "GET", path: "/api/v1/agent/" + id + "/versions/current/", header: bearer}); r.status != 200 {
		t.Errorf("current version with bearer: %d %s", r.status, r.body)
	}
	// A token cannot mint another token; another company's token sees 403.
	if r := s.do(req{method: "POST", path: "/api/v1/auth/token/", header: bearer}); r.status != 401 {
		t.Errorf("token from token: %d", r.status)
	}
	other := s.do(req{method: "POST", path: "/api/v1/auth/token/", key: s.key("eve", "evil")}).json(t)["access_token"].(string)
	if r := s.do(req{method: "GET", path: "/api/v1/agent/" + id + "/", header: map[string]string{"Authorization": "Bearer " + other}}); r.status != 403 {
		t.Errorf("other company's token: %d", r.status)
	}
	// A tampered token is refused.
	tampered := tok["access_token"].(string) + "x"
	if r := s.do(req{method: "GET", path: "/api/v1/agent/", header: map[string]string{"Authorization": "Bearer " + tampered}}); r.status != 401 {
		t.Errorf("tampered token: %d", r.status)
	}
}

func TestRateLimit(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme", func(k *auth.NewKey) { k.RateLimit = 3 })
	var last response
	for i := 0; i < 4; i++ {
		last = s.do(req{method: "GET", path: "/api/v1/agent/", key: key})
		if i < 3 {
			if last.status != 200 {
				t.Fatalf("request %d: %d", i, last.status)
			}
			if got := last.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(2-i) {
				t.Errorf("request %d: remaining %q", i, got)
			}
		}
	}
	if last.status != http.StatusTooManyRequests {
		t.Fatalf("4th request: %d", last.status)
	}
	if typ, _ := last.errorType(t); typ != "rate_limit_error" {
		t.Errorf("type %q", typ)
	}
	for _, h := range []string{"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if last.header.Get(h) == "" {
			t.Errorf("429 without %s", h)
		}
	}
	if last.header.Get("X-RateLimit-Limit") != "3" || last.header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("limit headers: %v", last.header)
	}
	if got := last.header.Get("RateLimit-Policy"); got != `"per-key";q=3;w=60` {
		t.Errorf("RateLimit-Policy %q", got)
	}
	if got, want := last.header.Get("RateLimit"), `"per-key";r=0;t=`+last.header.Get("X-RateLimit-Reset"); got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
	// Another key is not affected: the limit is per key.
	if r := s.do(req{method: "GET", path: "/api/v1/agent/", key: s.key("alice", "acme")}); r.status != 200 {
		t.Errorf("other key: %d", r.status)
	}
}

func TestAPIKeyManagement(t *testing.T) {
	s := newStack(t)
	admin := s.key("alice", "acme")
	res := s.do(req{method: "POST", path: "/api/v1/api-keys/", key: admin, body: `{"name":"ci","expires_in":3600,"scopes":["agents:read"],"rate_limit":100}`})
	if res.status != 201 {
		t.Fatalf("create key: %d %s", res.status, res.body)
	}
	k := res.json(t)
	secret, _ := k["key"].(string)
	if !strings.HasPrefix(secret, "ak_") || k["company"] != "acme" || k["owner"] != "alice" || k["rate_limit"] != float64(100) {
		t.Fatalf("created key = %s", res.body)
	}
	// The scoped key reads but cannot write or manage keys.
	if r := s.do(req{method: "GET", path: "/api/v1/agent/", key: secret}); r.status != 200 {
		t.Errorf("scoped read: %d", r.status)
	}
	if r := s.do(req{method: "POST", path: "/api/v1/agent/", key: secret, body: supportConfig}); r.status != 403 {
		t.Errorf("scoped write: %d", r.status)
	}
	if r := s.do(req{method: "GET", path: "/api/v1/api-keys/", key: secret}); r.status != 403 {
		t.Errorf("scoped key management: %d", r.status)
	}
	for _, bad := range []string{`{"scopes":["root"]}`, `{"expires_in":-5}`, `{"rate_limit":"lots"}`, `{"expires_at":"yesterday"}`, `[]`} {
		if r := s.do(req{method: "POST", path: "/api/v1/api-keys/", key: admin, body: bad}); r.status != 400 {
			t.Errorf("create key %s: %d %s", bad, r.status, r.body)
		}
	}
	// Another company cannot revoke acme's key.
	if r := s.do(req{method: "DELETE", path: "/api/v1/api-keys/" + k["id"].(string) + "/", key: s.key("eve", "evil")}); r.status != 404 {
		t.Errorf("foreign revoke: %d", r.status)
	}
	if r := s.do(req{method: "GET", path: "/api/v1/agent/", key: secret}); r.status != 200 {
		t.Errorf("key stopped working after a foreign revoke: %d", r.status)
	}
}
