package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// Sizes of the answers too large: 300 MB as sent, and 512 MiB inflated from about 0.5 MB of gzip.
const (
	plainSize = 300_000_000
	bombSize  = 512 << 20
)

// maxAllocated bounds what one oversized answer may make the client allocate in total: a few
// times MaxAnswerBytes (a buffer that doubles as it fills), far below the answers' sizes.
const maxAllocated = 48 << 20

// allocatedBy returns how many bytes of heap f allocated (the test servers' share included).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestAnswerTooLarge(t *testing.T) {
	tooLarge := fmt.Sprintf("the server's answer is larger than %d MiB", mcp.MaxAnswerBytes>>20)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	type answer struct {
		name    string
		size    int64
		sse, gz bool
	}
	answers := []answer{
		{"json plain 300 MB", plainSize, false, false},
		{"json gzip 512 MiB", bombSize, false, true},
		{"sse plain 300 MB", plainSize, true, false},
		{"sse gzip 512 MiB", bombSize, true, true},
	}
	for _, method := range []string{"initialize", "tools/list", "tools/call"} {
		for _, a := range answers {
			t.Run(method+" "+a.name, func(t *testing.T) {
				path := mcptest.PathMCP
				if !a.sse {
					path = mcptest.PathJSON
				}
				url := mcpServer(t, path, func(w http.ResponseWriter, _ *http.Request, call rpcCall) bool {
					if call.Method == method && !(method == "tools/call" && strings.Contains(string(call.Params), `"echo"`)) {
						hugeAnswer(w, call.ID, a.size, a.sse, a.gz)
						return true
					}
					return false
				})
				ep := domain.MCPEndpoint{URL: url, Timeout: 20 * time.Second}
				var err error
				allocated := allocatedBy(func() {
					switch method {
					case "tools/call":
						s, cerr := c.Connect(context.Background(), ep)
						if cerr != nil {
							t.Fatal(cerr)
						}
						defer func() { _ = s.Close() }()
						_, err = s.CallTool(context.Background(), "huge", nil)
						// The session outlives the one answer too large.
						if got, err := s.CallTool(context.Background(), "echo", map[string]any{"message": "still here"}); err != nil || got.Text != "still here" {
							t.Errorf("echo after the answer too large = %+v, %v", got, err)
						}
					default:
						_, err = c.ListTools(context.Background(), ep)
					}
				})
				if me := mcpError(t, err); me.Reason != tooLarge {
					t.Errorf("reason %q, want %q (cause %v)", me.Reason, tooLarge, me.Err)
				}
				if allocated > maxAllocated {
					t.Errorf("allocated %d MiB, want at most %d MiB", allocated>>20, maxAllocated>>20)
				}
			})
		}
	}
}

// TestLegacyEventTooLarge: over the HTTP+SSE transport the answers come in one long stream,
// whose events are capped one by one: an event too large ends the session, named as such.
func TestLegacyEventTooLarge(t *testing.T) {
	tooLarge := fmt.Sprintf("the server's answer is larger than %d MiB", mcp.MaxAnswerBytes>>20)
	ls := newLegacyServer(t, func(base string) string { return base + "/messages" }, hugeEvent(plainSize))
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	ep := domain.MCPEndpoint{URL: ls.URL + "/sse", Timeout: 20 * time.Second}
	if _, err := c.ListTools(context.Background(), ep); err != nil {
		t.Fatalf("list tools over HTTP+SSE: %v", err)
	}
	s, err := c.Connect(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	allocated := allocatedBy(func() { _, err = s.CallTool(context.Background(), "huge", nil) })
	if me := mcpError(t, err); me.Reason != tooLarge {
		t.Errorf("reason %q, want %q (cause %v)", me.Reason, tooLarge, me.Err)
	}
	if allocated > maxAllocated {
		t.Errorf("allocated %d MiB, want at most %d MiB", allocated>>20, maxAllocated>>20)
	}
}

// TestAnswerAtTheCap: an answer just under the cap is read, whatever its transport.
func TestAnswerAtTheCap(t *testing.T) {
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	for _, path := range []string{mcptest.PathMCP, mcptest.PathJSON} {
		url := mcpServer(t, path, func(w http.ResponseWriter, _ *http.Request, call rpcCall) bool {
			if call.Method != "tools/call" {
				return false
			}
			hugeAnswer(w, call.ID, mcp.MaxAnswerBytes-200, path == mcptest.PathMCP, true)
			return true
		})
		s, err := c.Connect(context.Background(), domain.MCPEndpoint{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.CallTool(context.Background(), "huge", nil); err != nil || got.Text != "" {
			t.Errorf("%s: answer under the cap = %+v, %v", path, got, err)
		}
		_ = s.Close()
	}
}

// TestToolListTooLarge: pages each under the cap whose tools together pass MaxToolListBytes.
func TestToolListTooLarge(t *testing.T) {
	const perPage = 1<<20 - 1024 // four pages' JSON stay under 4 MiB, five pass it
	pages := 0
	url := mcpServer(t, mcptest.PathJSON, func(w http.ResponseWriter, _ *http.Request, call rpcCall) bool {
		if call.Method != "tools/list" {
			return false
		}
		pages++
		rpcAnswer(w, call.ID, map[string]any{
			"tools":      []any{map[string]any{"name": fmt.Sprintf("t%d", pages), "description": strings.Repeat("d", perPage), "inputSchema": map[string]any{"type": "object"}}},
			"nextCursor": fmt.Sprintf("p%d", pages),
		}, nil)
		return true
	})
	_, err := mcp.NewConnector(mcp.Options{Guard: loopback}).ListTools(context.Background(), domain.MCPEndpoint{URL: url})
	want := fmt.Sprintf("the server's tools take more than %d MiB", mcp.MaxToolListBytes>>20)
	if me := mcpError(t, err); me.Reason != want {
		t.Errorf("reason %q, want %q", me.Reason, want)
	}
	if want := 5; pages != want {
		t.Errorf("read %d pages, want %d (stopped at the first page past the cap)", pages, want)
	}
}
