package api_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// fieldOf is the first field error of an error response.
func fieldOf(t *testing.T, res response) string {
	t.Helper()
	errs, _ := res.json(t)["error"].(map[string]any)["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("no field errors: %s", res.body)
	}
	f, _ := errs[0].(map[string]any)["field"].(string)
	return f
}

// TestMediaTypes: the body's type and encoding are what the documents promise, not guessed.
func TestMediaTypes(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	body := `{"system_config":{"name":"Typed"}}`
	tests := []struct {
		name   string
		header map[string]string
		status int
	}{
		{"json", map[string]string{"Content-Type": "application/json"}, 201},
		{"json utf-8", map[string]string{"Content-Type": "application/json; charset=UTF-8"}, 201},
		{"+json", map[string]string{"Content-Type": "application/vnd.agent+json"}, 201},
		{"no type", map[string]string{"Content-Type": ""}, 201},
		{"identity encoding", map[string]string{"Content-Encoding": "identity"}, 201},
		{"text/plain", map[string]string{"Content-Type": "text/plain"}, 415},
		{"form (curl -d)", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"latin-1", map[string]string{"Content-Type": "application/json; charset=iso-8859-1"}, 415},
		{"gzip with a plain body", map[string]string{"Content-Encoding": "gzip"}, 415},
		{"deflate, identity", map[string]string{"Content-Encoding": "identity, deflate"}, 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: body, header: tt.header})
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			if tt.status == 415 {
				if typ, _ := res.errorType(t); typ != "invalid_request_error" {
					t.Errorf("type %q", typ)
				}
			}
		})
	}
	// The curl hint is in the message of the form case.
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: body, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if _, msg := res.errorType(t); !strings.Contains(msg, "Content-Type: application/json") {
		t.Errorf("415 message gives no advice: %s", msg)
	}
}

// TestTextIsNeverReplaced: invalid UTF-8, lone surrogates and NUL are refused with the field
// named, rather than silently turned into U+FFFD.
func TestTextIsNeverReplaced(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	refusesText(t, s, key, []textCase{
		{"invalid UTF-8 in a name", "/api/v1/agent/", "{\"system_config\":{\"name\":\"bad \xff\xfe\"}}", "", "system_config.name"},
		{"truncated UTF-8", "/api/v1/agent/", "{\"system_config\":{\"name\":\"a\",\"system_prompt\":\"caf\xc3\"}}", "", "system_config.system_prompt"},
		{"lone high surrogate", "/api/v1/agent/", `{"system_config":{"name":"a","system_prompt":"x\ud800y"}}`, "", "system_config.system_prompt"},
		{"lone low surrogate", "/api/v1/agent/", `{"system_config":{"name":"a","description":"\udc00"}}`, "", "system_config.description"},
		{"high then not low", "/api/v1/agent/", `{"system_config":{"name":"a","description":"\ud83d\u0041"}}`, "", "system_config.description"},
		{"in an array", "/api/v1/agent/", `{"system_config":{"name":"a","tools":["calculator","\udfff"]}}`, "", "system_config.tools.1"},
		{"NUL in a name", "/api/v1/agent/", `{"system_config":{"name":"a\u0000b"}}`, "", "system_config.name"},
		{"NUL in a key", "/api/v1/agent/", `{"system_config":{"name":"a","llm_config":{"x\u0000":1}}}`, "", "system_config.llm_config"},
		{"bad top-level key", "/api/v1/agent/", `{"\ud800":1,"system_config":{"name":"a"}}`, "", ""},
		{"NUL in YAML", "/api/v1/agent/", "system_config:\n  name: \"a\\0b\"\n", "application/yaml", "system_config.name"},
		{"NUL in content", "/api/v1/runtime/" + sid + "/execute/", `{"content":"hello\u0000"}`, "", "content"},
		{"surrogate in a block", "/api/v1/runtime/" + sid + "/execute/", `{"content":[{"type":"text","text":"\ud800"}]}`, "", "content.0.text"},
		{"invalid UTF-8 in inputs", "/api/v1/runtime/" + sid + "/execute/", "{\"content\":\"hi\",\"inputs\":{\"v\":\"\x80\"}}", "", "inputs.v"},
	})
	if n := len(s.history(key, sid)); n != 0 {
		t.Errorf("refused executes stored %d messages", n)
	}
	// A proper surrogate pair is a character like any other.
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Robot \ud83e\udd16"}}`})
	if res.status != 201 {
		t.Fatalf("surrogate pair: %d %s", res.status, res.body)
	}
	if a := res.json(t); a["name"] != "Robot 🤖" {
		t.Errorf("name %q", a["name"])
	}
}

