package npmpack

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func integrityOf(b []byte) string {
	sum := sha512.Sum512(b)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func TestVerify(t *testing.T) {
	tgz := []byte("a tarball's bytes")
	good := integrityOf(tgz)
	for _, tc := range []struct {
		name      string
		tgz       []byte
		integrity string
		want      string // in the error; "" for none
	}{
		{"matches", tgz, good, ""},
		{"one byte changed", []byte("a tarball's byteS"), good, "integrity"},
		{"sha1", tgz, "sha1-abc", "not sha512"},
		{"empty integrity", tgz, "", "not sha512"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.tgz, tc.integrity)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify: %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// fakeNPM puts on PATH an npm whose `pack` copies tgz into its --pack-destination (the registry
// is not what these tests check) and counts its calls in the returned file.
func fakeNPM(t *testing.T, tgz []byte) (calls string) {
	t.Helper()
	bin := t.TempDir()
	src := filepath.Join(bin, "pkg-1.0.0.tgz.src")
	if err := os.WriteFile(src, tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	calls = filepath.Join(bin, "calls")
	script := "#!/bin/sh\necho >> '" + calls + "'\nwhile [ $# -gt 0 ]; do\n" +
		"  if [ \"$1\" = --pack-destination ]; then cp '" + src + "' \"$2/pkg-1.0.0.tgz\"; fi\n  shift\ndone\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

func callCount(t *testing.T, calls string) int {
	t.Helper()
	b, err := os.ReadFile(calls)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// writeTarball is a build that keeps the tarball as one file.
func writeTarball(tgz []byte, dest string) error {
	return os.WriteFile(filepath.Join(dest, "data"), tgz, 0o644)
}

// TestEnsure: the first caller packs, verifies and builds, concurrent callers wait and find the
// directory done (one npm call), and a later call costs no npm at all.
func TestEnsure(t *testing.T) {
	tgz := []byte("the package")
	calls := fakeNPM(t, tgz)
	cache := t.TempDir()
	var wg sync.WaitGroup
	dirs := make([]string, 4)
	errs := make([]error, 4)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = Ensure(context.Background(), cache, "pkg-1", "pkg@1.0.0", integrityOf(tgz), writeTarball)
		}()
	}
	wg.Wait()
	want := filepath.Join(cache, "pkg-1")
	for i := range dirs {
		if errs[i] != nil || dirs[i] != want {
			t.Fatalf("Ensure %d = %q, %v; want %q", i, dirs[i], errs[i], want)
		}
	}
	if got, err := os.ReadFile(filepath.Join(want, "data")); err != nil || string(got) != string(tgz) {
		t.Errorf("built file = %q, %v", got, err)
	}
	if n := callCount(t, calls); n != 1 {
		t.Errorf("npm ran %d times, want 1", n)
	}
	t.Setenv("PATH", "")
	if dir, err := Ensure(context.Background(), cache, "pkg-1", "pkg@1.0.0", integrityOf(tgz), writeTarball); err != nil || dir != want {
		t.Errorf("Ensure of a finished cache without npm = %q, %v", dir, err)
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "fetch-") {
			t.Errorf("temporary %s left in the cache", e.Name())
		}
	}
}

// TestEnsureLeavesNothingOnFailure: a tarball that does not verify is never built, and a build
// that fails leaves no directory; either way the next call tries again.
func TestEnsureLeavesNothingOnFailure(t *testing.T) {
	tgz := []byte("the package")
	calls := fakeNPM(t, tgz)
	cache := t.TempDir()
	built := false
	_, err := Ensure(context.Background(), cache, "pkg-1", "pkg@1.0.0", integrityOf([]byte("another")), func([]byte, string) error {
		built = true
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "integrity") || built {
		t.Fatalf("Ensure of a tarball that does not verify: %v (built %v), want an integrity error and no build", err, built)
	}
	_, err = Ensure(context.Background(), cache, "pkg-1", "pkg@1.0.0", integrityOf(tgz), func(_ []byte, dest string) error {
		if err := os.WriteFile(filepath.Join(dest, "half"), nil, 0o644); err != nil {
			return err
		}
		return errors.New("no room")
	})
	if err == nil || !strings.Contains(err.Error(), "no room") {
		t.Fatalf("Ensure with a failing build: %v", err)
	}
	if exists(filepath.Join(cache, "pkg-1")) {
		t.Error("a failed build left its directory")
	}
	if _, err := Ensure(context.Background(), cache, "pkg-1", "pkg@1.0.0", integrityOf(tgz), writeTarball); err != nil {
		t.Fatalf("Ensure after the failures: %v", err)
	}
	if n := callCount(t, calls); n != 3 {
		t.Errorf("npm ran %d times, want 3 (each failure tries again)", n)
	}
}

// TestEnsureWithoutNPM: an empty cache and no npm fail with an error that names npm.
func TestEnsureWithoutNPM(t *testing.T) {
	t.Setenv("PATH", "")
	_, err := Ensure(context.Background(), t.TempDir(), "pkg-1", "pkg@1.0.0", "sha512-x", writeTarball)
	if err == nil || !strings.Contains(err.Error(), "npm") {
		t.Fatalf("Ensure without npm: %v, want an error naming npm", err)
	}
}
