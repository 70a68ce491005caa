package mcp_test

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

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
		defer func() { _ = ss.Close() }()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cs.Close() }()
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
		defer func() { _ = s.Close() }()
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

// BenchmarkOversizedAnswer measures what an answer of 300 MB as sent, or of 512 MiB inflated
// from half a megabyte of gzip, as application/json or as one event of a stream, costs the process that registers the server (the answer to
// initialize, as a registration reads it) or calls its tool (the answer to tools/call): the peak
// resident memory above the baseline (VmHWM, reset before each case through
// /proc/self/clear_refs; the in-process test server's share included) and what stays resident
// after a GC. Run it alone, once: go test -run '^$' -bench OversizedAnswer -benchtime 1x.
func BenchmarkOversizedAnswer(b *testing.B) {
	for _, method := range []string{"initialize", "tools/call"} {
		for _, a := range []struct {
			name    string
			size    int64
			sse, gz bool
		}{
			{"json-plain-300MB", plainSize, false, false}, {"json-gzip-512MiB", bombSize, false, true},
			{"sse-plain-300MB", plainSize, true, false}, {"sse-gzip-512MiB", bombSize, true, true},
		} {
			b.Run(method+"/"+a.name, func(b *testing.B) {
				path := mcptest.PathJSON
				if a.sse {
					path = mcptest.PathMCP
				}
				url := mcpServer(b, path, func(w http.ResponseWriter, _ *http.Request, call rpcCall) bool {
					if call.Method != method {
						return false
					}
					hugeAnswer(w, call.ID, a.size, a.sse, a.gz)
					return true
				})
				c := mcp.NewConnector(mcp.Options{Guard: loopback})
				ep := domain.MCPEndpoint{URL: url, Timeout: time.Minute}
				var peak, after float64
				for b.Loop() {
					runtime.GC()
					debug.FreeOSMemory()
					if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
						b.Skip("cannot reset the peak RSS:", err)
					}
					base := procStatus(b, "VmRSS")
					switch method {
					case "initialize":
						_, _ = c.ListTools(context.Background(), ep)
					default:
						s, err := c.Connect(context.Background(), ep)
						if err != nil {
							b.Fatal(err)
						}
						_, _ = s.CallTool(context.Background(), "huge", nil)
						_ = s.Close()
					}
					peak = max(peak, procStatus(b, "VmHWM")-base)
					runtime.GC()
					debug.FreeOSMemory()
					after = max(after, procStatus(b, "VmRSS")-base)
				}
				b.ReportMetric(peak, "peak-MB")
				b.ReportMetric(after, "after-MB")
			})
		}
	}
}

// procStatus reads a kB field of /proc/self/status, in MB.
func procStatus(b *testing.B, field string) float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status:", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1000
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
