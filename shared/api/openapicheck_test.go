package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
)

// openapiSpec is the embedded document, loaded and validated once for the whole test binary.
var openapiSpec struct {
	once sync.Once
	doc  *openapi3.T
	err  error
}

// openapiDoc returns the loaded, validated OpenAPI document.
func openapiDoc() (*openapi3.T, error) {
	openapiSpec.once.Do(func() {
		// Once per test binary and before any validation: the registry is global.
		openapi3filter.RegisterBodyDecoder("text/event-stream", decodeEventStream)
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(api.OpenAPIYAML())
		if err != nil {
			openapiSpec.err = fmt.Errorf("load openapi.yaml: %w", err)
			return
		}
		if err := doc.Validate(loader.Context); err != nil {
			openapiSpec.err = fmt.Errorf("validate openapi.yaml: %w", err)
			return
		}
		openapiSpec.doc = doc
	})
	return openapiSpec.doc, openapiSpec.err
}

// openapiOptions make response validation strict: undocumented statuses fail, every schema error
// is reported, and formats the library leaves unchecked by default (uuid) are asserted.
func openapiOptions() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
		},
	}
}

// checkOpenAPI fails t unless the response is one the OpenAPI document allows for the request:
// a documented status, with the documented headers and a body matching the schema. Tests call it
// on every real response they get. reqBody is the body the request was sent with (req.Body is
// usually consumed by then); the request itself is checked against the document only when the
// service accepted it (2xx), since refusing bad input is what many tests are about.
func checkOpenAPI(t testing.TB, req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) {
	t.Helper()
	if err := openapiError(req, reqBody, status, header, respBody); err != nil {
		t.Errorf("OpenAPI: %s %s answered %d against the document:\n%v\nresponse body: %s", req.Method, req.URL.Path, status, err, openapiClip(respBody, 2000))
	}
}

// openapiError is checkOpenAPI returning its verdict, so that its failures can be tested.
func openapiError(req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) error {
	doc, err := openapiDoc()
	if err != nil {
		return err
	}
	if header == nil {
		header = http.Header{}
	}
	method := req.Method
	if method == http.MethodHead {
		method = http.MethodGet // net/http.ServeMux serves HEAD with the GET handler
	}
	matches := matchOpenAPIPath(doc, req.URL.Path)
	if len(matches) == 0 {
		// The router answers unknown paths with 404 in the envelope; nothing else is allowed.
		if status != http.StatusNotFound {
			return fmt.Errorf("no path of the document matches %s, yet the status is %d (want 404)", req.URL.Path, status)
		}
		return checkEnvelope(doc, "NotFoundError", header, respBody)
	}
	// The most specific path decides, as in the router: GET /agent/validate/ is the validate
	// path with a method it lacks (405), not GET /agent/{id}/.
	var m openapiMatch
	if matches[0].item.GetOperation(method) != nil {
		m = matches[0]
	}
	if m.item == nil {
		// A known path with another method: 405 with Allow, in the envelope.
		if status != http.StatusMethodNotAllowed {
			return fmt.Errorf("the document has no %s operation on %s, yet the status is %d (want 405)", method, matches[0].path, status)
		}
		if header.Get("Allow") == "" {
			return errors.New("405 without an Allow header")
		}
		return checkEnvelope(doc, "InvalidRequestError", header, respBody)
	}

	op := m.item.GetOperation(method)
	if req.Method == http.MethodHead {
		// A HEAD response has no body to validate; its status must still be documented.
		if op.Responses.Status(status) == nil {
			return fmt.Errorf("status %d is not documented for %s %s", status, method, m.path)
		}
		return nil
	}
	opts := openapiOptions()
	route := &routers.Route{Spec: doc, Path: m.path, PathItem: m.item, Method: method, Operation: op}
	r := req.Clone(context.Background())
	r.Body = http.NoBody
	if len(reqBody) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	r.Header = r.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	if ct := canonicalMediaType(r.Header.Get("Content-Type"), len(reqBody) > 0); ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: m.params, Route: route, Options: opts}

	var errs []error
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			errs = append(errs, fmt.Errorf("the service accepted a request the document does not allow: %w", err))
		}
	}
	resp := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	resp.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), resp); err != nil {
		errs = append(errs, err)
	} else if ref := op.Responses.Status(status); ref != nil && ref.Value != nil && len(ref.Value.Content) == 0 && len(bytes.TrimSpace(respBody)) > 0 {
		errs = append(errs, fmt.Errorf("status %d is documented without a body, yet the response has one", status))
	}
	return errors.Join(errs...)
}

