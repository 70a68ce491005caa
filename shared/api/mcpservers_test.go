package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/mcpservers/mcpserverstest"
	"github.com/agentorch/agentorch/shared/seal"
)

// The MCP-servers group over the real feature on an in-memory store and a fake connector: the
// HTTP contract (statuses, views, scopes, the OpenAPI document) in milliseconds. The feature's
// rules are shared/mcpservers' tests; the store's, shared/dynamo's.

const (
	mcpURL     = "https://mcp.example.com/mcp"
	mcpDownURL = "https://down.example.com/mcp"
	mcpSecret  = "Bearer sk-do-not-show-me"
)

// mcpStack is the fake stack with the MCP-servers group mounted where the agents function
// serves it, and the log of the group.
func mcpStack(t *testing.T) (*stack, *mcpserverstest.Store, *mcpMemConnector, *bytes.Buffer) {
	t.Helper()
	s, f := newFakeStack(t)
	store := mcpserverstest.NewStore()
	conn := &mcpMemConnector{up: map[string]bool{mcpURL: true}}
	svc := mcpservers.New(store, conn, seal.New(seal.Static(strings.Repeat("s", 32)))).WithAudit(audit.New(audittest.NewStore()))
	var logs bytes.Buffer
	g := api.NewAgents(f.agents, api.Options{Auth: fakeAuth{f}, Log: slog.New(slog.NewTextHandler(&logs, nil))}).WithMCPServers(svc)
	rest := s.mux
	s.mux = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/mcp-servers") {
			g.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
	return s, store, conn, &logs
}

// mcpMemConnector serves one echo tool at the URLs that are up.
type mcpMemConnector struct {
	mu sync.Mutex
	up map[string]bool
}

func (c *mcpMemConnector) ListTools(_ context.Context, ep domain.MCPEndpoint) ([]domain.MCPTool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.up[ep.URL] {
		return nil, &domain.MCPError{Reason: "the server did not answer (connection refused)", Err: errors.New("dial: refused")}
	}
	return []domain.MCPTool{{Name: "echo", Description: "Echoes its input", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}, "required": []any{"message"}}}}, nil
}

func (c *mcpMemConnector) Connect(context.Context, domain.MCPEndpoint) (domain.MCPSession, error) {
	return nil, errors.New("not used")
}

