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

// scenarios are the client scenarios run: every one dated 2025-11-25 or earlier that the
// service's client meets, the auth/* ones included, and the draft and extension auth ones it
// passes. Not run: auth/cross-app-access-complete-flow (token exchange with an enterprise
// identity provider, an extension the service does not offer).
var scenarios = []string{"initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults",
	"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
	"auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
	"auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
	// draft and extension
	"auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
	"auth/client-credentials-basic", "auth/client-credentials-jwt",
}

// TestConformance runs the official MCP client conformance suite, on Node 22 from the pinned
// npm packages, against this command built once.
func TestConformance(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // 25 scenarios on a loaded machine; go test stops a package at 10
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
	run := func(t *testing.T, scenario string) {
		cmd := exec.CommandContext(ctx, mcpnpm.Node(root), mcpnpm.ConformanceCLI(root), "client",
			"--command", bin, "--scenario", scenario, "-o", filepath.Join(dir, "results-"+strings.ReplaceAll(scenario, "/", "-")))
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
	}
	for _, scenario := range scenarios {
		if !strings.HasPrefix(scenario, "auth/") {
			t.Run(scenario, func(t *testing.T) { run(t, scenario) }) // alone: sse-retry measures the client's timing
		}
	}
	// The auth scenarios measure no timing: they run side by side (go test's -parallel).
	t.Run("auth", func(t *testing.T) {
		for _, scenario := range scenarios {
			if strings.HasPrefix(scenario, "auth/") {
				t.Run(strings.TrimPrefix(scenario, "auth/"), func(t *testing.T) {
					t.Parallel()
					run(t, scenario)
				})
			}
		}
	})
}