// decodeEventStream reads a server-sent event stream as the service writes it into the value
// the document's ExecuteStream schema describes: one {"event", "data"} object per message, data
// decoded from its JSON. It refuses what the service never sends and a client could not rely
// on: a message without exactly one event line and one data line, other fields, data that is
// not one line of JSON, an unterminated last message, and a stream that does not end with its
// one result or error message.
func decodeEventStream(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	text := string(b)
	if !strings.HasSuffix(text, "\n\n") {
		return nil, errors.New("event stream: the last message does not end with a blank line")
	}
	var out []any
	var names []string
	for i, block := range strings.Split(strings.TrimSuffix(text, "\n\n"), "\n\n") {
		var name, data string
		for _, line := range strings.Split(block, "\n") {
			field, value, ok := strings.Cut(line, ": ")
			switch {
			case !ok:
				return nil, fmt.Errorf("event stream: message %d: line %q is not \"field: value\"", i, line)
			case field == "event" && name == "":
				name = value
			case field == "data" && data == "":
				data = value
			default:
				return nil, fmt.Errorf("event stream: message %d: unexpected or repeated field %q", i, field)
			}
		}
		if name == "" || data == "" {
			return nil, fmt.Errorf("event stream: message %d lacks its event or data line", i)
		}
		var v any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			return nil, fmt.Errorf("event stream: message %d (%s): data is not JSON: %w", i, name, err)
		}
		out = append(out, map[string]any{"event": name, "data": v})
		names = append(names, name)
	}
	last := names[len(names)-1]
	if last != "result" && last != "error" {
		return nil, fmt.Errorf("event stream: ends with %q, want result or error", last)
	}
	for i, n := range names[:len(names)-1] {
		if n == "result" {
			return nil, fmt.Errorf("event stream: result at message %d is not the last", i)
		}
	}
	return out, nil
}

// openapiMatch is one path of the document that matches a request path.
type openapiMatch struct {
	path   string
	item   *openapi3.PathItem
	params map[string]string
	vars   int
}

// matchOpenAPIPath finds the document's paths matching p, with or without its trailing slash,
// most specific (fewest parameters) first, as net/http.ServeMux prefers them.
func matchOpenAPIPath(doc *openapi3.T, p string) []openapiMatch {
	want := strings.Split(strings.Trim(p, "/"), "/")
	var out []openapiMatch
	for tmpl, item := range doc.Paths.Map() {
		segs := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(segs) != len(want) {
			continue
		}
		m := openapiMatch{path: tmpl, item: item, params: map[string]string{}}
		for i, s := range segs {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && want[i] != "" {
				m.params[s[1:len(s)-1]] = want[i]
				m.vars++
				continue
			}
			if s != want[i] {
				m.item = nil
				break
			}
		}
		if m.item != nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].vars != out[j].vars {
			return out[i].vars < out[j].vars
		}
		return out[i].path < out[j].path
	})
	return out
}

// canonicalMediaType maps the request types the service accepts beyond the two the document
// lists (absent, +json, x-yaml, text/yaml) onto them, as the service reads them.
func canonicalMediaType(ct string, hasBody bool) string {
	if ct == "" {
		if hasBody {
			return "application/json"
		}
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "application/json"
	case mt == "application/yaml" || mt == "application/x-yaml" || mt == "text/yaml":
		return "application/yaml"
	}
	return ct
}

