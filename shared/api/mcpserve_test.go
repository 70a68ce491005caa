package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/api/mcpserve"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// withMCP is g with the MCP endpoint the runtime function adds to it (run.Runtime).
func withMCP(g *api.Group) *api.Group {
	mcpserve.Serve(g, nil, nil, nil)
	return g
}

// keyTransport sends an API key with every request, as an MCP client configured with a header does.
type keyTransport struct{ header, value string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(k.header, k.value)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects the go-sdk's client to /api/v1/mcp/ of srv with the key in header.
func mcpConnect(t *testing.T, srv *httptest.Server, header, value string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/api/v1/mcp/",
		HTTPClient: &http.Client{Transport: keyTransport{header, value}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func TestMCPServeAgents(t *testing.T) {
	s := newStack(t)
	acme := s.key("alice", "acme")
	other := s.key("bob", "globex")
	for _, cfg := range []string{
		`{"system_config":{"name":"Helper","agent_type":"llm_agent","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"}}}`,
		`{"system_config":{"name":"Greeter","agent_type":"llm_agent","system_prompt":"Hello {{ variables.who }}.","llm_config":{"provider":"local","model":"dev"}}}`,
	} {
		if res := s.do(req{method: "POST", path: "/api/v1/agent/", key: acme, body: cfg}); res.status != http.StatusCreated {
			t.Fatalf("create agent: %d %s", res.status, res.body)
		}
	}
	srv := httptest.NewServer(s.mux)
	defer srv.Close()

	cs := mcpConnect(t, srv, "Authorization", "Bearer "+acme)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"greeter", "helper", "search_knowledge_base"}) {
		t.Errorf("acme's tools = %v, want [greeter helper search_knowledge_base]", got)
	}
	// Another company's key sees none of them (only the search), and cannot call them.
	cg := mcpConnect(t, srv, "x-api-key", other)
	if got := toolNames(t, cg); !slices.Equal(got, []string{"search_knowledge_base"}) {
		t.Errorf("globex's tools = %v, want only the search", got)
	}
	if _, err := cg.CallTool(context.Background(), &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "hi"}}); err == nil {
		t.Error("globex called acme's agent")
	}

	// A call runs the agent with the local model; session_id goes on in the same session.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "What is the refund policy?"}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	sc, _ := res.StructuredContent.(map[string]any)
	if res.IsError || !strings.Contains(text, "What is the refund policy?") || !strings.Contains(text, "You are terse.") {
		t.Errorf("result = %v %q", res.IsError, text)
	}
	sid, _ := sc["session_id"].(string)
	if sid == "" || sc["execution_id"] == "" || sc["status"] != "completed" {
		t.Fatalf("structured content = %v", sc)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "And shipping?", "session_id": sid}})
	if err != nil {
		t.Fatalf("tools/call again: %v", err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(text, "history=2") {
		t.Errorf("follow-up = %v %q", res.IsError, text)
	}
	if got := s.ok("GET", "/api/v1/runtime/"+sid+"/messages/", acme, nil).json(t)["total"]; got != float64(4) {
		t.Errorf("session %s holds %v messages, want 4", sid, got)
	}
	// Another agent's tool does not go on in helper's session: it is refused, and nothing is added.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greeter", Arguments: map[string]any{"message": "hi", "session_id": sid, "inputs": map[string]any{"who": "Ann"}}})
	if err != nil {
		t.Fatalf("tools/call greeter on helper's session: %v", err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "was not opened from the agent") {
		t.Errorf("greeter on helper's session = %v %q, want refused", res.IsError, text)
	}
	if got := s.ok("GET", "/api/v1/runtime/"+sid+"/messages/", acme, nil).json(t)["total"]; got != float64(4) {
		t.Errorf("after the refused call session %s holds %v messages, want 4", sid, got)
	}

	// A run that fails is the tool's error result, in the API's error type.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greeter", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatalf("tools/call greeter: %v", err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.HasPrefix(text, "invalid_request_error: ") {
		t.Errorf("missing variable = %v %q, want an invalid_request_error result", res.IsError, text)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greeter", Arguments: map[string]any{"message": "hi", "inputs": map[string]any{"who": "Ann"}}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Hello Ann.") {
		t.Errorf("greeter with inputs = %v %v", res, err)
	}
}

func TestMCPServeNeedsAKey(t *testing.T) {
	s := newStack(t)
	res := s.do(req{method: "POST", path: "/api/v1/mcp/", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`})
	if typ, _ := res.errorType(t); res.status != http.StatusUnauthorized || typ != "authentication_error" {
		t.Errorf("no key: %d %s", res.status, res.body)
	}
	res = s.do(req{method: "POST", path: "/api/v1/mcp/", key: "sk-wrong", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`})
	if res.status != http.StatusUnauthorized {
		t.Errorf("bad key: %d %s", res.status, res.body)
	}
}

// TestMCPServeBudget: a call of a key whose monthly token budget is spent is refused, as the
// execute is, before the model runs.
func TestMCPServeBudget(t *testing.T) {
	s := newStack(t)
	tokens := int64(1)
	key := s.key("alice", fmt.Sprintf("mcp-budget-%d", time.Now().UnixNano()), func(k *auth.NewKey) { k.Budget = domain.Budget{MonthlyTokens: &tokens} })
	if res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Helper","agent_type":"llm_agent","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"}}}`}); res.status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", res.status, res.body)
	}
	srv := httptest.NewServer(s.mux)
	defer srv.Close()
	cs := mcpConnect(t, srv, "x-api-key", key)
	call := func() *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(); res.IsError { // nothing spent yet
		t.Fatalf("first call = %v", res.Content[0].(*mcp.TextContent).Text)
	}
	if res := call(); !res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "rate_limit_error: Monthly token budget") {
		t.Errorf("over budget = %v %q", res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
}

func TestMCPServeTransportRefusalsInTheEnvelope(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	// As docs/mcp-server.md's curl sends it: a JSON-RPC answer with no session.
	res := s.do(req{method: "POST", path: "/api/v1/mcp/", key: key, body: list, header: map[string]string{"Accept": "application/json, text/event-stream"}})
	if res.status != http.StatusOK || res.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("tools/list: %d %v %s", res.status, res.header, res.body)
	}
	if m := res.json(t); m["jsonrpc"] != "2.0" || m["result"] == nil {
		t.Errorf("tools/list = %s", res.body)
	}
	// The transport's plain-text refusal (no acceptable type) becomes the envelope.
	res = s.do(req{method: "POST", path: "/api/v1/mcp/", key: key, body: list, header: map[string]string{"Accept": "text/html"}})
	if typ, _ := res.errorType(t); res.status != http.StatusBadRequest || typ != "invalid_request_error" {
		t.Errorf("wrong Accept: %d %s", res.status, res.body)
	}
	res = s.do(req{method: "GET", path: "/api/v1/mcp/", key: key})
	if typ, _ := res.errorType(t); res.status != http.StatusMethodNotAllowed || typ != "invalid_request_error" || res.header.Get("Allow") != "POST" {
		t.Errorf("GET: %d %v %s", res.status, res.header, res.body)
	}
}