func TestMCPServerHandlers(t *testing.T) {
	s, _, conn, logs := mcpStack(t)
	key := s.key("alice", "acme")
	var bodies []string
	do := func(r req) response {
		t.Helper()
		r.key = key
		res := s.do(r)
		bodies = append(bodies, string(res.body))
		return res
	}

	res := do(req{method: "POST", path: "/api/v1/mcp-servers/", body: map[string]any{"name": "everything", "url": mcpURL,
		"description": "Tools", "headers": map[string]string{"X-Api-Key": "k-1", "Authorization": mcpSecret}}})
	if res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	srv := res.json(t)
	id, _ := srv["id"].(string)
	for k, want := range map[string]any{"name": "everything", "url": mcpURL, "description": "Tools", "timeout_ms": 10000.0,
		"status": "active", "last_error": nil, "tool_count": 1.0} {
		if srv[k] != want {
			t.Errorf("created %s = %v, want %v", k, srv[k], want)
		}
	}
	if names, _ := json.Marshal(srv["header_names"]); string(names) != `["Authorization","X-Api-Key"]` {
		t.Errorf("header_names = %s", names)
	}

	// The list is a bare array, paged with a Link to the next page.
	do(req{method: "POST", path: "/api/v1/mcp-servers/", body: `{"name":"second","url":"` + mcpURL + `"}`})
	res = do(req{method: "GET", path: "/api/v1/mcp-servers/?limit=1"})
	var list []map[string]any
	if err := json.Unmarshal(res.body, &list); err != nil || res.status != 200 || len(list) != 1 || list[0]["name"] != "second" {
		t.Errorf("list page: %d %s", res.status, res.body)
	}
	if link := res.header.Get("Link"); !strings.Contains(link, "offset=1") {
		t.Errorf("Link = %q", link)
	}

	res = do(req{method: "GET", path: "/api/v1/mcp-servers/" + id + "/"})
	if res.status != 200 || res.json(t)["id"] != id {
		t.Errorf("get: %d %s", res.status, res.body)
	}
	res = do(req{method: "GET", path: "/api/v1/mcp-servers/" + id + "/tools/"})
	tools, _ := res.json(t)["tools"].([]any)
	if res.status != 200 || len(tools) != 1 || tools[0].(map[string]any)["name"] != "echo" || tools[0].(map[string]any)["input_schema"] == nil {
		t.Errorf("tools: %d %s", res.status, res.body)
	}

	// A YAML change of the description; a new url that is down is a 400 naming the reason.
	res = do(req{method: "PATCH", path: "/api/v1/mcp-servers/" + id + "/", body: "description: Changed\ntimeout_ms: 2000\n",
		header: map[string]string{"Content-Type": "application/yaml"}})
	if m := res.json(t); res.status != 200 || m["description"] != "Changed" || m["timeout_ms"] != 2000.0 {
		t.Errorf("patch: %d %s", res.status, res.body)
	}
	res = do(req{method: "PATCH", path: "/api/v1/mcp-servers/" + id + "/", body: `{"url":"` + mcpDownURL + `","headers":{"Authorization":"Bearer other"}}`})
	if typ, msg := res.errorType(t); res.status != 400 || typ != "invalid_request_error" || !strings.Contains(msg, "connection refused") {
		t.Errorf("patch to a down server: %d %s", res.status, res.body)
	}

	// Refresh of a server that went down: 200, status error, last_error; up again: active.
	conn.mu.Lock()
	conn.up[mcpURL] = false
	conn.mu.Unlock()
	res = do(req{method: "POST", path: "/api/v1/mcp-servers/" + id + "/refresh/"})
	if m := res.json(t); res.status != 200 || m["status"] != "error" || !strings.Contains(m["last_error"].(string), "connection refused") || m["tool_count"] != 1.0 {
		t.Errorf("refresh of a down server: %d %s", res.status, res.body)
	}
	conn.mu.Lock()
	conn.up[mcpURL] = true
	conn.mu.Unlock()
	res = do(req{method: "POST", path: "/api/v1/mcp-servers/" + id + "/refresh"})
	if m := res.json(t); res.status != 200 || m["status"] != "active" || m["last_error"] != nil {
		t.Errorf("refresh: %d %s", res.status, res.body)
	}

	res = do(req{method: "DELETE", path: "/api/v1/mcp-servers/" + id + "/"})
	if res.status != http.StatusNoContent || len(res.body) != 0 {
		t.Errorf("delete: %d %s", res.status, res.body)
	}
	if res = do(req{method: "GET", path: "/api/v1/mcp-servers/" + id + "/"}); res.status != 404 {
		t.Errorf("get after delete: %d", res.status)
	}
	for _, b := range append(bodies, logs.String()) {
		if strings.Contains(b, "do-not-show-me") || strings.Contains(b, "k-1") {
			t.Errorf("a header value was shown or logged: %s", b)
		}
	}
}

