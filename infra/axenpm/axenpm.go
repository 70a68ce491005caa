// Package axenpm installs axe-core (pinned in npm/), the accessibility checker the studio's
// browser tests inject into the page, so that they assert on its findings of every impact rather
// than on a figure measured by hand. It is installed into <repo>/.cache/node-axe (ignored by git)
// by EnsureDeps, under a file lock; it needs npm but not node (the script runs in Chromium).
package axenpm

import (
	"context"
	"embed"
	"io"
	"os"
	"path/filepath"

	"github.com/agentorch/agentorch/infra/childproc"
)

// Package is the pinned checker (npm/package-lock.json pins it).
const Package = "axe-core@4.14.1"

//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// Dir is where the package is installed, relative to the repository root.
const Dir = ".cache/node-axe"

// script is the checker's browser build, relative to Dir.
const script = "node_modules/axe-core/axe.min.js"

// ErrNoNPM is returned by EnsureDeps when npm is missing.
var ErrNoNPM = childproc.ErrNoNPM

var packages = childproc.NPMPackages{Name: Package, Dir: Dir, Files: npmFiles, Installed: []string{script}}

// EnsureDeps installs the pinned package when it is missing (`npm ci` from the lockfile),
// writing npm's output to log. It is idempotent and safe to call from several test binaries.
func EnsureDeps(ctx context.Context, repoRoot string, log io.Writer) error {
	return packages.Ensure(ctx, repoRoot, log)
}

// Script returns the checker's browser build (it defines window.axe when evaluated in a page),
// installing it first when it is missing.
func Script(ctx context.Context, repoRoot string, log io.Writer) (string, error) {
	if err := EnsureDeps(ctx, repoRoot, log); err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, Dir, script))
	return string(b), err
}
