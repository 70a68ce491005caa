package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// The tests come in two layers. Handler tests run the real handlers over in-memory fakes of the
// services (newFakeStack): the HTTP contract, in milliseconds, with nothing running. End-to-end
// tests run the application over the local stand-ins (newStack): the features through HTTP,
// queues, streaming; go test -short skips them.
//
// TestMain runs the tests; the first that needs the local stack starts it (testEnv).
func TestMain(m *testing.M) { localstack.RunLazyTests(m) }

// testEnv is fresh resources on the local stack, started on first use. With -short the
// end-to-end tests that need it are skipped.
func testEnv(t testing.TB) *localstack.TestEnv { return localstack.LazyTestEnv(t) }

// stack is one application on fresh DynamoDB resources, served the way the dev server serves it,
// or the handlers over in-memory fakes (newFakeStack), when app is nil.
type stack struct {
	t     testing.TB
	app   *app.App
	mux   http.Handler
	fakes *fakes
}

func newStack(t testing.TB, extra ...func(*dynamodb.Options)) *stack {
	t.Helper()
	env := testEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler), extra...)
	a.UseMCP(mcp.ForPolicy)
	// Routed by template.yaml, as the dev server routes; queued work reaches the worker through
	// the event source mapping stand-in, as on AWS.
	mux, err := sam.NewRouter(env.Template, func(dir, _ string) (http.Handler, error) { return a.Handler(dir) })
	if err != nil {
		t.Fatal(err)
	}
	env.RunEventSources(t, a.Processor)
	return &stack{t: t, app: a, mux: mux}
}

// key creates an API key directly through the auth service.
func (s *stack) key(owner, company string, opts ...func(*auth.NewKey)) string {
	s.t.Helper()
	if s.fakes != nil {
		return s.fakes.key(owner, company, opts...)
	}
	in := auth.NewKey{Name: "test", Owner: owner, Company: company}
	for _, o := range opts {
		o(&in)
	}
	_, secret, err := s.app.Auth.CreateKey(context.Background(), in)
	if err != nil {
		s.t.Fatal(err)
	}
	return secret
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// errorType returns error.type and error.message, failing unless the body is the envelope.
func (r response) errorType(t testing.TB) (string, string) {
	t.Helper()
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error envelope: %s", r.body)
	}
	typ, _ := e["type"].(string)
	msg, _ := e["message"].(string)
	if typ == "" || msg == "" {
		t.Fatalf("envelope lacks type or message: %s", r.body)
	}
	return typ, msg
}

type req struct {
	method, path, key string
	body              any // string is sent as is; anything else as JSON
	header            map[string]string
}

// do sends a request through the handlers and checks the response against the OpenAPI document.
func (s *stack) do(r req) response {
	s.t.Helper()
	return send(s.t, s.mux, r)
}

// send sends a request through h and checks the response against the OpenAPI document.
func send(t testing.TB, h http.Handler, r req) response {
	t.Helper()
	var body []byte
	switch b := r.body.(type) {
	case nil:
	case string:
		body = []byte(b)
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	hr := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.key != "" {
		hr.Header.Set("x-api-key", r.key)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, served(hr))
	res := rec.Result()
	out, _ := io.ReadAll(res.Body)
	if len(body) < 1<<20 {
		check := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
		check.Header = hr.Header.Clone()
		checkOpenAPI(t, check, body, res.StatusCode, res.Header, out)
	}
	return response{status: res.StatusCode, header: res.Header, body: out}
}

func expiredKey(s *stack, owner, company string) string {
	s.t.Helper()
	secret := "ak_expired_" + strings.Repeat("x", 20) + time.Now().Format("150405.000000")
	k := &domain.APIKey{ID: "00000000-0000-4000-8000-" + time.Now().Format("150405000000")[:12], Name: "old", Prefix: secret[:10],
		Hash: auth.HashKey(secret), Owner: owner, Company: company, Scopes: []string{},
		ExpiresAt: time.Now().Add(-time.Minute), CreatedAt: time.Now().Add(-time.Hour)}
	if err := s.app.Store.PutKey(context.Background(), k); err != nil {
		s.t.Fatal(err)
	}
	return secret
}

// serve sends a request without the OpenAPI check, for benchmarks.
func (s *stack) serve(method, path, key string, body []byte) int {
	hr := httptest.NewRequest(method, path, bytes.NewReader(body))
	hr.Header.Set("x-api-key", key)
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, served(hr))
	return rec.Code
}
