// Package webhooknpm installs and runs the official Standard Webhooks verifier (the
// standardwebhooks npm package, pinned in npm/), so that tests check deliveries with the
// specification's own library and not only with the signer's code. It is installed into
// <repo>/.cache/node-webhooks (ignored by git) by EnsureDeps, under a file lock.
package webhooknpm

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

// Package is the pinned verifier (npm/package-lock.json pins its whole tree).
const Package = "standardwebhooks@1.1.1"

//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// Dir is where the package is installed, relative to the repository root.
const Dir = ".cache/node-webhooks"

// ErrNoNPM is returned by EnsureDeps when npm or node is missing (tests skip on it, and only on it).
var ErrNoNPM = childproc.ErrNoNPM

var packages = childproc.NPMPackages{Name: Package, Dir: Dir, Files: npmFiles,
	Installed: []string{"node_modules/standardwebhooks/package.json"}, MachineNode: true}

// EnsureDeps installs the pinned package when it is missing (`npm ci` from the lockfile),
// writing npm's output to log. It is idempotent and safe to call from several test binaries.
func EnsureDeps(ctx context.Context, repoRoot string, log io.Writer) error {
	return packages.Ensure(ctx, repoRoot, log)
}

// verifyJS reads {secret, headers, body} on stdin and verifies them with the library:
// `new Webhook(secret).verify(body, headers)`, which checks the timestamp's tolerance (5
// minutes) and any one of the signatures. It prints the parsed payload, or exits 1 with the
// library's error.
const verifyJS = `
const { Webhook } = require("standardwebhooks");
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const { secret, headers, body } = JSON.parse(input);
  try {
    const payload = new Webhook(secret).verify(body, headers);
    process.stdout.write(JSON.stringify(payload));
  } catch (e) {
    process.stderr.write(String(e && e.message ? e.message : e));
    process.exit(1);
  }
});
`

// Verify checks one delivery with the official library: secret as the API showed it
// (whsec_…), the request's headers and its raw body. It returns the payload the library parsed,
// or the library's refusal.
func Verify(ctx context.Context, repoRoot, secret string, headers map[string]string, body []byte) (json.RawMessage, error) {
	in, err := json.Marshal(map[string]any{"secret": secret, "headers": headers, "body": string(body)})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "-e", verifyJS)
	cmd.Dir = filepath.Join(repoRoot, Dir) // require resolves from here for -e
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("standardwebhooks refused the delivery: %s (%w)", strings.TrimSpace(stderr.String()), err)
	}
	return out.Bytes(), nil
}
