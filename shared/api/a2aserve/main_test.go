package a2aserve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
)

// The tests run the application over the local stand-ins, routed by template.yaml as the dev
// server routes it, with the real A2A clients (a2a-go's here, @a2a-js/sdk's in js_test.go).
//
// TestMain runs the tests; the first that needs the local stack starts it (testEnv).
func TestMain(m *testing.M) { localstack.RunLazyTests(m) }

// testEnv is fresh resources on the local stack, started on first use. With -short the
// end-to-end tests that need it are skipped.
func testEnv(t testing.TB) *localstack.TestEnv { return localstack.LazyTestEnv(t) }

// stack is the application on fresh resources behind an HTTP server whose address is the
// public base URL, so that the Agent Cards name it.
type stack struct {
	t   testing.TB
	app *app.App
	url string
}

func newStack(t testing.TB) *stack {
	t.Helper()
	env := testEnv(t)
	srv := httptest.NewUnstartedServer(nil)
	cfg := env.Config
	cfg.PublicBaseURL = "http://" + srv.Listener.Addr().String()
	a := app.NewWithAWS(env.AWS, cfg, slog.New(slog.DiscardHandler))
	mux, err := sam.NewRouter(env.Template, func(dir, _ string) (http.Handler, error) { return a.Handler(dir) })
	if err != nil {
		t.Fatal(err)
	}
	env.RunEventSources(t, a.Processor)
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return &stack{t: t, app: a, url: srv.URL}
}

// key creates an API key directly through the auth service.
func (s *stack) key(owner, company string, opts ...func(*auth.NewKey)) string {
	s.t.Helper()
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

// do sends a request with the key and answers the status and body.
func (s *stack) do(method, path, key string, body any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, ok := body.(string)
		if !ok {
			raw, err := json.Marshal(body)
			if err != nil {
				s.t.Fatal(err)
			}
			b = string(raw)
		}
		rd = bytes.NewReader([]byte(b))
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

// agent creates an agent of the key's company from its configuration; its key is its name in
// lower case.
func (s *stack) agent(key, cfg string) {
	s.t.Helper()
	if status, body := s.do("POST", "/api/v1/agent/", key, `{"system_config":`+cfg+`}`); status != http.StatusCreated {
		s.t.Fatalf("create agent: %d %s", status, body)
	}
}

// keyTransport sends an API key with every request, as an A2A client configured with the
// card's security scheme does.
type keyTransport struct{ header, value string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(k.header, k.value)
	return http.DefaultTransport.RoundTrip(r)
}
