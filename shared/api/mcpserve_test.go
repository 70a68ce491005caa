package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/api/mcpserve"
)

// withMCP is g with the MCP endpoint the runtime function adds to it (run.Runtime).
func withMCP(g *api.Group) *api.Group {
	mcpserve.Serve(g, nil, nil)
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
	if got := toolNames(t, cs); !slices.Equal(got, []string{"greeter", "helper"}) {
		t.Errorf("acme's tools = %v, want [greeter helper]", got)
	}
	// Another company's key sees none of them, and cannot call them.
	cg := mcpConnect(t, srv, "x-api-key", other)
	if got := toolNames(t, cg); len(got) != 0 {
		t.Errorf("globex's tools = %v, want none", got)
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
