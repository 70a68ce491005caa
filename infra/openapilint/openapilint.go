// Package openapilint runs two independent validators over the OpenAPI document: Redocly CLI's
// lint (recommended rules, configured by redocly.yaml at the repository root) and
// @seriousme/openapi-schema-validator (the document against the official OpenAPI 3.1 JSON
// schema). Both are npm packages, pinned with their lockfile in npm/ and installed into
// <repoRoot>/.cache/openapilint, like the stand-ins of infra/localstack.
package openapilint

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentorch/agentorch/shared/filelock"
)

// Pinned versions of the validators (npm/package.json and its lockfile say the same).
const (
	RedoclyPackage   = "@redocly/cli@2.77.0"
	ValidatorPackage = "@seriousme/openapi-schema-validator@2.11.0"
)

// DocPath is the OpenAPI document, relative to the repository root.
const DocPath = "shared/api/openapi/openapi.yaml"

//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// installDir is where the validators are installed, relative to the repository root (ignored by git).
const installDir = ".cache/openapilint"

// ErrNoNode reports that node or npm is missing, so the validators cannot run here.
var ErrNoNode = errors.New("openapilint: node and npm are required (Node 20.19 or later)")

// Ensure installs the pinned validators into <repoRoot>/.cache/openapilint unless that directory
// already holds exactly the pinned package.json and both programs. Installer output goes to log.
func Ensure(ctx context.Context, repoRoot string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return ErrNoNode
		}
	}
	prefix := filepath.Join(repoRoot, installDir)
	want, err := npmFiles.ReadFile("npm/package.json")
	if err != nil {
		return err
	}
	installed := func() bool {
		got, err := os.ReadFile(filepath.Join(prefix, "package.json"))
		return err == nil && bytes.Equal(got, want) && exists(redoclyCLI(repoRoot)) && exists(validatorCLI(repoRoot))
	}
	if installed() {
		return nil
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return fmt.Errorf("openapilint: %w", err)
	}
	// Several test binaries may get here at once on a fresh clone.
	unlock, err := filelock.Lock(filepath.Join(prefix, "install.lock"))
	if err != nil {
		return fmt.Errorf("openapilint: %w", err)
	}
	defer unlock()
	if installed() {
		return nil
	}
	_, _ = fmt.Fprintf(log, "openapilint: installing %s and %s into %s\n", RedoclyPackage, ValidatorPackage, prefix)
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := npmFiles.ReadFile("npm/" + name)
		if err != nil {
			return fmt.Errorf("openapilint: %w", err)
		}
		if err := os.WriteFile(filepath.Join(prefix, name), b, 0o644); err != nil {
			return fmt.Errorf("openapilint: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--prefix", prefix)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("openapilint: npm ci: %w", err)
	}
	if !installed() {
		return fmt.Errorf("openapilint: npm ci finished but the validators are not under %s", prefix)
	}
	return nil
}

// Problem is one finding of a validator.
type Problem struct {
	Rule     string // Redocly rule id, or the JSON schema keyword
	Severity string // "error" or "warn"
	Message  string
	Where    string // JSON pointer into the document, with its line when known
}

// String is the problem on one line, for test logs.
func (p Problem) String() string {
	return fmt.Sprintf("%s %s: %s (%s)", p.Severity, p.Rule, p.Message, p.Where)
}

// Redocly lints doc (a path relative to repoRoot, or absolute; usually DocPath) with the
// configuration in <repoRoot>/redocly.yaml and returns every problem it reports, errors and
// warnings.
func Redocly(ctx context.Context, repoRoot, doc string) ([]Problem, error) {
	cmd := exec.CommandContext(ctx, "node", redoclyCLI(repoRoot), "lint", "--format=json",
		"--config", filepath.Join(repoRoot, "redocly.yaml"), doc)
	cmd.Dir = repoRoot
	// No telemetry, no update check: the lint must not depend on the network.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run() // non-zero when it found errors; the JSON report says which
	var out struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
				Start   struct {
					Line int `json:"line"`
				} `json:"start"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("redocly lint: no JSON report (%w): %w\n%s", runErr, err, clip(stderr.String()))
	}
	problems := make([]Problem, 0, len(out.Problems))
	for _, p := range out.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = fmt.Sprintf("%s, line %d", p.Location[0].Pointer, p.Location[0].Start.Line)
		}
		problems = append(problems, Problem{Rule: p.RuleID, Severity: p.Severity, Message: p.Message, Where: where})
	}
	if out.Totals.Errors > 0 && Errors(problems) == 0 {
		return problems, fmt.Errorf("redocly lint: %d errors counted but none listed", out.Totals.Errors)
	}
	return problems, nil
}

// SchemaValidator checks doc (relative to repoRoot, or absolute) against the OpenAPI JSON schema
// of its version and returns its errors (none when it is valid).
func SchemaValidator(ctx context.Context, repoRoot, doc string) ([]Problem, error) {
	cmd := exec.CommandContext(ctx, "node", validatorCLI(repoRoot), doc)
	cmd.Dir = repoRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run() // exits 1 when the document is invalid
	var out struct {
		Valid  bool            `json:"valid"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("openapi-schema-validator: no JSON report (%w): %w\n%s", runErr, err, clip(stderr.String()))
	}
	if out.Valid {
		return nil, nil
	}
	var list []struct {
		InstancePath string `json:"instancePath"`
		Keyword      string `json:"keyword"`
		Message      string `json:"message"`
		Params       any    `json:"params"`
	}
	if err := json.Unmarshal(out.Errors, &list); err != nil {
		// A document it could not read: errors is a string.
		var msg string
		_ = json.Unmarshal(out.Errors, &msg)
		return []Problem{{Rule: "read", Severity: "error", Message: msg}}, nil
	}
	problems := make([]Problem, 0, len(list))
	for _, e := range list {
		params, _ := json.Marshal(e.Params)
		problems = append(problems, Problem{Rule: e.Keyword, Severity: "error", Message: e.Message + " " + string(params), Where: e.InstancePath})
	}
	if len(problems) == 0 {
		problems = append(problems, Problem{Rule: "schema", Severity: "error", Message: "invalid, without details"})
	}
	return problems, nil
}

// Errors counts the problems of severity error.
func Errors(problems []Problem) int {
	n := 0
	for _, p := range problems {
		if p.Severity == "error" {
			n++
		}
	}
	return n
}

func redoclyCLI(repoRoot string) string {
	return filepath.Join(repoRoot, installDir, "node_modules", "@redocly", "cli", "bin", "cli.js")
}

func validatorCLI(repoRoot string) string {
	return filepath.Join(repoRoot, installDir, "node_modules", "@seriousme", "openapi-schema-validator", "bin", "validate-api-cli.js")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
