package openapilint_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/openapilint"
)

// ensure installs the validators, or skips where node and npm are missing.
func ensure(t *testing.T) (context.Context, string) {
	t.Helper()
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	if err := openapilint.Ensure(ctx, root, os.Stderr); errors.Is(err, openapilint.ErrNoNode) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	return ctx, root
}

// TestValidatorsFindErrors shows that the check can fail: a document without servers is a
// Redocly error under the repository's configuration, and one without info.version is invalid
// for the schema validator. A document with both passes both.
func TestValidatorsFindErrors(t *testing.T) {
	ctx, root := ensure(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const good = `openapi: 3.1.0
info: {title: t, version: "1", license: {name: MIT, identifier: MIT}}
servers: [{url: "http://127.0.0.1:3000"}]
security: []
paths:
  /x/:
    get:
      operationId: getX
      summary: x
      responses:
        "200": {description: ok}
        "404": {description: not found}
`
	noServers := write("no-servers.yaml", `openapi: 3.1.0
info: {title: t, version: "1", license: {name: MIT, identifier: MIT}}
security: []
paths:
  /x/:
    get:
      operationId: getX
      summary: x
      responses:
        "200": {description: ok}
        "404": {description: not found}
`)
	problems, err := openapilint.Redocly(ctx, root, noServers)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(problems, func(p openapilint.Problem) bool { return p.Rule == "no-empty-servers" && p.Severity == "error" }) {
		t.Errorf("redocly on a document without servers: %v, want a no-empty-servers error", problems)
	}
	noVersion := write("no-version.yaml", "openapi: 3.1.0\ninfo: {title: t}\npaths: {}\n")
	if problems, err := openapilint.SchemaValidator(ctx, root, noVersion); err != nil || openapilint.Errors(problems) == 0 {
		t.Errorf("schema validator on a document without info.version: %v %v, want errors", problems, err)
	}

	ok := write("good.yaml", good)
	if problems, err := openapilint.Redocly(ctx, root, ok); err != nil || openapilint.Errors(problems) != 0 {
		t.Errorf("redocly on a good document: %v %v", problems, err)
	}
	if problems, err := openapilint.SchemaValidator(ctx, root, ok); err != nil || len(problems) != 0 {
		t.Errorf("schema validator on a good document: %v %v", problems, err)
	}
}