// TestMCPServerRefusals: bad input answers 400 naming the field and stores nothing, a taken name
// 409, another company's server 404 like an unknown one, and the scopes are the agents'.
func TestMCPServerRefusals(t *testing.T) {
	s, store, _, logs := mcpStack(t)
	key := s.key("alice", "acme")
	res := s.do(req{method: "POST", path: "/api/v1/mcp-servers/", key: key, body: `{"name":"docs","url":"` + mcpURL + `"}`})
	if res.status != 201 {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	id, _ := res.json(t)["id"].(string)

	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"not http", `{"name":"a","url":"ftp://mcp.example.com/"}`, 400, "url"},
		{"headers not a map", `{"name":"a","url":"` + mcpURL + `","headers":["` + mcpSecret + `"]}`, 400, "headers"},
		{"header not a string", `{"name":"a","url":"` + mcpURL + `","headers":{"Authorization":true}}`, 400, "headers.Authorization"},
		{"timeout out of range", `{"name":"a","url":"` + mcpURL + `","timeout_ms":600000}`, 400, "timeout_ms"},
		{"bad name", `{"name":"a b","url":"` + mcpURL + `"}`, 400, "name"},
		{"unknown field", `{"name":"a","url":"` + mcpURL + `","secret":"x"}`, 400, "secret"},
		{"unreachable", `{"name":"a","url":"` + mcpDownURL + `","headers":{"Authorization":"` + mcpSecret + `"}}`, 400, "url"},
		{"taken name", `{"name":"docs","url":"` + mcpURL + `"}`, 409, ""},
		{"not an object", `["docs"]`, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.do(req{method: "POST", path: "/api/v1/mcp-servers/", key: key, body: tc.body})
			if res.status != tc.status {
				t.Fatalf("%d %s, want %d", res.status, res.body, tc.status)
			}
			if tc.field != "" {
				errs, _ := res.json(t)["error"].(map[string]any)["errors"].([]any)
				if len(errs) == 0 || errs[0].(map[string]any)["field"] != tc.field {
					t.Errorf("errors %v, want first field %q", errs, tc.field)
				}
			}
			if strings.Contains(string(res.body), "do-not-show-me") {
				t.Errorf("the answer shows a header value: %s", res.body)
			}
			if store.Len() != 1 {
				t.Errorf("%d servers stored", store.Len())
			}
		})
	}

	other := s.key("eve", "evil")
	for _, r := range []req{
		{method: "GET", path: "/api/v1/mcp-servers/" + id + "/"},
		{method: "GET", path: "/api/v1/mcp-servers/" + id + "/tools/"},
		{method: "PATCH", path: "/api/v1/mcp-servers/" + id + "/", body: `{"description":"mine"}`},
		{method: "POST", path: "/api/v1/mcp-servers/" + id + "/refresh/"},
		{method: "DELETE", path: "/api/v1/mcp-servers/" + id + "/"},
		{method: "GET", path: "/api/v1/mcp-servers/not-a-uuid/"},
	} {
		r.key = other
		if res := s.do(r); res.status != 404 {
			t.Errorf("%s %s by another company: %d %s", r.method, r.path, res.status, res.body)
		}
	}
	if res := s.do(req{method: "GET", path: "/api/v1/mcp-servers/", key: other}); string(res.body) != "[]\n" {
		t.Errorf("another company's list: %s", res.body)
	}

	reader := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeAgentsRead} })
	knowledge := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeKnowledgeWrite} })
	for _, tc := range []struct {
		key    string
		r      req
		status int
	}{
		{reader, req{method: "GET", path: "/api/v1/mcp-servers/"}, 200},
		{reader, req{method: "GET", path: "/api/v1/mcp-servers/" + id + "/tools/"}, 200},
		{reader, req{method: "POST", path: "/api/v1/mcp-servers/", body: `{"name":"x","url":"` + mcpURL + `"}`}, 403},
		{reader, req{method: "POST", path: "/api/v1/mcp-servers/" + id + "/refresh/"}, 403},
		{reader, req{method: "DELETE", path: "/api/v1/mcp-servers/" + id + "/"}, 403},
		{knowledge, req{method: "GET", path: "/api/v1/mcp-servers/" + id + "/"}, 403},
		{"", req{method: "GET", path: "/api/v1/mcp-servers/"}, 401},
	} {
		tc.r.key = tc.key
		if res := s.do(tc.r); res.status != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.r.method, tc.r.path, res.status, tc.status)
		}
	}

	// A store failure is a 500 without detail, logged without the header values.
	store.Fail = errors.New("dynamodb down")
	res = s.do(req{method: "POST", path: "/api/v1/mcp-servers/", key: key, body: `{"name":"z","url":"` + mcpURL + `","headers":{"Authorization":"` + mcpSecret + `"}}`})
	if typ, _ := res.errorType(t); res.status != 500 || typ != "api_error" || strings.Contains(string(res.body), "dynamodb") {
		t.Errorf("store failure: %d %s", res.status, res.body)
	}
	if !strings.Contains(logs.String(), "dynamodb down") || strings.Contains(logs.String(), "do-not-show-me") {
		t.Errorf("log: %s", logs.String())
	}
}
