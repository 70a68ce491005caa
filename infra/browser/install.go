// Package browser starts headless Chromium for the tests that drive the studio in a real browser:
// it installs Chromium from Debian's packages when it is missing (as infra/localstack installs
// Java), and opens a chromedp context with the flags this kind of machine needs, recording the
// page's console errors, CSP violations and JavaScript dialogs so a test can assert that none
// happened.
package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentorch/agentorch/infra/childproc"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/filelock"
)

// Package is the Debian package that carries Chromium.
const Package = "chromium"

// candidates are the names Chromium goes by on Debian, Ubuntu and with Google's package, tried
// in order on the PATH and then in /usr/bin.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ErrNotInstalled says Chromium is missing and could not be installed here (not root, or no
// apt-get); the message says what to install.
var ErrNotInstalled = errors.New("chromium is not installed")

// Find returns the path of an installed Chromium, or ErrNotInstalled.
func Find() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%w: CHROMIUM=%s is not an executable file", ErrNotInstalled, p)
	}
	for _, name := range candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		if p := filepath.Join("/usr/bin", name); isExecutable(p) {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// EnsureChromium returns the path of Chromium, installing Debian's package with apt-get when it
// is missing and this process runs as root. The install runs under the repository's install lock
// (.cache/install.lock, the one the stand-ins' installs take), so that test binaries started at
// once install it only once. The installer's output goes to log.
func EnsureChromium(ctx context.Context, log io.Writer) (string, error) {
	if p, err := Find(); err == nil || os.Getenv("CHROMIUM") != "" {
		return p, err
	}
	if log == nil {
		log = io.Discard
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%w and this is not root: install Debian's package (apt-get install -y %s) or set CHROMIUM to a Chromium or Chrome binary", ErrNotInstalled, Package)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", fmt.Errorf("%w and there is no apt-get: install Chromium or set CHROMIUM to its binary", ErrNotInstalled)
	}
	lock := filepath.Join(os.TempDir(), "agentorch-install.lock")
	if root, err := localstack.RepoRoot(); err == nil {
		lock = filepath.Join(root, ".cache", "install.lock")
	}
	unlock, err := filelock.Lock(lock)
	if err != nil {
		return "", fmt.Errorf("install chromium: %w", err)
	}
	defer unlock()
	// Another process may have installed it while this one waited for the lock.
	if p, err := Find(); err == nil {
		return p, nil
	}
	_, _ = fmt.Fprintf(log, "browser: installing %s with apt-get\n", Package)
	// The package lists may be missing or stale on a fresh machine; a failed update is not fatal
	// when the install finds the package all the same.
	if err := childproc.Run(ctx, log, "apt-get", "update"); err != nil {
		_, _ = fmt.Fprintf(log, "browser: apt-get update failed (%v); trying the install anyway\n", err)
	}
	if err := childproc.Run(ctx, log, "apt-get", "install", "-y", "--no-install-recommends", Package); err != nil {
		return "", fmt.Errorf("install chromium: %w", err)
	}
	p, err := Find()
	if err != nil {
		return "", fmt.Errorf("install chromium: apt-get installed %s but no binary was found: %w", Package, err)
	}
	return p, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
