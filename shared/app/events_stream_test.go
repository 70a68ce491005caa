package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/platform"
)

// streamFixtures are the events of the functions behind a streaming function URL: function URL
// requests (not API Gateway events), one per file events/<dir>-*.json.
func streamFixtures(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range loadTemplate(t).Functions() {
		if f.URL == nil {
			continue
		}
		if !f.Streams() {
			t.Errorf("%s has a function URL that does not stream", f.LogicalID)
		}
		files, err := filepath.Glob(filepath.Join(root, "events", f.Dir+"-*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s has no event in events/%s-*.json: %v", f.LogicalID, f.Dir, err)
		}
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// A function URL request has the $default route key besides what aws-lambda-go reads.
			var ev struct {
				events.LambdaFunctionURLRequest
				RouteKey string `json:"routeKey"`
			}
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("%s is not a function URL request: %v", file, err)
			}
			if ev.RouteKey != "$default" || !strings.Contains(ev.RequestContext.DomainName, ".lambda-url.") ||
				ev.RequestContext.HTTP.Path != ev.RawPath || !strings.Contains(ev.RawQueryString, "stream=true") {
				t.Errorf("%s: route %q domain %q path %q query %q, want a function URL's streaming execute",
					file, ev.RouteKey, ev.RequestContext.DomainName, ev.RawPath, ev.RawQueryString)
			}
			out[filepath.Base(file)] = raw
		}
	}
	if len(out) == 0 {
		t.Fatal("no function of template.yaml has a function URL")
	}
	return out
}

// streamSetup is a stack with the app in-process (keys, sessions and MCP servers are made
// through the HTTP functions' handlers) and its replayer.
func streamSetup(t *testing.T) (*localstack.TestEnv, *app.App, *replayer) {
	t.Helper()
	env := localstack.NewTestEnv(t)
	log := slog.New(slog.DiscardHandler)
	a := app.NewWithAWS(env.AWS, env.Config, log)
	a.UseMCP(mcp.ForPolicy)
	handlers := map[string]lambdaHandler{}
	for _, f := range httpFunctions(loadTemplate(t)) {
		g, err := a.Handler(f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		handlers[f.Dir] = platform.HTTPHandler(g, log)
	}
	return env, a, &replayer{app: a, handlers: handlers, root: repoRoot(t)}
}

// fillURLEvent fills a function URL event's placeholders in (a key and a session of it).
func (r *replayer) fillURLEvent(t *testing.T, raw []byte, secret, session string) []byte {
	t.Helper()
	s := strings.NewReplacer(placeholderKey, secret, placeholderSession, session).Replace(string(raw))
	if left := placeholder.FindString(s); left != "" {
		t.Fatalf("placeholder %s left unfilled", left)
	}
	return []byte(s)
}

// sseEvents reads the names of a stream's events.
func sseEvents(body []byte) []string {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, name)
		}
	}
	return names
}

// TestStreamEvents replays each function URL event through the stream function's handler in
// process (platform.FunctionURLHandler, as its main serves it): the run streams its events as
// server-sent events and ends with its result.
func TestStreamEvents(t *testing.T) {
	_, a, r := streamSetup(t)
	g, err := a.Handler("stream")
	if err != nil {
		t.Fatal(err)
	}
	h := platform.FunctionURLHandler(g, slog.New(slog.DiscardHandler))
	for name, raw := range streamFixtures(t, r.root) {
		t.Run(name, func(t *testing.T) {
			secret := r.newKey(t, "company-"+name)
			var ev events.LambdaFunctionURLRequest
			if err := json.Unmarshal(r.fillURLEvent(t, raw, secret, r.newSession(t, secret)), &ev); err != nil {
				t.Fatal(err)
			}
			resp, err := h(t.Context(), &ev)
			if err != nil {
				t.Fatalf("handler returned an error (the URL would answer 502): %v", err)
			}
			whole, err := io.ReadAll(resp)
			if err != nil {
				t.Fatal(err)
			}
			pre, body, err := lambdarun.SplitHTTP(whole)
			if err != nil {
				t.Fatal(err)
			}
			names := sseEvents(body)
			if pre.StatusCode != http.StatusOK || pre.Headers["Content-Type"] != "text/event-stream" || len(names) < 2 || names[len(names)-1] != "result" {
				t.Errorf("prelude %+v, events %v, want 200 text/event-stream ending with result; body %s", pre, names, body)
			}
		})
	}
}

