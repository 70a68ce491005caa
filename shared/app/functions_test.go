package app_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/platform"
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
		case (len(fn.Schedules) > 0) != (f.Schedule != nil):
			t.Errorf("%s has schedules %v, but app.Functions gives functions/%s schedule builder %v", fn.LogicalID, fn.Schedules, fn.Dir, f.Schedule != nil)
		}
	}
	call := regexp.MustCompile(`core\.Main(HTTPStream|HTTP|SQS|Schedule)\((\w+)\.(\w+)(, secrets\.Manager)?(, core\.WithMCP\(mcp\.ForPolicy\))?\)`)
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
		if f.Bare != nil {
			checkBareMain(t, f, string(src), streams[f.Dir])
			continue
		}
		m := call.FindStringSubmatch(string(src))
		if m == nil {
			t.Errorf("functions/%s/main.go calls none of core.MainHTTP, core.MainHTTPStream, core.MainSQS and core.MainSchedule with a builder", f.Dir)
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
		switch m[1] {
		case "SQS":
			builder = f.SQS
		case "Schedule":
			builder = f.Schedule
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

// checkBareMain: a function served without an App (Function.Bare) has a main that passes the
// table's handler to platform.MainHTTP, with no providers and no stream.
func checkBareMain(t *testing.T, f app.Function, src string, streams bool) {
	t.Helper()
	m := regexp.MustCompile(`platform\.MainHTTP\((\w+)\.(\w+)\)`).FindStringSubmatch(src)
	if m == nil {
		t.Errorf("functions/%s/main.go does not call platform.MainHTTP with a handler, as app.Functions' Bare says", f.Dir)
		return
	}
	if f.Secrets || f.MCP || f.Stream || streams {
		t.Errorf("functions/%s: a bare function takes no providers and does not stream (Secrets %v, MCP %v, Stream %v, template streams %v)", f.Dir, f.Secrets, f.MCP, f.Stream, streams)
	}
	if name := runtime.FuncForPC(reflect.ValueOf(f.Bare).Pointer()).Name(); !strings.HasSuffix(name, "/app/"+m[1]+"."+m[2]) {
		t.Errorf("functions/%s/main.go serves %s.%s, the table %s", f.Dir, m[1], m[2], name)
	}
}

// TestBareGroupIsTheTables: a bare function's main serves the routes the table's builder gives
// the dev server and the tests (meta.Handler and core.Meta build one group).
func TestBareGroupIsTheTables(t *testing.T) {
	cfg, err := platform.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	a := app.NewWithAWS(aws.Config{Region: "us-east-1"}, cfg, log)
	n := 0
	for _, f := range app.Functions {
		if f.Bare == nil {
			continue
		}
		n++
		want, err := a.Handler(f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		h, err := f.Bare(t.Context(), cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := h.(*api.Group)
		if !ok {
			t.Fatalf("%s: the bare handler is a %T, not an api.Group", f.Dir, h)
		}
		if diff := cmp.Diff(want.Routes(), got.Routes()); diff != "" {
			t.Errorf("%s: routes of the main (+) and of the table (-):\n%s", f.Dir, diff)
		}
	}
	if n == 0 {
		t.Error("no bare function in app.Functions (meta is one)")
	}
}