// checkEnvelope validates a response for which no operation applies (unknown path, wrong method)
// against one of the document's error schemas.
func checkEnvelope(doc *openapi3.T, schema string, header http.Header, body []byte) error {
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("the document has no schema %s", schema)
	}
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		return fmt.Errorf("Content-Type is %q, want application/json", header.Get("Content-Type"))
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	opts := append(openapiOptions().SchemaValidationOptions, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors(), openapi3.VisitAsResponse())
	if err := ref.Value.VisitJSON(v, opts...); err != nil {
		return fmt.Errorf("the body does not match %s: %w", schema, err)
	}
	return nil
}

func openapiClip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// openapiFakeTB records what checkOpenAPI reports instead of failing the real test.
type openapiFakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *openapiFakeTB) Helper() {}

func (f *openapiFakeTB) Errorf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}

// openapiFixtures are response bodies built from the domain types, as the handlers encode them.
func openapiFixtures(t *testing.T) (agent, version, key map[string]any) {
	t.Helper()
	explicit := map[string]any{
		"name": "Support Bot", "system_prompt": "You help.",
		"llm_config": map[string]any{"model": "m1", "temperature": json.Number("0.2")},
		"tools":      []any{"search"},
	}
	now := time.Date(2025, 3, 1, 12, 30, 45, 123456789, time.UTC)
	origin := "https://example.com/agents/support"
	a := domain.Agent{
		ID: "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10", AgentKey: domain.AgentKeyBase("Support Bot"), Name: "Support Bot",
		Architecture: domain.AgentTypeLLM, EntryPoint: "Support Bot", OriginURL: &origin, Owner: "o1", Company: "c1",
		SystemConfig: domain.Effective(explicit), VersionNumber: domain.FirstVersion, ConfigHash: domain.ConfigHash(explicit),
		CreatedAt: now, UpdatedAt: now,
	}
	v := domain.AgentVersion{
		ID: "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f", AgentID: a.ID, VersionNumber: a.VersionNumber, SystemConfig: explicit,
		Metadata: map[string]any{"config_hash": a.ConfigHash, "created_by": "o1", "created_at": now.Format(time.RFC3339)},
	}
	k := domain.APIKey{
		ID: "5f1d2c3b-4a59-4867-9d0e-1f2a3b4c5d6e", Name: "ci", Prefix: "ak_AbCdEfG", Hash: "secret-hash", Owner: "o1", Company: "c1",
		Scopes: []string{domain.ScopeAgentsRead}, RateLimit: 60, ExpiresAt: now.Add(90 * 24 * time.Hour), CreatedAt: now,
	}
	return openapiObject(t, a), openapiObject(t, v), openapiObject(t, k)
}

