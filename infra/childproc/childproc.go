// Package childproc holds what the local tooling needs to run child processes: their own
// process group (stopped with everything they spawn), the tail of their output for errors, and
// running the installers of what the tooling needs (npm, apt-get).
package childproc

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Tail keeps the last Max bytes written to it: a child's output, for error messages.
type Tail struct {
	mu  sync.Mutex
	Max int
	buf []byte
}

// Write keeps p, dropping the oldest bytes beyond Max.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is the kept output.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Run runs a command to completion with its output going to log (apt-get without questions).
func Run(ctx context.Context, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// WriteNPMManifest writes the pinned package.json and package-lock.json under npm/ of files
// into prefix, where `npm ci --prefix` installs exactly what they pin.
func WriteNPMManifest(files fs.FS, prefix string) error {
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := fs.ReadFile(files, "npm/"+name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(prefix, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
