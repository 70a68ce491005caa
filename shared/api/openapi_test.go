package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/images"
	"github.com/agentorch/agentorch/shared/tools"
)

// TestOpenAPIDocument checks that the document loads and validates as OpenAPI 3.1 and that every
// operation follows the house rules: security, error responses and request media types.
func TestOpenAPIDocument(t *testing.T) {
	doc, err := openapiDoc()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	schemes := doc.Components.SecuritySchemes
	if s := schemes["ApiKeyAuth"]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != "x-api-key" {
		t.Errorf("ApiKeyAuth must be an apiKey in header x-api-key, got %+v", s)
	}
	if s := schemes["BearerAuth"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" || s.Value.BearerFormat != "JWT" {
		t.Errorf("BearerAuth must be http bearer JWT, got %+v", s)
	}

	public := map[string]bool{"GET /api/v1/health/": true, "GET /api/v1/openapi.json": true, "GET /media/{name}": true}
	keyOnly := map[string]bool{"POST /api/v1/auth/token/": true, "POST /api/v1/api-keys/": true}
	// Uploads take multipart/form-data alone; any other body is a 400, never a 415.
	multipartOnly := map[string]bool{"POST /api/v1/images/upload/": true, "POST /api/v1/files/": true}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			var got []string
			for _, req := range security {
				for s := range req {
					got = append(got, s)
				}
			}
			slices.Sort(got)
			want := []string{"ApiKeyAuth", "BearerAuth"}
			switch {
			case public[name]:
				want = nil
			case keyOnly[name]:
				want = []string{"ApiKeyAuth"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s security (-want +got):\n%s", name, diff)
			}

			var statuses []string
			for code := range op.Responses.Map() {
				statuses = append(statuses, code)
			}
			required := []string{"500"}
			if !public[name] {
				required = append(required, "401", "429", "503")
			}
			switch {
			case op.RequestBody != nil && multipartOnly[name]:
				required = append(required, "400", "413")
				content := op.RequestBody.Value.Content
				if len(content) != 1 || content.Get("multipart/form-data") == nil {
					t.Errorf("%s: request body types %v, want multipart/form-data alone", name, slices.Sorted(maps.Keys(content)))
				}
				if slices.Contains(statuses, "415") {
					t.Errorf("%s: documents 415; a body of another type is a 400", name)
				}
			case op.RequestBody != nil:
				required = append(required, "400", "413", "415")
				for _, mt := range []string{"application/json", "application/yaml"} {
					if op.RequestBody.Value.Content.Get(mt) == nil {
						t.Errorf("%s: request body lacks media type %s", name, mt)
					}
				}
			}
			for _, code := range required {
				if !slices.Contains(statuses, code) {
					t.Errorf("%s: no %s response (has %v)", name, code, statuses)
				}
			}
			for _, code := range statuses {
				if code >= "400" && !strings.HasPrefix(op.Responses.Value(code).Ref, "#/components/responses/") {
					t.Errorf("%s: error response %s is not one of the shared components/responses", name, code)
				}
			}
		}
	}
}

// TestOpenAPIServed checks that GET /api/v1/openapi.json serves the embedded YAML as JSON, and that
// what it serves is itself a valid document.
func TestOpenAPIServed(t *testing.T) {
	h := api.NewMeta(api.Options{})
	for _, path := range []string{"/api/v1/openapi.json", "/api/v1/openapi.json/"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		checkOpenAPI(t, r, nil, rec.Code, rec.Header(), body)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d, want 200: %s", path, rec.Code, body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}

		var fromYAML any
		if err := yaml.Unmarshal(api.OpenAPIYAML(), &fromYAML); err != nil {
			t.Fatal(err)
		}
		var want, got any
		b, err := json.Marshal(fromYAML)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("served document is not JSON: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("served JSON differs from openapi.yaml (-yaml +served):\n%s", diff)
		}

		loader := openapi3.NewLoader()
		served, err := loader.LoadFromData(body)
		if err != nil {
			t.Fatalf("served document does not load: %v", err)
		}
		if err := served.Validate(loader.Context); err != nil {
			t.Errorf("served document does not validate: %v", err)
		}
	}
}