func openapiObject(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// openapiWith returns a copy of m with key set to v, or removed when v is openapiDelete.
func openapiWith(m map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	if v == openapiDelete {
		delete(out, key)
	} else {
		out[key] = v
	}
	return out
}

var openapiDelete = new(int)

// TestOpenAPICheck proves the helper tells documented responses from undocumented ones: it
// accepts correct bodies built from the domain types and rejects wrong ones.
func TestOpenAPICheck(t *testing.T) {
	agent, version, key := openapiFixtures(t)
	created := openapiWith(key, "key", "ak_"+strings.Repeat("A", 43))
	const id = "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"
	agentPath := "/api/v1/agent/" + id + "/"
	jsonCT := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	withHeader := func(kv ...string) http.Header {
		h := jsonCT.Clone()
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	envelope := func(typ, msg string) map[string]any {
		return map[string]any{"error": map[string]any{"type": typ, "message": msg}}
	}
	tests := []openapiCase{
		{name: "agent", method: "GET", path: agentPath, status: 200, header: jsonCT, body: agent},
		{name: "agent without trailing slash", method: "GET", path: strings.TrimSuffix(agentPath, "/"), status: 200, header: jsonCT, body: agent},
		{name: "agent with rate headers", method: "GET", path: agentPath, status: 200, header: withHeader("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "42"), body: agent},
		{name: "agent list", method: "GET", path: "/api/v1/agent", status: 200, header: jsonCT, body: []any{agent, openapiWith(agent, "origin_url", nil)}},
		{name: "versions", method: "GET", path: agentPath + "versions/", status: 200, header: jsonCT, body: []any{version}},
		{name: "current version", method: "GET", path: agentPath + "versions/current", status: 200, header: jsonCT, body: version},
		{name: "created key", method: "POST", path: "/api/v1/api-keys/", reqBody: `{"name":"ci"}`, status: 201, header: jsonCT, body: created},
		{name: "listed keys", method: "GET", path: "/api/v1/api-keys/", status: 200, header: jsonCT, body: []any{key, openapiWith(key, "revoked_at", "2025-03-02T00:00:00Z")}},
		{name: "deleted", method: "DELETE", path: agentPath, status: 204, header: http.Header{"X-Request-Id": {"r1"}}},
		{name: "rate limited", method: "GET", path: agentPath, status: 429,
			header: withHeader("Retry-After", "5", "X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "5"),
			body:   envelope("rate_limit_error", "Rate limit exceeded; retry later")},

		{name: "HEAD", method: "HEAD", path: "/api/v1/health", status: 200, header: jsonCT},

		{name: "agent id is a number", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "id", 5), wantErr: true},
		{name: "agent id is not a uuid", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "id", "agent-1"), wantErr: true},
		{name: "agent without config_hash", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "config_hash", openapiDelete), wantErr: true},
		{name: "agent with an undocumented field", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "hash", "x"), wantErr: true},
		{name: "agent with a two-part version", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "version_number", "1.0"), wantErr: true},
		{name: "agent with a bad created_at", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "created_at", "yesterday"), wantErr: true},
		{name: "agent in a list of the wrong shape", method: "GET", path: "/api/v1/agent/", status: 200, header: jsonCT, body: map[string]any{"agents": []any{agent}}, wantErr: true},
		{name: "version config without a name", method: "GET", path: agentPath + "versions/current/", status: 200, header: jsonCT,
			body: openapiWith(version, "system_config", map[string]any{"system_prompt": "x"}), wantErr: true},
		{name: "agent config with a blank name", method: "GET", path: agentPath, status: 200, header: jsonCT,
			body: openapiWith(agent, "system_config", openapiWith(agent["system_config"].(map[string]any), "name", " ")), wantErr: true},
		{name: "agent config with a nameless node", method: "GET", path: agentPath, status: 200, header: jsonCT,
			body: openapiWith(agent, "system_config", openapiWith(agent["system_config"].(map[string]any), "agents", []any{map[string]any{"agent_type": "llm_agent"}})), wantErr: true},
		{name: "agent config with a foreign vector engine", method: "GET", path: agentPath, status: 200, header: jsonCT,
			body: openapiWith(agent, "system_config", openapiWith(agent["system_config"].(map[string]any), "knowledge_bases", []any{map[string]any{"name": "kb", "knowledge_base_id": "1", "knowledge_base_type": "pinecone"}})), wantErr: true},
		{name: "undocumented status", method: "GET", path: agentPath, status: 418, header: jsonCT, body: envelope("api_error", "teapot"), wantErr: true},
		{name: "created answered 200", method: "POST", path: "/api/v1/agent/", reqBody: `{"system_config":{"name":"a"}}`, status: 200, header: jsonCT, body: agent, wantErr: true},
		{name: "error type of another status", method: "GET", path: agentPath, status: 404, header: jsonCT, body: envelope("permission_error", "nope"), wantErr: true},
		{name: "error type outside the taxonomy", method: "GET", path: agentPath, status: 404, header: jsonCT, body: envelope("missing", "nope"), wantErr: true},
		{name: "401 with another message", method: "GET", path: agentPath, status: 401, header: jsonCT, body: envelope("authentication_error", "go away"), wantErr: true},
		{name: "429 without Retry-After", method: "GET", path: agentPath, status: 429, header: withHeader("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "5"),
			body: envelope("rate_limit_error", "Rate limit exceeded; retry later"), wantErr: true},
		{name: "204 with a body", method: "DELETE", path: agentPath, status: 204, header: jsonCT, body: agent, wantErr: true},
		{name: "listed key shows its secret", method: "GET", path: "/api/v1/api-keys/", status: 200, header: jsonCT, body: []any{created}, wantErr: true},
		{name: "created key without its secret", method: "POST", path: "/api/v1/api-keys/", reqBody: `{}`, status: 201, header: jsonCT, body: key, wantErr: true},
		{name: "validate result both valid and invalid", method: "POST", path: "/api/v1/agent/validate/", reqBody: `{}`, status: 200, header: jsonCT,
			body: map[string]any{"valid": true, "message": "ok", "errors": []any{map[string]any{"field": "name", "message": "is required"}}}, wantErr: true},
		{name: "body that is not JSON", method: "GET", path: agentPath, status: 200, header: withHeader("Content-Type", "text/plain"), body: "hello", wantErr: true},
		{name: "accepted request the document forbids", method: "POST", path: "/api/v1/agent/", reqBody: `{"system_config":{"name":"a","llm_config":{"temperature":5}}}`,
			status: 201, header: jsonCT, body: agent, wantErr: true},
		{name: "HEAD with an undocumented status", method: "HEAD", path: agentPath, status: 202, header: jsonCT, wantErr: true},
		{name: "unknown path answered 200", method: "GET", path: "/api/v1/agents/", status: 200, header: jsonCT, body: []any{}, wantErr: true},
		{name: "undocumented method answered 200", method: "POST", path: "/api/v1/health/", status: 200, header: jsonCT, body: map[string]any{"status": "ok"}, wantErr: true},
	}
	runOpenAPICases(t, tests)
}

