package filelock

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLockWaits: a second Lock of the same file waits until the first is released (flock locks
// belong to the open file, so two Locks of one process exclude each other as two processes do),
// and the file's directory is made on the way.
func TestLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "dir", "install.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	got := make(chan func(), 1)
	go func() {
		u, err := Lock(path)
		if err != nil {
			t.Errorf("second Lock: %v", err)
			u = func() {}
		}
		got <- u
	}()
	select {
	case u := <-got:
		u()
		t.Fatal("the second Lock returned while the first was held")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case u := <-got:
		u()
	case <-time.After(10 * time.Second):
		t.Fatal("the second Lock still waits after the first was released")
	}
}

// TestLockFails: a path that cannot be a file is an error naming it, not a lock.
func TestLockFails(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Join(file, "under-a-file.lock")} {
		if unlock, err := Lock(path); err == nil {
			unlock()
			t.Errorf("Lock(%s) took a lock, want an error", path)
		}
	}
}
