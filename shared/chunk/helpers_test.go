package chunk

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/filelock"
)

// refCase is one split LangChain.js is asked for (see testdata/reference/dump.mjs).
type refCase struct {
	Text       int      `json:"text"`
	Size       int      `json:"chunk_size"`
	Overlap    int      `json:"chunk_overlap"`
	Separators []string `json:"separators"` // nil: LangChain's default
	SplitBy    string   `json:"split_by"`
}

type refRequest struct {
	Texts []string  `json:"texts"`
	Cases []refCase `json:"cases,omitempty"`
	Bench *refCase  `json:"bench,omitempty"`
}

type refResponse struct {
	Chunks [][]string `json:"chunks"`
	Node   string     `json:"node"`
}

// runReference sends req to dump.mjs in one Node process.
func runReference(tb testing.TB, req refRequest) refResponse {
	tb.Helper()
	prefix := referenceDir(tb)
	in, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(prefix, "dump.mjs"))
	cmd.Dir = prefix
	cmd.Stdin = bytes.NewReader(append(in, '\n'))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node dump.mjs: %v\n%s", err, stderr.String())
	}
	var resp refResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		tb.Fatalf("node dump.mjs answered %.200q: %v", out, err)
	}
	if len(resp.Chunks) != len(req.Cases) {
		tb.Fatalf("node dump.mjs answered %d cases of %d", len(resp.Chunks), len(req.Cases))
	}
	return resp
}

// benchReference starts dump.mjs on one split and returns a function that has it split the
// text n times and waits until it has; the split runs warm (the script warms it up first).
func benchReference(tb testing.TB, text string, c refCase) func(n int) {
	tb.Helper()
	prefix := referenceDir(tb)
	in, err := json.Marshal(refRequest{Texts: []string{text}, Bench: &c})
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(prefix, "dump.mjs"))
	cmd.Dir = prefix
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			tb.Errorf("node dump.mjs: %v\n%s", err, stderr.String())
		}
	})
	answers := bufio.NewScanner(stdout)
	expect := func(want string) {
		if !answers.Scan() || answers.Text() != want {
			tb.Fatalf("node dump.mjs answered %q, want %q: %v\n%s", answers.Text(), want, answers.Err(), stderr.String())
		}
	}
	if _, err := stdin.Write(append(in, '\n')); err != nil {
		tb.Fatal(err)
	}
	expect("ready")
	return func(n int) {
		if _, err := fmt.Fprintf(stdin, "%d\n", n); err != nil {
			tb.Fatal(err)
		}
		expect("done")
	}
}

// referenceDir installs LangChain.js (testdata/reference, pinned by its package-lock.json) into
// .cache/chunk-reference with `npm ci` unless the same lockfile is installed there, and copies
// dump.mjs beside it. Without node and npm the test fails and says so: CI has them.
func referenceDir(tb testing.TB) string {
	tb.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			tb.Fatalf("the LangChain.js reference needs Node.js 18+ with npm on PATH (%s: %v); CI has them, install them to run this test", tool, err)
		}
	}
	prefix := filepath.Join(repoRoot(tb), ".cache", "chunk-reference")
	lock, err := os.ReadFile("testdata/reference/package-lock.json")
	if err != nil {
		tb.Fatal(err)
	}
	installed := func() bool {
		got, err := os.ReadFile(filepath.Join(prefix, "package-lock.json"))
		_, statErr := os.Stat(filepath.Join(prefix, "node_modules", "@langchain", "textsplitters", "dist", "text_splitter.js"))
		return err == nil && bytes.Equal(got, lock) && statErr == nil
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		tb.Fatal(err)
	}
	unlock, err := filelock.Lock(prefix + ".lock") // concurrent test binaries install once
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
			tb.Fatalf("npm ci of the LangChain.js reference into %s: %v\n%s", prefix, err, out)
		}
	}
	copyFile(tb, filepath.Join("testdata", "reference", "dump.mjs"), filepath.Join(prefix, "dump.mjs"))
	return prefix
}

// repoRoot is the nearest directory at or above the working directory that holds go.mod.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod at or above the working directory")
		}
		dir = parent
	}
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

// persuasion is Jane Austen's Persuasion (testdata/persuasion.txt, see testdata/README.md).
func persuasion(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile("testdata/persuasion.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// mustNew builds a splitter or fails the test.
func mustNew(tb testing.TB, size, overlap int, splitBy string, seps []string) *Splitter {
	tb.Helper()
	s, err := New(chunking(size, overlap, splitBy, seps))
	if err != nil {
		tb.Fatalf("New(%d, %d, %q, %q): %v", size, overlap, splitBy, seps, err)
	}
	return s
}
