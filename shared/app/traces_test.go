package app_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/telemetry"
	"github.com/agentorch/agentorch/shared/telemetry/telemetrytest"
)

// TestTracesOfAnExecute: with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, an execute through the
// runtime's handler, sent with a traceparent, is a trace at the collector's OTLP receiver: its
// invoke_agent span under the caller's span, and the MCP tool call's execute_tool span, whose
// context the MCP server received in the traceparent of the tool call.
func TestTracesOfAnExecute(t *testing.T) {
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	rcv := telemetrytest.Start(t)
	t.Setenv(telemetry.EnvTracesEndpoint, rcv.URL)
	env := localstack.NewTestEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	a.UseMCP(mcp.ForPolicy)

	var mu sync.Mutex
	var parents []string
	inner := mcptest.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			mu.Lock()
			parents = append(parents, tp)
			mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	_, secret, err := a.Auth.CreateKey(t.Context(), auth.NewKey{Owner: "o", Company: "company-traces"})
	if err != nil {
		t.Fatal(err)
	}
	call := func(group, path, body string, want int, header ...string) map[string]any {
		t.Helper()
		h, err := a.Handler(group)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("X-API-Key", secret)
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out map[string]any
		if rec.Code != want || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body)
		}
		return out
	}
	call("mcpservers", "/api/v1/mcp-servers/", `{"name":"tools","url":"`+srv.URL+mcptest.PathMCP+`"}`, http.StatusCreated)
	sid, _ := call("sessions", "/api/v1/sessions/", `{"name":"traced","agent_type":"react_agent","llm_config":{"provider":"local","model":"dev"},`+
		`"tools":[{"type":"mcp","server":"tools","allowed_tools":["echo"]}]}`, http.StatusCreated)["session_id"].(string)
	mu.Lock()
	parents = nil // the registration's listing
	mu.Unlock()
	call("runtime", "/api/v1/runtime/"+sid+"/execute/", `{"content":"echo {\"message\":\"hi\"}"}`, http.StatusOK,
		"traceparent", "00-"+traceID+"-"+spanID+"-01")

	var root, node, tool telemetrytest.Span
	for _, s := range rcv.Spans() {
		switch {
		case s.Name == "invoke_agent traced" && s.ParentID == spanID:
			root = s
		case s.Name == "invoke_agent traced": // the session's one agent: the node run
			node = s
		case s.Name == "execute_tool echo":
			tool = s
		}
	}
	if root.SpanID == "" || root.TraceID != traceID || root.Attrs["gen_ai.conversation.id"] != sid {
		t.Fatalf("no invoke_agent span under the caller's %s naming session %s: %+v", spanID, sid, rcv.Spans())
	}
	if node.ParentID != root.SpanID || tool.ParentID != node.SpanID || tool.TraceID != traceID {
		t.Errorf("node %+v under root %s, tool %+v under node", node, root.SpanID, tool)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "00-" + traceID + "-" + tool.SpanID + "-01"; !slices.Contains(parents, want) {
		t.Errorf("the MCP server received traceparents %v, want %s (the execute_tool span)", parents, want)
	}
}
