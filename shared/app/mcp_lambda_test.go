package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/shared/platform"
)

// mcpProgressCall is a tools/call of the agent "helper" that asks for progress.
const mcpProgressCall = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"helper","arguments":{"message":"hi"},"_meta":{"progressToken":"p"}}}`

// withBody is the sample event file with body as its body (and no content-length), and path as
// its path when given.
func withBody(t *testing.T, root, file, body, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "events", file))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	ev["body"] = body
	delete(ev["headers"].(map[string]any), "content-length")
	if path != "" {
		ev["rawPath"], ev["rawQueryString"] = path, ""
		delete(ev, "queryStringParameters")
		ev["requestContext"].(map[string]any)["http"].(map[string]any)["path"] = path
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkProgressStream checks an answer to mcpProgressCall: 200, an event stream of the run's
// progress (counting up from 1) and then the call's result.
func checkProgressStream(t *testing.T, via string, status int, contentType string, body []byte) {
	t.Helper()
	if status != http.StatusOK || !strings.HasPrefix(contentType, "text/event-stream") {
		t.Fatalf("%s: %d %q, want 200 text/event-stream: %s", via, status, contentType, body)
	}
	var msgs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("%s: data %q: %v", via, data, err)
			}
			msgs = append(msgs, m)
		}
	}
	if len(msgs) < 5 {
		t.Fatalf("%s: %d messages, want 4 notifications and the result: %s", via, len(msgs), body)
	}
	for i, m := range msgs[:len(msgs)-1] {
		p, _ := m["params"].(map[string]any)
		if m["method"] != "notifications/progress" || p["progressToken"] != "p" || p["progress"] != float64(i+1) {
			t.Errorf("%s: message %d = %v", via, i, m)
		}
	}
	last := msgs[len(msgs)-1]
	res, _ := last["result"].(map[string]any)
	sc2, _ := res["structuredContent"].(map[string]any)
	if last["id"] != float64(3) || sc2["status"] != "completed" {
		t.Errorf("%s: last message = %v, want the call's result", via, last)
	}
}

// TestMCPProgressThroughLambda: a tools/call that asks for progress is answered with its
// notifications and result through the runtime function's API Gateway adapter (which buffers:
// they arrive together) and through the stream function's function URL adapter.
func TestMCPProgressThroughLambda(t *testing.T) {
	_, a, r := streamSetup(t)
	secret := r.newKey(t, "company-mcp-progress")
	agents, err := a.Handler("agents")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/api/v1/agent/", strings.NewReader(
		`{"system_config":{"name":"Helper","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"},"mcp":{"tool_name":"helper"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", secret)
	rec := httptest.NewRecorder()
	agents.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create agent: %d %s", rec.Code, rec.Body)
	}

	status, header, body := r.replay(t, "runtime", withBody(t, r.root, "runtime-mcp.json", mcpProgressCall, ""), map[string]string{placeholderKey: secret})
	checkProgressStream(t, "API Gateway", status, header.Get("Content-Type"), body)

	g, err := a.Handler("stream")
	if err != nil {
		t.Fatal(err)
	}
	h := platform.FunctionURLHandler(g, slog.New(slog.DiscardHandler))
	raw := strings.ReplaceAll(string(withBody(t, r.root, "stream-execute.json", mcpProgressCall, "/api/v1/mcp/")), placeholderKey, secret)
	var ev events.LambdaFunctionURLRequest
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		t.Fatal(err)
	}
	ev.Headers["accept"] = "application/json, text/event-stream"
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
	checkProgressStream(t, "function URL", pre.StatusCode, pre.Headers["Content-Type"], body)
}
