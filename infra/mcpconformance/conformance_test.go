package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/mcpnpm"
)

// TestConformance runs the official MCP client conformance suite, on Node 22 from the pinned
// npm packages, against this command built once.
func TestConformance(t *testing.T) {
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
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpconformance")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, scenario := range []string{"initialize", "tools_call", "sse-retry"} {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.CommandContext(ctx, mcpnpm.Node(root), mcpnpm.ConformanceCLI(root), "client",
				"--command", bin, "--scenario", scenario, "-o", filepath.Join(dir, "results-"+scenario))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+mcpnpm.BinDir(root)+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance %s failed: %v\n%s", scenario, err, out)
			}
			if !strings.Contains(string(out), "Passed:") || strings.Contains(string(out), "FAILURE") {
				t.Errorf("conformance %s output does not report a pass:\n%s", scenario, out)
			}
			t.Logf("%s:\n%s", scenario, out)
		})
	}
}
