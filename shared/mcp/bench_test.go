package mcp_test

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// BenchmarkCallTool measures one echo call: the SDK alone over in-memory pipes (the server's
// own time and the protocol's), the adapter over HTTP with the session of a run reused, and
// the adapter connecting afresh for every call.
func BenchmarkCallTool(b *testing.B) {
	ctx := context.Background()
	args := map[string]any{"message": "hello"}
	b.Run("sdk-in-memory", func(b *testing.B) {
		ct, st := sdk.NewInMemoryTransports()
		ss, err := mcptest.NewServer().Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	base := startTestServer(b)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	ep := domain.MCPEndpoint{URL: base + mcptest.PathMCP}
	b.Run("reused", func(b *testing.B) {
		s, err := c.Connect(ctx, ep)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for b.Loop() {
			if _, err := s.CallTool(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			s, err := c.Connect(ctx, ep)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.CallTool(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
			_ = s.Close()
		}
	})
}