// TestOpenAPIRoutes checks that the document and the handlers describe the same operations.
func TestOpenAPIRoutes(t *testing.T) {
	doc, err := openapiDoc()
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	groups := []*api.Group{
		api.NewMeta(api.Options{}), api.NewAgents(agents.NewService(nil, tools.NewRegistry(tools.Builtins(tools.Options{})...)), api.Options{}), api.NewAuth(nil, api.Options{}).WithAudit(nil).ServeUsage(nil).ServeLimits(nil),
		api.NewSessions(&fakeSessions{}, api.Options{}), withA2A(withOpenAI(withMCP(api.NewRuntime(&fakeSessions{}, api.Options{})))), api.NewImages(nil, nil, api.Options{}),
		api.NewFiles(unreachableKnowledge{}, api.Options{}), api.NewCollections(unreachableKnowledge{}, api.Options{}), api.NewKnowledge(unreachableKnowledge{}, api.Options{}),
		api.NewMCPServers(nil, api.Options{}), api.NewWebhooks(nil, nil, api.Options{}), api.NewMemory(nil, api.Options{}),
	}
	for _, g := range groups {
		for _, r := range g.Routes() {
			served = append(served, r.Method+" "+r.Path)
		}
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	slices.Sort(served)
	slices.Sort(documented)
	if len(served) == 0 {
		t.Fatal("no routes served")
	}
	if diff := cmp.Diff(served, documented); diff != "" {
		t.Errorf("routes (-served +documented):\n%s", diff)
	}
}

// openapiAuth is an Authenticator with a fixed answer, so that real handler responses for every
// authentication outcome can be checked against the document without a key store.
type openapiAuth struct {
	p       domain.Principal
	err     error
	rate    auth.Rate
	rateErr error
}

func (a openapiAuth) Authenticate(_ context.Context, apiKey, authorization string) (domain.Principal, error) {
	if apiKey == "" && authorization == "" {
		return domain.Principal{}, domain.ErrBadKey
	}
	return a.p, a.err
}

func (a openapiAuth) Limit(context.Context, domain.Principal) (auth.Rate, error) {
	return a.rate, a.rateErr
}

// TestOpenAPIRealResponses sends requests that the handlers answer without any service (routing,
// authentication, scopes, decoding, validation) and checks each response against the document.
func TestOpenAPIRealResponses(t *testing.T) {
	everything := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1", ExpiresAt: time.Now().Add(time.Hour)}
	limited := everything
	limited.RateLimit = 10
	window := auth.Rate{Limit: 10, Remaining: 9, Reset: time.Now().Add(30 * time.Second)}
	readOnly := everything
	readOnly.Scopes = []string{domain.ScopeAgentsRead}
	sessionsRead := everything
	sessionsRead.Scopes = []string{domain.ScopeSessionRead}
	const agentPath = "/api/v1/agent/7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10/"
	const runPath = "/api/v1/runtime/5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f/"
	jsonKey := map[string]string{"x-api-key": "ak_x", "Content-Type": "application/json"}
	formKey := func(ct string) map[string]string { return map[string]string{"x-api-key": "ak_x", "Content-Type": ct} }
	imageForm, imageBody := openapiForm(t, "image", []byte("\x89PNG\r\n\x1a\n"+strings.Repeat("\x00", 24)))
	textForm, textBody := openapiForm(t, "image", []byte("not an image"))
	emptyForm, emptyBody := openapiForm(t, "image", nil)
	otherForm, otherBody := openapiForm(t, "picture", []byte("\x89PNG\r\n\x1a\n"))
	hugeForm, hugeBody := openapiForm(t, "image", bytes.Repeat([]byte{0x89}, 3_750_001))
	const upload = "/api/v1/images/upload/"

	tests := []struct {
		name       string
		auth       api.Authenticator
		maxBody    int64
		method     string
		path       string
		header     map[string]string
		body       string
		wantStatus int
	}{
		{name: "health", method: "GET", path: "/api/v1/health/", wantStatus: 200},
		{name: "health without slash", method: "GET", path: "/api/v1/health", wantStatus: 200},
		{name: "wrong method", method: "POST", path: "/api/v1/health/", wantStatus: 405},
		{name: "unknown path", method: "GET", path: "/api/v1/nothing/", wantStatus: 404},
		{name: "no credentials", method: "GET", path: "/api/v1/agent/", wantStatus: 401},
		{name: "no authenticator", method: "GET", path: "/api/v1/api-keys/", header: map[string]string{"x-api-key": "ak_x"}, wantStatus: 401},
		{name: "expired key", auth: openapiAuth{err: domain.ErrExpiredKey}, method: "GET", path: agentPath, header: map[string]string{"x-api-key": "ak_x"}, wantStatus: 401},
		{name: "rate limited", auth: openapiAuth{p: limited, rate: auth.Rate{Limit: 10, Reset: time.Now().Add(20 * time.Second)}, rateErr: domain.ErrRateLimited},
			method: "GET", path: "/api/v1/agent/", header: map[string]string{"x-api-key": "ak_x"}, wantStatus: 429},
		{name: "store throttled", auth: openapiAuth{p: everything, err: domain.ErrOverloaded}, method: "DELETE", path: agentPath, header: map[string]string{"x-api-key": "ak_x"}, wantStatus: 503},
		{name: "internal failure", auth: openapiAuth{p: everything, err: errors.New("boom")}, method: "GET", path: agentPath + "versions/", header: map[string]string{"x-api-key": "ak_x"}, wantStatus: 500},
		{name: "validate valid", auth: openapiAuth{p: limited, rate: window}, method: "POST", path: "/api/v1/agent/validate/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/json"},
			body:   `{"name":"Bot","agent_type":"react_agent","llm_config":{"model":"m","temperature":0.3},"tools":["search"]}`, wantStatus: 200},
		{name: "validate invalid yaml", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/agent/validate",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/yaml"},
			body:   "agent_type: robot\nllm_config:\n  temperature: 7\n", wantStatus: 200},
		{name: "validate wrapped", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/agent/validate/",
			header: map[string]string{"Authorization": "Bearer t", "Content-Type": "application/json"},
			body:   `{"system_config":{"name":"Bot","agents":[{"name":"a"}],"edges":[{"from":"__start__","to":"a"}],"entry_point":"a"}}`, wantStatus: 200},
		{name: "malformed body", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/agent/validate/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/json"}, body: `{"name":`, wantStatus: 400},
		{name: "unsupported media type", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/agent/validate/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "text/plain"}, body: `name: x`, wantStatus: 415},
		{name: "body too large", auth: openapiAuth{p: everything}, maxBody: 16, method: "POST", path: "/api/v1/agent/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/json"}, body: `{"system_config":{"name":"a long enough name"}}`, wantStatus: 413},
		{name: "create without config", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/agent/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/json"}, body: `{"is_public":"yes"}`, wantStatus: 400},
		{name: "replace without config", auth: openapiAuth{p: everything}, method: "PUT", path: agentPath,
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/json"}, body: `{"is_shared":true}`, wantStatus: 400},
		{name: "missing scope", auth: openapiAuth{p: readOnly}, method: "PATCH", path: agentPath,
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/json"}, body: `{}`, wantStatus: 403},
		{name: "keys need keys:manage", auth: openapiAuth{p: readOnly}, method: "GET", path: "/api/v1/api-keys/", header: map[string]string{"x-api-key": "ak_x"}, wantStatus: 403},
		{name: "token needs a key", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/auth/token/", header: map[string]string{"Authorization": "Bearer t"}, wantStatus: 401},
		{name: "key with two expiries", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/api-keys/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/json"}, body: `{"expires_in":60,"expires_at":"2999-01-01T00:00:00Z"}`, wantStatus: 400},
		{name: "key field of wrong type", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/api-keys/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/yaml"}, body: "scopes: agents:read\n", wantStatus: 400},

		{name: "sessions without credentials", method: "GET", path: "/api/v1/sessions/", wantStatus: 401},
		{name: "sessions need sessions:read", auth: openapiAuth{p: readOnly}, method: "GET", path: "/api/v1/sessions", header: jsonKey, wantStatus: 403},
		{name: "creating a session needs sessions:write", auth: openapiAuth{p: sessionsRead}, method: "POST", path: "/api/v1/sessions/",
			header: jsonKey, body: `{"name":"helper"}`, wantStatus: 403},
		{name: "session body not an object", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/sessions/", header: jsonKey, body: `["helper"]`, wantStatus: 400},
		{name: "session body as text", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/sessions/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "text/plain"}, body: `name: helper`, wantStatus: 415},
		{name: "from agent without agent_key", auth: openapiAuth{p: everything}, method: "GET", path: "/api/v1/sessions/from-agent/", header: jsonKey, wantStatus: 400},
		{name: "feedback without message", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/sessions/feedback/", header: jsonKey, body: `{"rating":1}`, wantStatus: 400},
		{name: "feedback rating of wrong type", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/sessions/feedback",
			header: jsonKey, body: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d","rating":"up"}`, wantStatus: 400},
		{name: "feedback read", auth: openapiAuth{p: everything}, method: "GET", path: "/api/v1/sessions/feedback/", header: jsonKey, wantStatus: 405},
		{name: "deleting a session needs sessions:write", auth: openapiAuth{p: sessionsRead}, method: "DELETE", path: "/api/v1/sessions/5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f/",
			header: jsonKey, wantStatus: 403},
		{name: "execute needs sessions:write", auth: openapiAuth{p: sessionsRead}, method: "POST", path: runPath + "execute/", header: jsonKey, body: `{"content":"Hi"}`, wantStatus: 403},
		{name: "execute with inputs of wrong type", auth: openapiAuth{p: everything}, method: "POST", path: runPath + "execute/", header: jsonKey,
			body: `{"content":"Hi","inputs":["who"]}`, wantStatus: 400},
		{name: "execute with a numeric correlation_id", auth: openapiAuth{p: everything}, method: "POST", path: runPath + "execute/", header: jsonKey,
			body: `{"content":"Hi","correlation_id":7}`, wantStatus: 400},
		{name: "execute in an unknown format", auth: openapiAuth{p: everything}, method: "POST", path: runPath + "execute/?format=xml", header: jsonKey,
			body: `{"content":"Hi"}`, wantStatus: 400},
		{name: "execute streaming in an unknown format", auth: openapiAuth{p: everything}, method: "POST", path: runPath + "execute/",
			header: map[string]string{"x-api-key": "ak_x", "Content-Type": "application/yaml", "Accept": "text/event-stream"}, body: "content: Hi\nresponse_format: html\n", wantStatus: 400},
		{name: "execute above 5 MiB", auth: openapiAuth{p: everything}, method: "POST", path: runPath + "execute/", header: jsonKey,
			body: `{"content":"` + strings.Repeat("a", api.ExecuteMaxBodyBytes) + `"}`, wantStatus: 413},
		{name: "execute read", auth: openapiAuth{p: everything}, method: "GET", path: runPath + "execute", header: jsonKey, wantStatus: 405},
		{name: "messages page too large", auth: openapiAuth{p: sessionsRead}, method: "GET", path: runPath + "messages/?limit=500", header: jsonKey, wantStatus: 400},
		{name: "messages negative offset", auth: openapiAuth{p: sessionsRead}, method: "GET", path: runPath + "messages/?offset=-1", header: jsonKey, wantStatus: 400},
		{name: "events need sessions:read", auth: openapiAuth{p: readOnly}, method: "GET", path: runPath + "events/", header: jsonKey, wantStatus: 403},
		{name: "executions need a key", method: "GET", path: runPath + "executions/7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10/", wantStatus: 401},
		{name: "unknown runtime path", auth: openapiAuth{p: everything}, method: "GET", path: runPath + "state/", header: jsonKey, wantStatus: 404},

		{name: "upload without credentials", method: "POST", path: upload, header: map[string]string{"Content-Type": imageForm}, body: string(imageBody), wantStatus: 401},
		{name: "upload needs sessions:write", auth: openapiAuth{p: sessionsRead}, method: "POST", path: upload, header: formKey(imageForm), body: string(imageBody), wantStatus: 403},
		{name: "upload as JSON", auth: openapiAuth{p: everything}, method: "POST", path: upload, header: jsonKey, body: `{"image":"iVBORw0KGgo="}`, wantStatus: 400},
		{name: "upload without a boundary", auth: openapiAuth{p: everything}, method: "POST", path: "/api/v1/images/upload", header: formKey("multipart/form-data"), body: string(imageBody), wantStatus: 400},
		{name: "upload without an image part", auth: openapiAuth{p: everything}, method: "POST", path: upload, header: formKey(otherForm), body: string(otherBody), wantStatus: 400},
		{name: "upload of an empty image", auth: openapiAuth{p: everything}, method: "POST", path: upload, header: formKey(emptyForm), body: string(emptyBody), wantStatus: 400},
		{name: "upload of text", auth: openapiAuth{p: everything}, method: "POST", path: upload, header: formKey(textForm), body: string(textBody), wantStatus: 400},
		{name: "upload above the image limit", auth: openapiAuth{p: everything}, method: "POST", path: upload, header: formKey(hugeForm), body: string(hugeBody), wantStatus: 413},
		{name: "upload above the body limit", auth: openapiAuth{p: everything}, method: "POST", path: upload, header: formKey(imageForm),
			body: string(imageBody) + strings.Repeat("x", 4<<20), wantStatus: 413},
		{name: "upload read", auth: openapiAuth{p: everything}, method: "GET", path: upload, header: jsonKey, wantStatus: 405},
		{name: "media of a malformed name", method: "GET", path: "/media/passwd", wantStatus: 404},
		{name: "media of another extension", method: "GET", path: "/media/5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f.svg/", wantStatus: 404},
		{name: "media deleted", method: "DELETE", path: "/media/5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f.png", wantStatus: 405},
		{name: "media below a name", method: "GET", path: "/media/5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f.png/x", wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // the helper is shared by parallel tests; -race checks it
			opts := api.Options{Auth: tt.auth, MaxBodyBytes: tt.maxBody}
			var h http.Handler
			switch {
			case strings.HasPrefix(tt.path, "/api/v1/agent"):
				h = api.NewAgents(agents.NewService(nil, tools.NewRegistry(tools.Builtins(tools.Options{})...)), opts)
			case strings.HasPrefix(tt.path, "/api/v1/auth"), strings.HasPrefix(tt.path, "/api/v1/api-keys"):
				// The services without their stores: what they refuse before any I/O (a key
				// list without keys:manage, a media name that is no upload's) is answered.
				h = api.NewAuth((*auth.Service)(nil), opts)
			case strings.HasPrefix(tt.path, "/api/v1/sessions"):
				h = api.NewSessions(&fakeSessions{}, opts)
			case strings.HasPrefix(tt.path, "/api/v1/runtime"):
				h = api.NewRuntime(&fakeSessions{}, opts)
			case strings.HasPrefix(tt.path, "/api/v1/images"), strings.HasPrefix(tt.path, "/media"):
				h = api.NewImages((*images.Service)(nil), nil, opts)
			default:
				h = api.NewMeta(opts)
			}
			body := []byte(tt.body)
			r := httptest.NewRequest(tt.method, tt.path, bytes.NewReader(body))
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			res := rec.Result()
			out, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %s", res.StatusCode, tt.wantStatus, out)
			}
			if err := openapiError(r, body, res.StatusCode, res.Header, out); err != nil {
				t.Errorf("response does not match the document: %v\nbody: %s", err, out)
			}
		})
	}
}

// openapiForm is a multipart/form-data body with one file part, and its Content-Type.
func openapiForm(t *testing.T, field string, data []byte) (contentType string, body []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, err := w.CreateFormFile(field, "upload.png")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := part.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), b.Bytes()
}
