package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// mcpAgent creates an agent of cfg (its system_config) with key.
func (s *stack) mcpAgent(key, cfg string) {
	s.t.Helper()
	if res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":` + cfg + `}`}); res.status != http.StatusCreated {
		s.t.Fatalf("create agent: %d %s", res.status, res.body)
	}
}

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	return res.Content[0].(*mcp.TextContent).Text, sc, res.IsError
}

// TestMCPServeToolShapes: a tool is named by its agent's key or by system_config.mcp.tool_name
// (when free: the older agent keeps a name, and no agent takes the search's); a default_message makes message optional; each prompt variable is a
// property of the input, and a call's value of it reaches the prompt.
func TestMCPServeToolShapes(t *testing.T) {
	s := newStack(t)
	company := fmt.Sprintf("mcp-shapes-%d", time.Now().UnixNano())
	key := s.key("alice", company)
	s.mcpAgent(key, `{"name":"Status","system_prompt":"Report the status.","llm_config":{"provider":"local","model":"dev"},"mcp":{"tool_name":"daily_status","default_message":"What is the status today?"}}`)
	s.mcpAgent(key, `{"name":"Greeter","system_prompt":"Hello {{ variables.who }} from {{variables.place}}.","llm_config":{"provider":"local","model":"dev"}}`)
	// A name no provider takes is refused when the agent is saved.
	res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: `{"system_config":{"name":"Bad name","system_prompt":"x","mcp":{"tool_name":"has space"}}}`})
	wantField(t, res, "system_config.mcp.tool_name")
	s.mcpAgent(key, `{"name":"Taken","system_prompt":"x","llm_config":{"provider":"local","model":"dev"},"mcp":{"tool_name":"daily_status"}}`)
	s.mcpAgent(key, `{"name":"Squatter","system_prompt":"x","llm_config":{"provider":"local","model":"dev"},"mcp":{"tool_name":"search_knowledge_base"}}`)
	var agents []map[string]any
	if err := json.Unmarshal(s.ok("GET", "/api/v1/agent/?limit=100", key, nil).body, &agents); err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, a := range agents {
		keys[a["name"].(string)] = a["agent_key"].(string)
	}
	srv := httptest.NewServer(s.mux)
	defer srv.Close()
	cs := mcpConnect(t, srv, "x-api-key", key)

	// Tools, and nothing the server does not do: no logging, no list-changed notifications.
	//nolint:staticcheck // SA1019: logging is deprecated (SEP-2577), and the server must not declare it.
	if c := cs.InitializeResult().Capabilities; c.Tools == nil || c.Tools.ListChanged || c.Logging != nil || c.Resources != nil || c.Prompts != nil {
		t.Errorf("capabilities = %+v", c)
	}
	tools := listTools(t, cs)
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"daily_status", keys["Greeter"], keys["Taken"], keys["Squatter"], "search_knowledge_base"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	if req := tools["daily_status"].InputSchema.(map[string]any)["required"]; req != nil {
		t.Errorf("daily_status requires %v, want nothing (it has a default message)", req)
	}
	greeter := tools[keys["Greeter"]].InputSchema.(map[string]any)
	props := greeter["properties"].(map[string]any)
	for _, p := range []string{"message", "session_id", "inputs", "who", "place"} {
		if props[p] == nil {
			t.Errorf("greeter's input lacks %s: %v", p, props)
		}
	}
	if req := fmt.Sprint(greeter["required"]); req != "[message]" {
		t.Errorf("greeter requires %s, want [message]", req)
	}

	text, sc, isErr := callTool(t, cs, "daily_status", nil)
	if isErr || !strings.Contains(text, "You said: What is the status today?") || sc["status"] != "completed" {
		t.Errorf("daily_status without arguments = %v %q %v", isErr, text, sc)
	}
	if text, _, isErr = callTool(t, cs, "daily_status", map[string]any{"message": "And tomorrow?"}); isErr || !strings.Contains(text, "You said: And tomorrow?") {
		t.Errorf("daily_status with a message = %v %q", isErr, text)
	}
	// Variables as properties, and through inputs; the property wins over inputs.
	text, _, isErr = callTool(t, cs, keys["Greeter"], map[string]any{"message": "hi", "who": "Ann", "inputs": map[string]any{"who": "Bob", "place": "Oslo"}})
	if isErr || !strings.Contains(text, "Hello Ann from Oslo.") {
		t.Errorf("greeter = %v %q", isErr, text)
	}
	if text, _, isErr = callTool(t, cs, keys["Greeter"], map[string]any{"message": "hi", "who": "Ann"}); !isErr || !strings.HasPrefix(text, "invalid_request_error: ") || !strings.Contains(text, "place") {
		t.Errorf("greeter without place = %v %q, want an invalid_request_error naming place", isErr, text)
	}
	if text, _, isErr = callTool(t, cs, keys["Greeter"], map[string]any{"who": "Ann", "place": "Oslo"}); !isErr || !strings.Contains(text, "message") {
		t.Errorf("greeter without a message = %v %q", isErr, text)
	}
}

