package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// TestTraceContextGoesToServer: a tool call made under a span context sends its traceparent and
// tracestate to the MCP server, on every transport.
func TestTraceContextGoesToServer(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	h := mcptest.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Traceparent")+" "+r.Header.Get("Tracestate")] = true
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	hdr := http.Header{}
	hdr.Set("traceparent", tp)
	hdr.Set("tracestate", "vendor=x")
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(hdr))

	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	for _, path := range []string{mcptest.PathMCP, mcptest.PathJSON, mcptest.PathSSE} {
		mu.Lock()
		clear(seen)
		mu.Unlock()
		s, err := c.Connect(context.Background(), domain.MCPEndpoint{URL: srv.URL + path, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, err := s.CallTool(ctx, "echo", map[string]any{"message": "hi"}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		_ = s.Close()
		mu.Lock()
		if !seen[tp+" vendor=x"] {
			t.Errorf("%s: no request carried the caller's trace context; saw %v", path, seen)
		}
		mu.Unlock()
	}
}