// textCase is a body with text the API refuses, and the field it names.
type textCase struct {
	name, path, body, ctype, field string
}

// refusesText checks that each body is a 400 naming its field.
func refusesText(t *testing.T, s *stack, key string, tests []textCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.ctype != "" {
				h["Content-Type"] = tt.ctype
			}
			res := s.do(req{method: "POST", path: tt.path, key: key, body: tt.body, header: h})
			if res.status != 400 {
				t.Fatalf("status %d, want 400: %s", res.status, res.body)
			}
			if typ, _ := res.errorType(t); typ != "invalid_request_error" {
				t.Errorf("type %q", typ)
			}
			if got := fieldOf(t, res); got != tt.field {
				t.Errorf("field %q, want %q: %s", got, tt.field, res.body)
			}
		})
	}
}

// TestInvisibleNamesAreRefused: a name of only invisible characters is no name, for agents and
// sessions; a name with an emoji keeps it and gets a key of its letters.
func TestInvisibleNamesAreRefused(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	refusesText(t, s, key, []textCase{
		{"zero-width name", "/api/v1/agent/", `{"system_config":{"name":"\u200b\u200c\u200d\ufeff"}}`, "", "system_config.name"},
		{"zero-width session name", "/api/v1/sessions/", `{"name":"\u2060 \u200b","agent_type":"llm_agent"}`, "", "name"},
	})
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Robot \ud83e\udd16"}}`})
	if a := res.json(t); res.status != 201 || a["name"] != "Robot 🤖" || a["agent_key"] != "robot" {
		t.Errorf("surrogate pair: %d name %q, agent_key %q", res.status, a["name"], a["agent_key"])
	}
}

// TestUncleanPathsAreNotRedirected: ServeMux would answer these with a 307 text/html redirect.
func TestUncleanPathsAreNotRedirected(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	for _, p := range []string{"//api/v1/agent/", "/api/v1/agent/./", "/api/v1/agent/.", "/api/v1//agent/", "/api/v1/agent//",
		"/api/v1/agent/x/../", "/api/v1/agent/%2e%2e/", "/api/v1/sessions/./", "/api/v1/health/./"} {
		res := s.do(req{method: "GET", path: p, key: key})
		if res.status != 404 {
			t.Errorf("GET %s: %d %s (Location %q)", p, res.status, res.body, res.header.Get("Location"))
			continue
		}
		if ct := res.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s: Content-Type %q", p, ct)
		}
		if typ, _ := res.errorType(t); typ != "not_found_error" {
			t.Errorf("GET %s: type %q", p, typ)
		}
	}
	// A single trailing slash, or none, is still the route.
	for _, p := range []string{"/api/v1/agent/", "/api/v1/agent"} {
		if res := s.do(req{method: "GET", path: p, key: key}); res.status != 200 {
			t.Errorf("GET %s: %d", p, res.status)
		}
	}
}

// goTypeName matches what Go's %T and %v print for decoded JSON.
var goTypeName = regexp.MustCompile(`interface \{\}|map\[|\[\]|float64|json\.Number|\bptr\b|\bslice\b`)

// TestMessagesNameJSONTypes: a value of the wrong type is named in JSON's words, never Go's.
func TestMessagesNameJSONTypes(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	namesJSONTypes(t, s, key, []typeCase{
		{"/api/v1/agent/", `{"system_config":[1,2]}`, "system_config: must be an object, not an array"},
		{"/api/v1/agent/", `[1]`, "The request body must be an object, not an array"},
		{"/api/v1/api-keys/", `{"scopes":{"a":1}}`, "scopes: must be an array"},
		{"/api/v1/api-keys/", `{"expires_in":[1]}`, "expires_in: must be an integer"},
		{"/api/v1/api-keys/", `{"name":{"a":[1]}}`, "name: must be a string"},
	})
}

// TestContentNamesJSONTypes: the runtime's content blocks name wrong types in JSON's words too.
func TestContentNamesJSONTypes(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	namesJSONTypes(t, s, key, []typeCase{
		{"/api/v1/runtime/" + sid + "/execute/", `{"content":[{"type":{"a":1}}]}`, "content.0.type: must be a string (text, image_url or file), not an object"},
		{"/api/v1/runtime/" + sid + "/execute/", `{"content":[{"type":[["text"]]}]}`, "content.0.type: must be a string (text, image_url or file), not an array"},
	})
}

// typeCase is a body with a value of the wrong type and the message that names it.
type typeCase struct{ path, body, want string }

