// Package filelock holds an exclusive lock on a file across processes (flock(2)): the installs
// and downloads into .cache that several test binaries, the dev server and the tools may start
// at once take it, so that one of them does the work and the others wait and find it done.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes an exclusive lock on path, creating the file and its directory if need be, and
// waits while another process (or another Lock of this one) holds it. The lock lasts until unlock
// is called or the process ends.
func Lock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, errors.Join(fmt.Errorf("lock %s: %w", path, err), f.Close())
	}
	// Closing the descriptor releases the lock whatever Close reports (nothing was written, so
	// nothing can be lost), hence no error to return.
	return func() { _ = f.Close() }, nil
}
