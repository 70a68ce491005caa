package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/agentorch/agentorch/infra/browser"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/embeddings/local"
)

// runTests starts a stack on free ports, runs go test with args against it and returns go test's
// exit status.
func runTests(ctx context.Context, args []string) int {
	if len(args) == 0 {
		args = []string{"-count=1", "./..."}
	}
	root, err := localstack.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test:", err)
		return 1
	}
	if err := localstack.EnsureDeps(ctx, root, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "test:", err)
		return 1
	}
	// The studio's tests drive Chromium; installed here, once, rather than by the first of the
	// test binaries that wants it (they would wait on each other's apt-get under the lock).
	if _, err := browser.EnsureChromium(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "test:", err)
		return 1
	}
	// The local embedding models' files likewise (use-lite, and the GloVe vectors of the default
	// use-lite-glove: a 118 MB fetch the first time), before any test's own deadline runs. A
	// failed fetch is only told: the tests that need a model skip or fail on their own.
	models := filepath.Join(root, ".cache", "models")
	if err := local.EnsureFiles(ctx, models); err != nil {
		fmt.Fprintln(os.Stderr, "test: the local embedding models:", err)
	}
	st, err := localstack.Start(ctx, localstack.Options{Root: root, Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "test:", err)
		return 1
	}
	defer func() { _ = st.Stop() }()
	localstack.ExportTestEndpoints(st.Endpoints())

	cmd := exec.Command("go", append([]string{"test"}, args...)...)
	cmd.Dir = root
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "test:", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// A terminal's Ctrl-C reached go test too; a SIGTERM sent to us alone is passed on.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err = <-done
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "test: go test:", err)
		return 1
	}
}