// timedStream notes when each server-sent event of a function URL's response reaches the client.
type timedStream struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	events []string
	at     []time.Time
}

func (s *timedStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	for {
		frame, rest, ok := bytes.Cut(s.buf.Bytes(), []byte("\n\n"))
		if !ok {
			break
		}
		if names := sseEvents(frame); len(names) > 0 {
			s.events, s.at = append(s.events, names[0]), append(s.at, time.Now())
		}
		s.buf = *bytes.NewBuffer(bytes.Clone(rest))
	}
	return len(p), nil
}

// TestStreamInvoke is make invoke of the stream function: its bootstrap (built as scripts/invoke
// builds it) runs under the Runtime API stand-in invoked in the streaming mode. The sample event
// streams to its result; and in a session whose react agent calls the MCP tool slow (1.5 s), the
// first event reaches the client at least a second before the run's last: the events leave as
// they happen, not when the run ends.
func TestStreamInvoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the stream function")
	}
	env, _, r := streamSetup(t)
	bin := filepath.Join(t.TempDir(), "stream", "bootstrap")
	if _, err := lambdarun.Build(t.Context(), r.root, "stream", bin, lambdarun.LocalTags); err != nil {
		t.Fatal(err)
	}
	stackEnv := lambdarun.ConfigEnv(env.Config)
	run := func(t *testing.T, event []byte) (*timedStream, lambdarun.HTTPPrelude, lambdarun.Result) {
		t.Helper()
		ts := &timedStream{}
		var pre lambdarun.HTTPPrelude
		var logs strings.Builder
		res, err := lambdarun.Run(t.Context(), lambdarun.Options{Bootstrap: bin, Function: "stream", Event: event, Env: stackEnv,
			Stream: lambdarun.NewHTTPWriter(ts, func(p lambdarun.HTTPPrelude) error { pre = p; return nil }), Stderr: &logs})
		if err != nil {
			t.Fatalf("invoke: %v\nlogs:\n%s", err, logs.String())
		}
		return ts, pre, res
	}

	fixtures := streamFixtures(t, r.root)
	for name, raw := range fixtures {
		t.Run(name, func(t *testing.T) {
			secret := r.newKey(t, "company-"+name)
			ts, pre, _ := run(t, r.fillURLEvent(t, raw, secret, r.newSession(t, secret)))
			if pre.StatusCode != http.StatusOK || len(ts.events) < 2 || ts.events[len(ts.events)-1] != "result" {
				t.Errorf("prelude %+v, events %v, want 200 and a stream ending with result", pre, ts.events)
			}
		})
	}

	t.Run("first event before the run ends", func(t *testing.T) {
		base, stop, err := mcptest.Start(context.Background(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		secret := r.newKey(t, "company-stream-slow")
		servers, err := r.app.Handler("mcpservers")
		if err != nil {
			t.Fatal(err)
		}
		sessions, err := r.app.Handler("sessions")
		if err != nil {
			t.Fatal(err)
		}
		post := func(h http.Handler, path, body string) map[string]any {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			req.Header.Set("X-API-Key", secret)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var out map[string]any
			if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
				t.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body)
			}
			return out
		}
		post(servers, "/api/v1/mcp-servers/", `{"name":"tools","url":"`+base+mcptest.PathMCP+`"}`)
		sid, _ := post(sessions, "/api/v1/sessions/", `{"name":"slow","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},`+
			`"tools":[{"type":"mcp","server":"tools","allowed_tools":["slow"]}]}`)["session_id"].(string)
		var ev map[string]any
		for _, raw := range fixtures {
			if err := json.Unmarshal(r.fillURLEvent(t, raw, secret, sid), &ev); err != nil {
				t.Fatal(err)
			}
			break
		}
		ev["body"] = `{"content":"slow {\"ms\":1500}"}`
		delete(ev["headers"].(map[string]any), "content-length")
		event, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		ts, _, res := run(t, event)
		n := len(ts.events)
		if n < 3 || ts.events[n-1] != "result" {
			t.Fatalf("events %v, want a run with a tool call ending with result", ts.events)
		}
		if gap := ts.at[n-1].Sub(ts.at[0]); gap < time.Second {
			t.Errorf("the first event (%s) reached the client %s before the last (%v); want at least 1s around a 1.5s tool call", ts.events[0], gap, ts.events)
		}
		t.Logf("first byte %s, last %s after the event was served; events %v", res.FirstByte, res.Duration, ts.events)
	})
}
