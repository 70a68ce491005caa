// Command mcpconformance is the client the MCP conformance suite drives: it reads the scenario
// from MCP_CONFORMANCE_SCENARIO and the server URL from its argument, and uses the project's
// own adapter (shared/mcp) exactly as the service does: registration lists the tools
// (initialize, tools/list), a run connects once and calls tools on that session.
//
//	node <conformance>/dist/index.js client --command "go run ./infra/mcpconformance" --scenario tools_call
//
// The suite's servers listen on localhost, so the guard allows the loopback hosts by name, as
// `make dev` does.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/netguard"
)

func main() {
	if err := run(context.Background(), os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mcpconformance:", err)
		os.Exit(1)
	}
}

// guard allows the suite's servers, on localhost, as `make dev` does.
var guard = netguard.Policy{AllowHosts: []string{"localhost", "127.0.0.1", "::1"}}

func run(ctx context.Context, scenario string, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: mcpconformance <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)")
	}
	c := mcp.NewConnector(mcp.Options{Guard: guard})
	ep := domain.MCPEndpoint{URL: args[0], Timeout: 10 * time.Second}
	switch scenario {
	case "initialize":
		tools, err := c.ListTools(ctx, ep)
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		fmt.Printf("initialized; %d tools\n", len(tools))
		return nil
	case "tools_call":
		tools, err := c.ListTools(ctx, ep)
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		found := false
		for _, t := range tools {
			found = found || t.Name == "add_numbers"
		}
		if !found {
			return fmt.Errorf("the server lists no add_numbers tool (%d tools)", len(tools))
		}
		s, err := c.Connect(ctx, ep)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer func() { _ = s.Close() }() // the result is in; a failed goodbye changes nothing
		res, err := s.CallTool(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
		if err != nil {
			return fmt.Errorf("call add_numbers: %w", err)
		}
		if res.IsError {
			return fmt.Errorf("add_numbers answered an error: %s", res.Text)
		}
		fmt.Println("add_numbers:", res.Text)
		return nil
	case "sse-retry":
		// The server answers the call with an event stream that it closes after a priming event
		// (an id and a retry of 500 ms, no data); the answer comes on the GET that resumes it.
		s, err := c.Connect(ctx, ep)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer func() { _ = s.Close() }() // the result is in; a failed goodbye changes nothing
		res, err := s.CallTool(ctx, "test_reconnection", nil)
		if err != nil {
			return fmt.Errorf("call test_reconnection: %w", err)
		}
		if res.IsError {
			return fmt.Errorf("test_reconnection answered an error: %s", res.Text)
		}
		fmt.Println("test_reconnection:", res.Text)
		return nil
	}
	if scenario == "elicitation-sep1034-client-defaults" {
		return elicitDefaults(ctx, c, ep)
	}
	if strings.HasPrefix(scenario, "auth/") {
		return authorized(ctx, c, ep, scenario, os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	}
	return fmt.Errorf("scenario %q is not supported (initialize, tools_call, sse-retry, elicitation-sep1034-client-defaults, auth/*)", scenario)
}
