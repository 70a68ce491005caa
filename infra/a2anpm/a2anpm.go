// Package a2anpm installs and runs the official A2A JavaScript client (@a2a-js/sdk, pinned in
// npm/), so that tests check the A2A endpoints with a client the project did not write. It is
// installed into <repo>/.cache/node-a2a (ignored by git) by EnsureDeps, under a file lock.
package a2anpm

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentorch/agentorch/infra/childproc"
)

// Package is the pinned client (npm/package-lock.json pins its whole tree): the 0.3 line, which
// speaks the protocol version a2a-go v0.3 serves.
const Package = "@a2a-js/sdk@0.3.14"

//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// tourJS is the client's tour of an agent (client.cjs says what it does).
//
//go:embed client.cjs
var tourJS string

// Dir is where the package is installed, relative to the repository root.
const Dir = ".cache/node-a2a"

// ErrNoNPM is returned by EnsureDeps when npm or node is missing (tests skip on it, and only on it).
var ErrNoNPM = childproc.ErrNoNPM

var packages = childproc.NPMPackages{Name: Package, Dir: Dir, Files: npmFiles,
	Installed: []string{"node_modules/@a2a-js/sdk/package.json"}, MachineNode: true}

// EnsureDeps installs the pinned package when it is missing (`npm ci` from the lockfile),
// writing npm's output to log. It is idempotent and safe to call from several test binaries.
func EnsureDeps(ctx context.Context, repoRoot string, log io.Writer) error {
	return packages.Ensure(ctx, repoRoot, log)
}

// Tour is what the client's tour asks of the server: its base URL (scheme, host), an API key, an
// agent that answers (agent) and one that pauses on a client function tool "lookup" (toolAgent).
type Tour struct {
	Base      string `json:"base"`
	Key       string `json:"key"`
	Agent     string `json:"agent"`
	ToolAgent string `json:"toolAgent"`
	// PushURL, when set, is where the tour asks its finished task to be pushed.
	PushURL string `json:"pushUrl,omitempty"`
}

// Run runs the tour with the official client and answers what each call answered, as JSON
// (client.cjs), or the client's failure.
func Run(ctx context.Context, repoRoot string, t Tour) (json.RawMessage, error) {
	in, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "-e", tourJS)
	cmd.Dir = filepath.Join(repoRoot, Dir) // require resolves from here for -e
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("@a2a-js/sdk tour failed: %s (%w)", strings.TrimSpace(stderr.String()), err)
	}
	return out.Bytes(), nil
}