// TestMCPServeCitationsAndSearch: an agent with a knowledge base answers with its citations in
// the structured content; search_knowledge_base finds the company's passages, needs
// knowledge:read, and never reaches another company's knowledge base.
func TestMCPServeCitationsAndSearch(t *testing.T) {
	s := newStack(t)
	company := fmt.Sprintf("mcp-kb-%d", time.Now().UnixNano())
	key := s.key("alice", company)
	f := newKBFixture(s, key)
	s.mcpAgent(key, strings.Replace(f.kbConfig("llm_agent", ""), `"name":"Helper"`, `"name":"Support desk"`, 1))
	srv := httptest.NewServer(s.mux)
	defer srv.Close()
	cs := mcpConnect(t, srv, "x-api-key", key)

	var desk string
	for n := range listTools(t, cs) {
		if strings.HasPrefix(n, "support-desk") {
			desk = n
		}
	}
	text, sc, isErr := callTool(t, cs, desk, map[string]any{"message": "How long do I have to send a purchase back?"})
	cites, _ := sc["citations"].([]any)
	if isErr || len(cites) == 0 {
		t.Fatalf("call = %v %q %v, want citations", isErr, text, sc)
	}
	first := cites[0].(map[string]any)
	if first["file_id"] != f.returnsID || first["knowledge_base_id"] != f.kbID || first["index"] != float64(1) || !strings.Contains(first["text"].(string), "thirty days") {
		t.Errorf("first citation = %v", first)
	}

	text, sc, isErr = callTool(t, cs, "search_knowledge_base", map[string]any{"knowledge_base_id": f.kbID, "query": "send a purchase back", "top_k": 1})
	results, _ := sc["results"].([]any)
	if isErr || len(results) != 1 || !strings.Contains(text, "returns.txt") || results[0].(map[string]any)["file_id"] != f.returnsID {
		t.Errorf("search = %v %q %v", isErr, text, sc)
	}
	if text, _, isErr = callTool(t, cs, "search_knowledge_base", map[string]any{"knowledge_base_id": f.kbID}); !isErr || !strings.HasPrefix(text, "invalid_request_error: ") {
		t.Errorf("search without a query = %v %q", isErr, text)
	}

	// Another company's key: the search is not found, as the route answers.
	other := mcpConnect(t, srv, "x-api-key", s.key("bob", company+"-other"))
	if text, _, isErr = callTool(t, other, "search_knowledge_base", map[string]any{"knowledge_base_id": f.kbID, "query": "refunds"}); !isErr || !strings.HasPrefix(text, "not_found_error: ") {
		t.Errorf("other company's search = %v %q", isErr, text)
	}
	// A key without knowledge:read has no search tool.
	narrow := mcpConnect(t, srv, "x-api-key", s.key("carol", company, func(k *auth.NewKey) {
		k.Scopes = []string{domain.ScopeAgentsRead, domain.ScopeSessionsWrite}
	}))
	if _, ok := listTools(t, narrow)["search_knowledge_base"]; ok {
		t.Error("a key without knowledge:read lists search_knowledge_base")
	}
}

// TestMCPServeProgress: a call with a progress token is answered with an event stream that
// carries the run's events as increasing progress (its execution first) before the result; a
// call without one is answered in JSON.
func TestMCPServeProgress(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", fmt.Sprintf("mcp-progress-%d", time.Now().UnixNano()))
	s.mcpAgent(key, `{"name":"Helper","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"},"mcp":{"tool_name":"helper"}}`)
	srv := httptest.NewServer(s.mux)
	defer srv.Close()

	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r.Params)
		}})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/api/v1/mcp/",
		HTTPClient: &http.Client{Transport: keyTransport{"x-api-key", key}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }() // the results are in
	params := &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "hi"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", res, err)
	}
	execID := res.StructuredContent.(map[string]any)["execution_id"].(string)
	mu.Lock()
	defer mu.Unlock()
	var msgs []string
	for i, p := range got {
		if p.ProgressToken != "tok-1" || p.Progress != float64(i+1) {
			t.Errorf("notification %d = %+v", i, p)
		}
		msgs = append(msgs, p.Message)
	}
	want := []string{"execution " + execID + " started", "node_started", "model_call", "node_finished"}
	if len(msgs) != len(want) {
		t.Fatalf("progress messages = %q, want %q", msgs, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(msgs[i], w) {
			t.Errorf("progress %d = %q, want %q…", i, msgs[i], w)
		}
	}

	// On the wire: the call with a token is a stream, one without is JSON.
	call := func(meta string) response {
		r, _ := http.NewRequest("POST", srv.URL+"/api/v1/mcp/", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"helper","arguments":{"message":"hi"}`+meta+`}}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("x-api-key", key)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }() // read whole below
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return response{status: res.StatusCode, header: res.Header, body: b}
	}
	if res := call(`,"_meta":{"progressToken":9}`); res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/event-stream") ||
		!strings.Contains(string(res.body), `"method":"notifications/progress"`) || !strings.Contains(string(res.body), `"id":7`) {
		t.Errorf("with a token: %d %v\n%s", res.status, res.header, string(res.body))
	}
	if res := call(``); res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "application/json") || strings.Contains(string(res.body), "notifications/progress") {
		t.Errorf("without a token: %d %v\n%s", res.status, res.header, string(res.body))
	}
}