func namesJSONTypes(t *testing.T, s *stack, key string, tests []typeCase) {
	t.Helper()
	for _, tt := range tests {
		res := s.do(req{method: "POST", path: tt.path, key: key, body: tt.body})
		_, msg := res.errorType(t)
		if res.status != 400 || msg != tt.want {
			t.Errorf("%s %s: %d %q, want %q", tt.path, tt.body, res.status, msg, tt.want)
		}
		if goTypeName.MatchString(string(res.body)) {
			t.Errorf("%s %s: a Go type in %s", tt.path, tt.body, res.body)
		}
	}
}

func TestAsyncParameter(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	run := "/api/v1/runtime/" + sid + "/execute/"
	for _, v := range []string{"true", "1", "TRUE", "yes", "On"} {
		res := s.do(req{method: "POST", path: run + "?async=" + v, key: key, body: `{"content":"queued"}`})
		if res.status != 202 {
			t.Errorf("async=%s: %d %.200s", v, res.status, res.body)
		}
		waitExecution(t, s, key, res)
	}
	for _, v := range []string{"false", "0", "No", "OFF"} {
		if res := s.do(req{method: "POST", path: run + "?async=" + v, key: key, body: `{"content":"now"}`}); res.status != 200 {
			t.Errorf("async=%s: %d %.200s", v, res.status, res.body)
		}
	}
	for _, v := range []string{"maybe", "", "2", "yes please"} {
		res := s.do(req{method: "POST", path: run + "?async=" + strings.ReplaceAll(v, " ", "+"), key: key, body: `{"content":"never"}`})
		if res.status != 400 || fieldOf(t, res) != "async" {
			t.Errorf("async=%q: %d %s", v, res.status, res.body)
		}
	}
	for _, m := range s.history(key, sid) {
		if strings.Contains(m, "never") {
			t.Errorf("a refused execute ran: %q", m)
		}
	}
}

// TestStreamParameter: ?stream= reads as ?async= does; a value that is neither true nor false
// is a 400 naming it, not a silent plain answer.
func TestStreamParameter(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	run := "/api/v1/runtime/" + sid + "/execute/"
	for _, v := range []string{"true", "1", "TRUE", "yes", "On"} {
		res := s.do(req{method: "POST", path: run + "?stream=" + v, key: key, body: `{"content":"streamed"}`})
		if ct := res.header.Get("Content-Type"); res.status != 200 || ct != "text/event-stream" {
			t.Errorf("stream=%s: %d %s %.200s", v, res.status, ct, res.body)
		}
	}
	for _, v := range []string{"false", "0", "No", "OFF"} {
		res := s.do(req{method: "POST", path: run + "?stream=" + v, key: key, body: `{"content":"plain"}`})
		if ct := res.header.Get("Content-Type"); res.status != 200 || !strings.HasPrefix(ct, "application/json") {
			t.Errorf("stream=%s: %d %s %.200s", v, res.status, ct, res.body)
		}
	}
	for _, v := range []string{"maybe", "", "2", "yes please"} {
		res := s.do(req{method: "POST", path: run + "?stream=" + strings.ReplaceAll(v, " ", "+"), key: key, body: `{"content":"never"}`})
		if res.status != 400 || fieldOf(t, res) != "stream" {
			t.Errorf("stream=%q: %d %s", v, res.status, res.body)
		}
	}
	for _, m := range s.history(key, sid) {
		if strings.Contains(m, "never") {
			t.Errorf("a refused execute ran: %q", m)
		}
	}
}

// waitExecution polls a queued execution until it has finished, so the next execute finds the
// session free.
func waitExecution(t *testing.T, s *stack, key string, queued response) {
	t.Helper()
	loc := queued.header.Get("Location")
	if loc == "" {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		st := s.do(req{method: "GET", path: loc, key: key}).json(t)["status"]
		if st == "completed" || st == "failed" {
			return
		}
	}
	t.Fatalf("%s did not finish", loc)
}

func TestPatchNullSystemConfig(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	a := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig}).json(t)
	path := "/api/v1/agent/" + a["id"].(string) + "/"
	res := s.do(req{method: "PATCH", path: path, key: key, body: `{"system_config":null}`})
	if res.status != 400 || fieldOf(t, res) != "system_config" {
		t.Fatalf("PATCH system_config null: %d %s", res.status, res.body)
	}
	if res := s.do(req{method: "PUT", path: path, key: key, body: `{"system_config":null}`}); res.status != 400 || fieldOf(t, res) != "system_config" {
		t.Errorf("PUT system_config null: %d %s", res.status, res.body)
	}
	// Flags alone still change without a configuration.
	if res := s.do(req{method: "PATCH", path: path, key: key, body: `{"is_shared":true}`}); res.status != 200 || res.json(t)["is_shared"] != true {
		t.Errorf("PATCH flags only: %d %s", res.status, res.body)
	}
	if got := s.do(req{method: "GET", path: path, key: key}).json(t); got["version_number"] != a["version_number"] || got["config_hash"] != a["config_hash"] {
		t.Errorf("agent changed: %v %v", got["version_number"], got["config_hash"])
	}
}

