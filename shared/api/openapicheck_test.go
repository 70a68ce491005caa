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
	tests := []struct {
		name    string
		method  string
		path    string
		reqBody string
		status  int
		header  http.Header
		body    any // nil: no body
		wantErr bool
	}{
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