// BenchmarkMCPCall is what a tools/call costs over the plain execute it makes, both with the
// local model on a session of the same agent (go test -run X -bench MCPCall ./shared/api/).
func BenchmarkMCPCall(b *testing.B) {
	s := newStack(b)
	key := s.key("alice", "acme")
	if res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Helper","agent_type":"llm_agent","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"}}}`}); res.status != http.StatusCreated {
		b.Fatalf("create agent: %d %s", res.status, res.body)
	}
	srv := httptest.NewServer(s.mux)
	defer srv.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/api/v1/mcp/",
		HTTPClient: &http.Client{Transport: keyTransport{"x-api-key", key}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	// Each on its own session of the agent, over HTTP to the same server.
	session := func() any {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "hi"}})
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
		return res.StructuredContent.(map[string]any)["session_id"]
	}
	b.Run("execute", func(b *testing.B) {
		hc := &http.Client{Transport: keyTransport{"x-api-key", key}}
		url := fmt.Sprintf("%s/api/v1/runtime/%s/execute/", srv.URL, session())
		for b.Loop() {
			res, err := hc.Post(url, "application/json", strings.NewReader(`{"content":"hi"}`))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Fatal(res.Status)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		sid := session()
		for b.Loop() {
			if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "hi", "session_id": sid}}); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
	// With a progress token: an event stream with four notifications before the result.
	b.Run("mcp-progress", func(b *testing.B) {
		sid := session()
		for b.Loop() {
			p := &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "hi", "session_id": sid}}
			p.SetProgressToken("bench")
			if res, err := cs.CallTool(context.Background(), p); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
}
