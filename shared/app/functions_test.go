package app_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
)

// TestOneFunctionTable: template.yaml's functions, app.Functions and the mains under functions/
// agree: each template function has a table entry of the right kind (routes: HTTP; SQS events:
// a queue consumer), each entry a template function, and each main calls the table's builder with
// the providers the table names (secrets.Manager, the MCP connector).
func TestOneFunctionTable(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := sam.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inTemplate := map[string]bool{}
	for _, fn := range tmpl.Functions() {
		inTemplate[fn.Dir] = true
		f, ok := app.Lookup(fn.Dir)
		switch {
		case !ok:
			t.Errorf("template.yaml function %s (functions/%s) is not in app.Functions", fn.LogicalID, fn.Dir)
		case len(fn.Routes)+len(fn.Fallbacks) > 0 && f.HTTP == nil:
			t.Errorf("%s has routes but app.Functions gives functions/%s no HTTP builder", fn.LogicalID, fn.Dir)
		case len(fn.SQSEvents) > 0 && f.SQS == nil:
			t.Errorf("%s consumes a queue but app.Functions gives functions/%s no SQS builder", fn.LogicalID, fn.Dir)
		}
	}
	call := regexp.MustCompile(`core\.Main(HTTPStream|HTTP|SQS)\((\w+)\.(\w+)(, secrets\.Manager)?(, core\.WithMCP\(mcp\.ForPolicy\))?\)`)
	streams := map[string]bool{}
	for _, fn := range tmpl.Functions() {
		streams[fn.Dir] = fn.Streams()
	}
	for _, f := range app.Functions {
		if !inTemplate[f.Dir] {
			t.Errorf("app.Functions has %s, which template.yaml does not deploy", f.Dir)
		}
		src, err := os.ReadFile(filepath.Join(root, "functions", f.Dir, "main.go"))
		if err != nil {
			t.Errorf("functions/%s: %v", f.Dir, err)
			continue
		}
		m := call.FindStringSubmatch(string(src))
		if m == nil {
			t.Errorf("functions/%s/main.go calls none of core.MainHTTP, core.MainHTTPStream and core.MainSQS with a builder", f.Dir)
			continue
		}
		if withSecrets := m[4] != ""; withSecrets != f.Secrets {
			t.Errorf("functions/%s/main.go: secrets.Manager passed %v, app.Functions says Secrets %v", f.Dir, withSecrets, f.Secrets)
		}
		if withMCP := m[5] != ""; withMCP != f.MCP {
			t.Errorf("functions/%s/main.go: core.WithMCP passed %v, app.Functions says MCP %v", f.Dir, withMCP, f.MCP)
		}
		// A function behind a streaming function URL answers through core.MainHTTPStream.
		if stream := m[1] == "HTTPStream"; stream != f.Stream || stream != streams[f.Dir] {
			t.Errorf("functions/%s/main.go uses core.Main%s; app.Functions says Stream %v, template.yaml streams %v", f.Dir, m[1], f.Stream, streams[f.Dir])
		}
		var builder any = f.HTTP
		if m[1] == "SQS" {
			builder = f.SQS
		}
		v := reflect.ValueOf(builder)
		if v.IsNil() {
			t.Errorf("functions/%s/main.go uses core.Main%s, but the table has no %s builder for it", f.Dir, m[1], m[1])
			continue
		}
		if name := runtime.FuncForPC(v.Pointer()).Name(); !strings.HasSuffix(name, "/app/"+m[2]+"."+m[3]) {
			t.Errorf("functions/%s/main.go builds with %s.%s, the table with %s", f.Dir, m[2], m[3], name)
		}
	}
}
