package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/netguard/netguardtest"
)

// loopback is the guard of `make dev`: the loopback hosts are allowed by name, nothing else.
var loopback = netguard.Policy{AllowHosts: []string{"127.0.0.1", "localhost", "::1"}}

func startTestServer(t testing.TB) string {
	t.Helper()
	base, stop, err := mcptest.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return base
}

func mcpError(t *testing.T, err error) *domain.MCPError {
	t.Helper()
	var me *domain.MCPError
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T), want a *domain.MCPError", err, err)
	}
	return me
}

func TestListToolsFollowsPages(t *testing.T) {
	base := startTestServer(t)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	for _, path := range []string{mcptest.PathMCP, mcptest.PathJSON, mcptest.PathSSE} {
		tools, err := c.ListTools(context.Background(), domain.MCPEndpoint{URL: base + path})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		if want := len(mcptest.ToolNames) + mcptest.FillerTools; len(names) != want || want <= mcptest.PageSize {
			t.Errorf("%s: %d tools %v, want %d over several pages of %d", path, len(names), names, want, mcptest.PageSize)
		}
		for _, n := range append(slices.Clone(mcptest.ToolNames), "page-01", "page-09") {
			if !slices.Contains(names, n) {
				t.Errorf("%s: tool %q missing from %v", path, n, names)
			}
		}
		i := slices.IndexFunc(tools, func(tl domain.MCPTool) bool { return tl.Name == "echo" })
		want := domain.MCPTool{Name: "echo", Description: "Echoes the message back.", InputSchema: map[string]any{
			"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}, "required": []any{"message"}}}
		if diff := cmp.Diff(want, tools[i]); diff != "" {
			t.Errorf("%s: echo (-want +got):\n%s", path, diff)
		}
	}
}

func TestCallTool(t *testing.T) {
	base := startTestServer(t)
	c := mcp.NewConnector(mcp.Options{Guard: loopback, MaxOutput: 1000})
	for _, path := range []string{mcptest.PathMCP, mcptest.PathJSON, mcptest.PathSSE} {
		s, err := c.Connect(context.Background(), domain.MCPEndpoint{URL: base + path, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, tc := range []struct {
			tool string
			args map[string]any
			want domain.MCPResult
		}{
			{"echo", map[string]any{"message": "héllo"}, domain.MCPResult{Text: "héllo"}},
			{"fail", nil, domain.MCPResult{Text: "the tool failed on purpose", IsError: true}},
			{"image", nil, domain.MCPResult{Text: fmt.Sprintf("[image: image/png, %d bytes]", len(mcptest.PNG))}},
			{"structured", nil, domain.MCPResult{Text: `{"ok":true,"sum":3}`}},
			{"resources", nil, domain.MCPResult{Text: "see these\n\n[resource link: file:///docs/readme.md, text/markdown, readme]\n\n" +
				"[resource: mem://note, text/plain]\na note\n\n[audio: audio/wav, 12 bytes]"}},
			// 999 bytes of two-byte "é": the cap at 1000 leaves 499 of them whole.
			{"huge", map[string]any{"bytes": 2000}, domain.MCPResult{Text: strings.Repeat("é", 500), Truncated: true}},
		} {
			got, err := s.CallTool(context.Background(), tc.tool, tc.args)
			if err != nil {
				t.Errorf("%s %s: %v", path, tc.tool, err)
				continue
			}
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", path, tc.tool, diff)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: close: %v", path, err)
		}
	}
}

func TestCallToolCap(t *testing.T) {
	base := startTestServer(t)
	c := mcp.NewConnector(mcp.Options{Guard: loopback}) // the default cap
	s, err := c.Connect(context.Background(), domain.MCPEndpoint{URL: base + mcptest.PathMCP})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	got, err := s.CallTool(context.Background(), "huge", map[string]any{"bytes": 100001})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated || len(got.Text) > mcp.DefaultMaxOutput || len(got.Text) < mcp.DefaultMaxOutput-1 || !utf8.ValidString(got.Text) {
		t.Errorf("huge: %d bytes, truncated %v, valid UTF-8 %v; want cut at %d", len(got.Text), got.Truncated, utf8.ValidString(got.Text), mcp.DefaultMaxOutput)
	}
	small, err := s.CallTool(context.Background(), "huge", map[string]any{"bytes": 100})
	if err != nil || small.Truncated || len(small.Text) != 100 {
		t.Errorf("small output = %d bytes, truncated %v, %v", len(small.Text), small.Truncated, err)
	}
}

func TestTimeout(t *testing.T) {
	base := startTestServer(t)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	s, err := c.Connect(context.Background(), domain.MCPEndpoint{URL: base + mcptest.PathMCP, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The tool would answer after ten minutes and the caller allows 30 s, a generous wait: only
	// the endpoint's timeout names 300ms.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = s.CallTool(ctx, "slow", map[string]any{"ms": 600000})
	if me := mcpError(t, err); me.Reason != "timed out after 300ms" {
		t.Errorf("slow: reason %q, want a timeout after 300ms", me.Reason)
	}
	// The session survives a call that timed out.
	if got, err := s.CallTool(context.Background(), "echo", map[string]any{"message": "still here"}); err != nil || got.Text != "still here" {
		t.Errorf("echo after a timeout = %+v, %v", got, err)
	}
	// The caller's own end is not the server's timeout.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = s.CallTool(ctx, "slow", map[string]any{"ms": 600000})
	if me := mcpError(t, err); me.Reason != "the call was cancelled" {
		t.Errorf("cancelled: reason %q", me.Reason)
	}
	// Close does not wait for the cancelled call's ten minutes; 30 s is a generous wait.
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("close has not returned after 30 s")
	}
}

func TestFailures(t *testing.T) {
	base := startTestServer(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	var hits atomic.Int64
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client leave
		<-r.Context().Done()
	}))
	defer hang.Close()
	mcpHandler := mcptest.Handler()
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret-value" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer auth.Close()

	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	for _, tc := range []struct {
		name string
		ep   domain.MCPEndpoint
		want string
	}{
		{"closed port", domain.MCPEndpoint{URL: closedURL + "/mcp"}, "connection refused"},
		{"404", domain.MCPEndpoint{URL: base + mcptest.PathNotFound}, "did not answer as an MCP server (HTTP 404)"},
		{"html", domain.MCPEndpoint{URL: base + mcptest.PathHTML}, "did not answer as an MCP server (HTTP 200, text/html)"},
		{"garbage", domain.MCPEndpoint{URL: base + mcptest.PathGarbage}, "did not answer as an MCP server (HTTP 200 with an answer that is not MCP)"},
		{"hangs", domain.MCPEndpoint{URL: hang.URL + "/mcp", Timeout: 200 * time.Millisecond}, "timed out after 200ms"},
		{"wrong key", domain.MCPEndpoint{URL: auth.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer wrong-value"}},
			"the server refused the request (HTTP 401); check the headers"},
		{"not a URL", domain.MCPEndpoint{URL: "mcp.example.com/mcp"}, "the URL is not an absolute http or https URL"},
		{"scheme", domain.MCPEndpoint{URL: "ftp://127.0.0.1/mcp"}, `the address is not allowed: scheme "ftp" is not allowed; use http or https`},
		{"private", domain.MCPEndpoint{URL: "http://10.1.2.3/mcp"}, "the address is not allowed: 10.1.2.3 is a private address"},
		{"metadata", domain.MCPEndpoint{URL: "http://169.254.169.254/mcp"}, "the address is not allowed: 169.254.169.254 is a link-local address (cloud metadata lives there)"},
	} {
		_, err := c.ListTools(context.Background(), tc.ep)
		me := mcpError(t, err)
		if me.Reason != tc.want {
			t.Errorf("%s: reason %q, want %q (cause %v)", tc.name, me.Reason, tc.want, me.Err)
		}
		if strings.Contains(me.Error(), "value") || strings.Contains(me.Reason, "value") {
			t.Errorf("%s: a header value shows in %q", tc.name, me.Error())
		}
	}
	// The right key works, so the 401 above was the key's.
	if _, err := c.ListTools(context.Background(), domain.MCPEndpoint{URL: auth.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret-value"}}); err != nil {
		t.Errorf("with the right key: %v", err)
	}
}

func TestGuard(t *testing.T) {
	base := startTestServer(t)
	port := strings.TrimPrefix(base, "http://127.0.0.1:")
	// No allow-list (the AWS setting): loopback is refused before any connection.
	for _, raw := range []string{base + "/mcp", "http://localhost:" + port + "/mcp", "http://[::1]:" + port + "/mcp"} {
		_, err := mcp.NewConnector(mcp.Options{}).ListTools(context.Background(), domain.MCPEndpoint{URL: raw})
		if me := mcpError(t, err); !strings.HasPrefix(me.Reason, "the address is not allowed: ") || !errors.Is(err, netguard.ErrForbiddenDestination) {
			t.Errorf("%s: %q (%v), want refused by the guard", raw, me.Reason, me.Err)
		}
	}
	// A public-looking name that resolves to the loopback server stays refused with loopback
	// allowed by name: the check happens on the dialled address.
	g := loopback
	g.Resolver = netguardtest.Resolver(map[string]netip.Addr{"mcp.rebind.test": netip.MustParseAddr("127.0.0.1")})
	_, err := mcp.NewConnector(mcp.Options{Guard: g}).ListTools(context.Background(), domain.MCPEndpoint{URL: "http://mcp.rebind.test:" + port + "/mcp"})
	if me := mcpError(t, err); me.Reason != "the address is not allowed: 127.0.0.1 is a loopback address" {
		t.Errorf("rebinding: %q (%v)", me.Reason, me.Err)
	}
	// A redirect to a private address is refused.
	redirect := httptest.NewServer(http.RedirectHandler("http://10.0.0.1/mcp", http.StatusTemporaryRedirect))
	defer redirect.Close()
	_, err = mcp.NewConnector(mcp.Options{Guard: loopback}).ListTools(context.Background(), domain.MCPEndpoint{URL: redirect.URL + "/mcp"})
	if me := mcpError(t, err); !strings.Contains(me.Reason, "10.0.0.1 is a private address") {
		t.Errorf("redirect: %q (%v)", me.Reason, me.Err)
	}
}
