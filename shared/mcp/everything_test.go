package mcp_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/mcpnpm"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// startEverything starts the real @modelcontextprotocol/server-everything; the test is skipped
// only when npm itself is missing.
func startEverything(t *testing.T) string {
	t.Helper()
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := mcpnpm.EnsureDeps(context.Background(), root, os.Stderr); errors.Is(err, mcpnpm.ErrNoNPM) {
		t.Skip("npm is not installed:", err)
	} else if err != nil {
		t.Fatal(err)
	}
	url, stop, err := mcpnpm.StartEverything(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

func TestEverythingServer(t *testing.T) {
	url := startEverything(t)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	ep := domain.MCPEndpoint{URL: url}
	tools, err := c.ListTools(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"echo", "get-sum", "get-tiny-image"} {
		if !slices.Contains(names, want) {
			t.Errorf("tool %q missing from %v", want, names)
		}
	}
	s, err := c.Connect(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"message": "hi there"}, "Echo: hi there"},
		{"get-sum", map[string]any{"a": 2, "b": 40}, "The sum of 2 and 40 is 42."},
	} {
		got, err := s.CallTool(context.Background(), tc.tool, tc.args)
		if err != nil || got.Text != tc.want || got.IsError {
			t.Errorf("%s = %+v, %v; want %q", tc.tool, got, err, tc.want)
		}
	}
	img, err := s.CallTool(context.Background(), "get-tiny-image", nil)
	if err != nil || !strings.Contains(img.Text, "[image: image/png, ") {
		t.Errorf("get-tiny-image = %+v, %v; want the image summarised", img, err)
	}
}