// openapiCase is a request and a response the helper must accept, or reject when wantErr.
type openapiCase struct {
	name    string
	method  string
	path    string
	reqBody string
	status  int
	header  http.Header
	body    any // nil: no body; a string is sent as is, anything else as JSON
	wantErr bool
}

// runOpenAPICases checks each case through openapiError and checkOpenAPI.
func runOpenAPICases(t *testing.T, tests []openapiCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // the helper is shared by parallel tests; -race checks it
			var body []byte
			switch b := tt.body.(type) {
			case nil:
			case string:
				body = []byte(b)
			default:
				body = openapiJSON(t, b)
			}
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.reqBody))
			if tt.reqBody != "" {
				r.Header.Set("Content-Type", "application/json")
			}
			err := openapiError(r, []byte(tt.reqBody), tt.status, tt.header, body)
			if got := err != nil; got != tt.wantErr {
				t.Fatalf("openapiError = %v, want error: %v", err, tt.wantErr)
			}
			if err != nil {
				t.Logf("rejected as expected: %v", err)
			}

			fake := &openapiFakeTB{}
			checkOpenAPI(fake, r, []byte(tt.reqBody), tt.status, tt.header, body)
			if fake.failed != tt.wantErr {
				t.Errorf("checkOpenAPI failed the test: %v (%s), want %v", fake.failed, fake.msg, tt.wantErr)
			}
		})
	}
}

func openapiJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openapiRuntimeFixtures are session and runtime response bodies as the handlers encode them:
// a session view, an execute result in both shapes, an execution and the stream of a run.
func openapiRuntimeFixtures() (session, result, message map[string]any, stream string) {
	const sid = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	config := map[string]any{"name": "helper", "agent_type": "react_agent", "system_prompt": "You help {{ variables.who }}.",
		"llm_config": map[string]any{"provider": "local"}, "tools": []any{"calculator"}}
	session = map[string]any{
		"id": sid, "name": "helper", "config_hash": "04f9dec0db24200f", "config": config, "agent_id": nil,
		"variables": map[string]any{"who": "Ada"}, "message_count": 2, "execution_count": 1,
		"created_at": "2026-11-22T18:00:00.123456789Z", "updated_at": "2026-11-22T18:00:01Z",
	}
	result = map[string]any{
		"id": sid, "object": "agent.session", "status": "completed", "created_at": 1795370400, "completed_at": 1795370401,
		"config": config, "execution_time": 12,
		"messages": []any{map[string]any{"id": "0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d", "role": "assistant",
			"content": "[local model] Tool result: 4\nYou said: calculator {\"expression\":\"2+2\"}\nhistory=0", "created_at": 1795370401}},
		"metadata": map[string]any{"correlation_id": "ticket-4821", "event_count": 6, "execution_id": "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10",
			"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 9, "output_tokens": 12}},
	}
	message = map[string]any{
		"success": true, "message_id": "0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d", "correlation_id": nil,
		"response": map[string]any{"content": "[local model] Tool result: 4", "tool_calls": []any{map[string]any{
			"id": "local-1", "name": "calculator", "input": map[string]any{"expression": "2+2"}, "output": "4", "is_error": false}}},
	}
	ev := func(typ string, data map[string]any) map[string]any {
		return map[string]any{"type": typ, "node": "helper", "timestamp": "2026-11-22T18:00:00.000123Z", "data": data}
	}
	msgs := []struct {
		event string
		data  any
	}{
		{"node_started", ev("node_started", map[string]any{"agent_type": "react_agent"})},
		{"model_call", ev("model_call", map[string]any{"provider": "local", "model": "", "input_tokens": 5, "output_tokens": 2,
			"stop_reason": "tool_use", "duration_ms": 0, "iteration": 1})},
		{"tool_call", ev("tool_call", map[string]any{"tool": "calculator", "tool_use_id": "local-1", "input": map[string]any{"expression": "2+2"}})},
		{"tool_result", ev("tool_result", map[string]any{"tool": "calculator", "tool_use_id": "local-1", "is_error": false, "output": "4", "duration_ms": 0})},
		{"text", map[string]any{"node": "helper", "delta": "[local model] Tool result: 4"}},
		{"model_call", ev("model_call", map[string]any{"provider": "local", "model": "", "input_tokens": 9, "output_tokens": 10,
			"stop_reason": "end_turn", "duration_ms": 0, "iteration": 2})},
		{"node_finished", ev("node_finished", map[string]any{"duration_ms": 1, "stop_reason": "end_turn"})},
		{"result", result},
	}
	var b strings.Builder
	for _, m := range msgs {
		d, _ := json.Marshal(m.data) // plain maps always encode
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", m.event, d)
	}
	return session, result, message, b.String()
}

// TestOpenAPICheckRuntime proves the helper tells documented session and runtime responses from
// undocumented ones, server-sent event streams included.
func TestOpenAPICheckRuntime(t *testing.T) {
	session, result, message, stream := openapiRuntimeFixtures()
	const sid = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	const execID = "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"
	run := "/api/v1/runtime/" + sid
	jsonCT := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	sse := http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}, "X-Request-Id": {"r1"}}
	located := jsonCT.Clone()
	located.Set("Location", run+"/executions/"+execID+"/")
	queued := map[string]any{"id": execID, "object": "agent.execution", "session_id": sid, "status": "queued",
		"correlation_id": nil, "created_at": 1795370400, "completed_at": nil}
	completed := openapiWith(openapiWith(openapiWith(queued, "status", "completed"), "completed_at", 1795370401), "result", result)
	failed := openapiWith(openapiWith(openapiWith(queued, "status", "failed"), "completed_at", 1795370401),
		"error", `inputs.who: variable "who" is used by a prompt ({{ variables.who }}) but was never supplied`)
	feedback := map[string]any{"id": "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f", "message": "0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d",
		"session_id": sid, "user": "o1", "rating": 1, "comment": nil, "created_at": "2026-11-22T18:00:02Z", "updated_at": "2026-11-22T18:00:02Z"}
	history := map[string]any{"total": 3, "has_more": true, "messages": []any{
		map[string]any{"id": "1e026a7f-2037-49a1-b812-f195aefab044", "role": "user", "content": "Hello\n[image]", "timestamp": "2026-11-22T18:00:00Z"},
		map[string]any{"id": "8f29d775-3416-4f16-af76-9edc9189d669", "role": "assistant", "content": "Hi", "timestamp": "2026-11-22T18:00:01Z"},
	}}
	stored := map[string]any{"sequence": 0, "type": "node_started", "timestamp": "2026-11-22T18:00:00.10097992Z", "execution_id": execID,
		"correlation_id": "ticket-4821", "node": "helper", "data": map[string]any{"agent_type": "llm_agent"}}
	failedTool := openapiWith(openapiWith(stored, "type", "error"), "data", map[string]any{"message": "unknown tool \"x\"", "tool": "x", "tool_use_id": "t1"})
	created := map[string]any{"success": true, "session_id": sid, "config_hash": "04f9dec0db24200f"}
	fromAgent := openapiWith(openapiWith(created, "agent_id", "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"), "agent_name", "Support Assistant")
	errStream := strings.SplitAfter(stream, "\n\n")
	failedStream := strings.Join(errStream[:2], "") + "event: error\ndata: {\"error\":{\"type\":\"overloaded_error\",\"message\":\"The model is busy; retry shortly\"}}\n\n"
	execBody := `{"content":"Hello","correlation_id":"ticket-4821","inputs":{"who":"Ada"}}`

	runOpenAPICases(t, []openapiCase{
		{name: "session created", method: "POST", path: "/api/v1/sessions/", reqBody: `{"name":"helper","system_prompt":"Hi"}`, status: 201, header: jsonCT, body: created},
		{name: "sessions", method: "GET", path: "/api/v1/sessions", status: 200, header: jsonCT, body: []any{session, openapiWith(session, "agent_id", execID)}},
		{name: "session", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT, body: session},
		{name: "session deleted", method: "DELETE", path: "/api/v1/sessions/" + sid + "/", status: 204, header: http.Header{"X-Request-Id": {"r1"}}},
		{name: "session from agent", method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=support-assistant", status: 200, header: jsonCT, body: fromAgent},
		{name: "feedback", method: "POST", path: "/api/v1/sessions/feedback/", reqBody: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d","rating":1}`, status: 200, header: jsonCT, body: feedback},
		{name: "feedback with only a comment", method: "POST", path: "/api/v1/sessions/feedback/", reqBody: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d","rating":null,"comment":"ok"}`,
			status: 200, header: jsonCT, body: openapiWith(openapiWith(feedback, "rating", nil), "comment", "ok")},
		{name: "session busy", method: "POST", path: run + "/execute/", reqBody: execBody, status: 409, header: jsonCT,
			body: map[string]any{"error": map[string]any{"type": "conflict_error", "message": "Another execution is running in this session; retry when it has finished"}}},
		{name: "execute result", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: result},
		{name: "execute result without messages", method: "POST", path: run + "/execute", reqBody: `{"content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}`,
			status: 200, header: jsonCT, body: openapiWith(result, "messages", []any{})},
		{name: "execute message shape", method: "POST", path: run + "/execute/?format=message", reqBody: execBody, status: 200, header: jsonCT, body: message},
		{name: "execute message shape without a message", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","response_format":"message"}`, status: 200, header: jsonCT,
			body: openapiWith(message, "message_id", "")},
		{name: "execute stream", method: "POST", path: run + "/execute/?stream=true", reqBody: execBody, status: 200, header: sse, body: stream},
		{name: "execute stream that failed", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","stream":true}`, status: 200, header: sse, body: failedStream},
		{name: "execute queued", method: "POST", path: run + "/execute/?async=true", reqBody: execBody, status: 202, header: located, body: queued},
		{name: "messages", method: "GET", path: run + "/messages/?limit=2&offset=0", status: 200, header: jsonCT, body: history},
		{name: "events", method: "GET", path: run + "/events/?correlation_id=ticket-4821", status: 200, header: jsonCT,
			body: map[string]any{"events": []any{stored, failedTool}, "total": 2}},
		{name: "execution completed", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: completed},
		{name: "execution failed", method: "GET", path: run + "/executions/" + execID, status: 200, header: jsonCT, body: failed},
		{name: "execution running", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: openapiWith(queued, "status", "running")},

		{name: "session with an undocumented field", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT, body: openapiWith(session, "owner", "o1"), wantErr: true},
		{name: "session with a long config hash", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT,
			body: openapiWith(session, "config_hash", "04f9dec0db24200f:1"), wantErr: true},
		{name: "session created answered 200", method: "POST", path: "/api/v1/sessions/", reqBody: `{"name":"helper"}`, status: 200, header: jsonCT, body: created, wantErr: true},
		{name: "feedback rating 5", method: "POST", path: "/api/v1/sessions/feedback/", reqBody: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d","rating":1}`, status: 200, header: jsonCT,
			body: openapiWith(feedback, "rating", 5), wantErr: true},
		{name: "feedback accepted without rating or comment", method: "POST", path: "/api/v1/sessions/feedback/", reqBody: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d"}`,
			status: 200, header: jsonCT, body: feedback, wantErr: true},
		{name: "execute accepted without content", method: "POST", path: run + "/execute/", reqBody: `{"content":7}`, status: 200, header: jsonCT, body: result, wantErr: true},
		{name: "execute accepted with 21 blocks", method: "POST", path: run + "/execute/", reqBody: `{"content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"a"},`, 21), ",") + `]}`,
			status: 200, header: jsonCT, body: result, wantErr: true},
		{name: "execution time as text", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(result, "execution_time", "12ms"), wantErr: true},
		{name: "result of another status", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(result, "status", "running"), wantErr: true},
		{name: "result without metadata", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(result, "metadata", openapiDelete), wantErr: true},
		{name: "message shape with a bad id", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(message, "message_id", "m1"), wantErr: true},
		{name: "both shapes at once", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(result, "success", true), wantErr: true},
		{name: "stream without its result", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse, body: strings.Join(errStream[:len(errStream)-2], ""), wantErr: true},
		{name: "stream with a result before the end", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse, body: stream + errStream[0] + errStream[len(errStream)-2], wantErr: true},
		{name: "stream with an unknown event", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse,
			body: "event: progress\ndata: {\"percent\":50}\n\n" + errStream[len(errStream)-2], wantErr: true},
		{name: "stream with a bad result", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse,
			body: "event: result\ndata: {\"id\":\"x\"}\n\n", wantErr: true},
		{name: "stream that is cut off", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse, body: strings.TrimSuffix(stream, "\n"), wantErr: true},
		{name: "stream where JSON is expected", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: sse, body: stream, wantErr: true},
		{name: "queued without Location", method: "POST", path: run + "/execute/?async=true", reqBody: execBody, status: 202, header: jsonCT, body: queued, wantErr: true},
		{name: "queued with a result", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","async":true}`, status: 202, header: located,
			body: openapiWith(queued, "result", "soon"), wantErr: true},
		{name: "history with a system message", method: "GET", path: run + "/messages/", status: 200, header: jsonCT,
			body: openapiWith(history, "messages", []any{map[string]any{"id": execID, "role": "system", "content": "x", "timestamp": "2026-11-22T18:00:00Z"}}), wantErr: true},
		{name: "history with Unix timestamps", method: "GET", path: run + "/messages/", status: 200, header: jsonCT,
			body: openapiWith(history, "messages", []any{map[string]any{"id": execID, "role": "user", "content": "x", "timestamp": 1795370400}}), wantErr: true},
		{name: "event of an unknown type", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: map[string]any{"events": []any{openapiWith(stored, "type", "thinking")}, "total": 1}, wantErr: true},
		{name: "event with undocumented data", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: map[string]any{"events": []any{openapiWith(stored, "data", map[string]any{"agent_type": "llm_agent", "secret": "x"})}, "total": 1}, wantErr: true},
		{name: "execution of an unknown status", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: openapiWith(queued, "status", "done"), wantErr: true},
		{name: "execution without completed_at", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: openapiWith(queued, "completed_at", openapiDelete), wantErr: true},
	})
}
