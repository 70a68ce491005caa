package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/mcpnpm"
)

// ServerScenarios are the official MCP conformance suite's server scenarios that apply to
// /api/v1/mcp/, each with what it needs of the company's agents. The others, and why they do not
// apply, are listed in docs/mcp-server.md.
var serverScenarios = []string{
	"server-initialize", "ping", "tools-list", "tools-call-simple-text", "tools-call-error",
	"tools-call-with-progress", "dns-rebinding-protection",
}

// conformanceAgents are the suite's fixture tools, made of ordinary agents of the company (the
// local model answers them): named through system_config.mcp.tool_name, called without
// arguments (so each has a default_message). test_error_handling fails as a real run fails: its
// prompt needs a variable the call does not give.
var conformanceAgents = []string{
	`{"name":"Simple text","system_prompt":"This is a simple text response for testing.","llm_config":{"provider":"local","model":"dev"},
	  "mcp":{"tool_name":"test_simple_text","default_message":"Answer with the simple text."}}`,
	`{"name":"Error handling","system_prompt":"Answer about {{ variables.order_id }}.","llm_config":{"provider":"local","model":"dev"},
	  "mcp":{"tool_name":"test_error_handling","default_message":"Where is my order?"}}`,
	`{"name":"With progress","system_prompt":"Report what you did.","llm_config":{"provider":"local","model":"dev"},
	  "mcp":{"tool_name":"test_tool_with_progress","default_message":"Run and report progress."}}`,
}

// TestMCPServerConformance runs the official MCP conformance suite's server scenarios (Node 22
// and @modelcontextprotocol/conformance from infra/mcpnpm) against /api/v1/mcp/ of the whole
// application on the stand-ins. The suite's client sends no credentials: in front of the API
// the company's key is added to each request, as an MCP client configured with a header
// (mcp-remote --header) sends it.
func TestMCPServerConformance(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := mcpnpm.EnsureDeps(ctx, root, os.Stderr); errors.Is(err, mcpnpm.ErrNoNPM) {
		t.Skip("npm is not installed:", err)
	} else if err != nil {
		t.Fatal(err)
	}
	s := newStack(t)
	key := s.key("alice", fmt.Sprintf("mcp-conformance-%d", time.Now().UnixNano()))
	for _, cfg := range conformanceAgents {
		s.mcpAgent(key, cfg)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") == "" && r.Header.Get("Authorization") == "" {
			r.Header.Set("x-api-key", key)
		}
		s.mux.ServeHTTP(w, r)
	}))
	defer srv.Close()

	dir := t.TempDir()
	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)
	for _, scenario := range serverScenarios {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.CommandContext(ctx, mcpnpm.Node(root), mcpnpm.ConformanceCLI(root), "server",
				"--url", srv.URL+"/api/v1/mcp/", "--scenario", scenario, "-o", filepath.Join(dir, scenario))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance %s failed: %v\n%s", scenario, err, out)
			}
			m := passed.FindSubmatch(out)
			if m == nil {
				t.Fatalf("conformance %s reports no count:\n%s", scenario, out)
			}
			// Every check passes: none failed, none warned, at least one ran.
			if n, _ := strconv.Atoi(string(m[1])); n == 0 || string(m[1]) != string(m[2]) || string(m[3]) != "0" || string(m[4]) != "0" {
				t.Errorf("conformance %s: passed %s of %s, %s failed, %s warnings:\n%s", scenario, m[1], m[2], m[3], m[4], out)
			}
			t.Logf("%s:\n%s", scenario, out)
		})
	}
}