// TestConflictHasRetryAfter: a session busy with another execution answers 409 with advice to
// retry (TestExecuteWaitsForLeaseThenConflicts holds the lease on the local stack).
func TestConflictHasRetryAfter(t *testing.T) {
	s, f := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	f.sessions.lease(sid)
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"blocked"}`})
	if res.status != 409 {
		t.Fatalf("execute on a leased session: %d %s", res.status, res.body)
	}
	if got := res.header.Get("Retry-After"); got != "1" {
		t.Errorf("409 Retry-After %q, want 1", got)
	}
}

// TestUnknownFields: a field a request body does not have is a 400 naming it, in every body the
// API decodes, rather than silently ignored (a key's company, a misspelt flag or block field).
func TestUnknownFields(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	agent := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":` + flatSession + `}`}).json(t)
	agentPath := "/api/v1/agent/" + agent["id"].(string) + "/"
	run := "/api/v1/runtime/" + sid + "/execute/"
	refusesFields(t, s, key, []fieldCase{
		{"POST", "/api/v1/api-keys/", `{"name":"ci","company":"globex"}`, "company"},
		{"POST", "/api/v1/api-keys/", `{"name":"ci","scope":["agents:read"]}`, "scope"},
		{"POST", "/api/v1/auth/token/", `{"expires_in":60}`, "expires_in"},
		{"POST", "/api/v1/agent/", `{"system_config":` + flatSession + `,"public":true}`, "public"},
		{"PUT", agentPath, `{"system_config":` + flatSession + `,"agent_key":"mine"}`, "agent_key"},
		{"PATCH", agentPath, `{"name":"Renamed"}`, "name"},
		{"POST", "/api/v1/sessions/feedback/", `{"message":"` + sid + `","stars":5}`, "stars"},
		{"POST", run, `{"content":"hi","correlationId":"x"}`, "correlationId"},
	})
	// What the bodies do have still passes: a token request with no fields.
	for _, body := range []any{nil, `{}`} {
		if res := s.do(req{method: "POST", path: "/api/v1/auth/token/", key: key, body: body}); res.status != 200 {
			t.Errorf("token with body %v: %d %s", body, res.status, res.body)
		}
	}
	// The validate endpoint judges the wrapper's fields in its answer, as it judges the
	// configuration's.
	res := s.do(req{method: "POST", path: "/api/v1/agent/validate/", key: key, body: `{"system_config":` + flatSession + `,"publc":true}`}).json(t)
	errs, _ := res["errors"].([]any)
	if res["valid"] != false || len(errs) != 1 || errs[0].(map[string]any)["field"] != "publc" {
		t.Errorf("validate with an unknown wrapper field = %v", res)
	}
}

// TestUnknownBlockFields: the runtime's content blocks and the files group's bodies name an
// unknown field too; a documented image_url detail passes.
func TestUnknownBlockFields(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	run := "/api/v1/runtime/" + sid + "/execute/"
	png := "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	refusesFields(t, s, key, []fieldCase{
		{"POST", run, `{"content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}`, "content.0.cache_control"},
		{"POST", run, `{"content":[{"type":"image_url","image_url":{"url":"` + png + `","size":1}}]}`, "content.0.image_url.size"},
		{"POST", run, `{"content":[{"type":"file","file_url":"https://example.com/a.pdf","name":"a.pdf"}]}`, "content.0.name"},
		{"POST", "/api/v1/files/uploads/", `{"name":"a.txt","size":3,"tag":["x"]}`, "tag"},
	})
	ok := `{"content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"` + png + `","detail":"low"}}]}`
	if res := s.do(req{method: "POST", path: run, key: key, body: ok}); res.status != 200 {
		t.Errorf("execute with image_url detail: %d %s", res.status, res.body)
	}
}

// fieldCase is a request whose body has a field it may not have.
type fieldCase struct{ method, path, body, field string }

func refusesFields(t *testing.T, s *stack, key string, tests []fieldCase) {
	t.Helper()
	for _, tt := range tests {
		res := s.do(req{method: tt.method, path: tt.path, key: key, body: tt.body})
		if res.status != 400 {
			t.Errorf("%s %s %s: %d %s, want 400", tt.method, tt.path, tt.body, res.status, res.body)
			continue
		}
		if got := fieldOf(t, res); got != tt.field {
			t.Errorf("%s %s %s: field %q, want %q (%s)", tt.method, tt.path, tt.body, got, tt.field, res.body)
		}
	}
}
