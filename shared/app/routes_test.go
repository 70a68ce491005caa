package app_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/platform"
)

// repoRoot finds the module root by walking up from the test's directory to go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func loadTemplate(t *testing.T) *sam.Template {
	t.Helper()
	tpl, err := sam.Load(filepath.Join(repoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// offlineApp builds the application without any AWS access: routing, and requests that fail
// authentication before any lookup, never touch the network.
func offlineApp(t *testing.T) *app.App {
	t.Helper()
	cfg, err := platform.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	return app.NewWithAWS(aws.Config{Region: "us-east-1"}, cfg, slog.New(slog.DiscardHandler))
}

// gatewayRoute is how a Go route is written in template.yaml: API Gateway refuses route paths
// ending in "/" and matches /x/ on the route /x, so the template drops the trailing slash.
func gatewayRoute(r api.Route) sam.Route {
	p := r.Path
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return sam.Route{Method: r.Method, Path: p}
}

// queueFunction reports whether f is fed by SQS events (the worker) or a schedule (the
// watchdog) alone: it has no HTTP handler.
func queueFunction(f sam.Function) bool {
	return len(f.Queues)+len(f.Schedules) > 0 && len(f.Routes) == 0 && len(f.Fallbacks) == 0
}

// httpFunctions lists the template's functions behind the HTTP API (not those behind a function
// URL of their own, which has no routes: TestStreamEvents checks the stream function).
func httpFunctions(tpl *sam.Template) []sam.Function {
	var out []sam.Function
	for _, f := range tpl.Functions() {
		if !queueFunction(f) && f.URL == nil {
			out = append(out, f)
		}
	}
	return out
}

// TestRouteFunctionsMatchDirs checks that every function of the template is built from the root
// (CodeUri ".") out of functions/<dir>/main.go, and that the HTTP functions are app.Functions.
// Queue consumers are built the same way but have no handler group.
func TestRouteFunctionsMatchDirs(t *testing.T) {
	root := repoRoot(t)
	var dirs []string
	for _, f := range loadTemplate(t).Functions() {
		if !queueFunction(f) {
			dirs = append(dirs, f.Dir)
		}
		// sam build runs the root Makefile's build-<LogicalId> target, so CodeUri is the root.
		if f.CodeURI != "." {
			t.Errorf("%s: CodeUri %q, want \".\" (the makefile build method builds from the root)", f.LogicalID, f.CodeURI)
		}
		if _, err := os.Stat(filepath.Join(root, "functions", f.Dir, "main.go")); err != nil {
			t.Errorf("%s: functions/%s has no main.go: %v", f.LogicalID, f.Dir, err)
		}
	}
	var httpDirs []string
	for _, f := range app.Functions {
		if f.HTTP != nil {
			httpDirs = append(httpDirs, f.Dir)
		}
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(httpDirs)), slices.Sorted(slices.Values(dirs))); diff != "" {
		t.Errorf("template HTTP functions vs app.Functions (-app +template):\n%s", diff)
	}
}

func TestRoutesMatchGo(t *testing.T) {
	a := offlineApp(t)
	for _, f := range httpFunctions(loadTemplate(t)) {
		t.Run(f.Dir, func(t *testing.T) {
			g, err := a.Handler(f.Dir)
			if err != nil {
				t.Fatal(err)
			}
			var want []sam.Route
			for _, r := range g.Routes() {
				want = append(want, gatewayRoute(r))
			}
			if len(want) == 0 {
				t.Fatal("the Go group serves no routes")
			}
			if diff := cmp.Diff(sortRoutes(want), sortRoutes(f.Routes)); diff != "" {
				t.Errorf("routes (-go +template):\n%s", diff)
			}
		})
	}
}

func sortRoutes(rs []sam.Route) []sam.Route {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b sam.Route) int { return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method) })
	return rs
}

// TestRouteFallbacksStayInGroup checks that a group's fallback routes cover only its own paths:
// each fallback's path (without {proxy+}) leads to at least one of the group's Go routes and to
// none of another group's; $default belongs to meta alone.
func TestRouteFallbacksStayInGroup(t *testing.T) {
	a := offlineApp(t)
	fns := httpFunctions(loadTemplate(t))
	routes := map[string][]api.Route{}
	for _, f := range fns {
		g, err := a.Handler(f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		routes[f.Dir] = g.Routes()
	}
	var defaults []string
	for _, f := range fns {
		if len(f.Fallbacks) == 0 {
			t.Errorf("%s has no fallback routes", f.LogicalID)
		}
		for _, fb := range f.Fallbacks {
			if fb.Path == sam.DefaultRoute {
				defaults = append(defaults, f.Dir)
				continue
			}
			if fb.Method != "ANY" {
				t.Errorf("%s: fallback %s %s should take ANY method", f.LogicalID, fb.Method, fb.Path)
			}
			prefix := strings.TrimSuffix(fb.Path, "/{proxy+}")
			for dir, rs := range routes {
				covers := slices.ContainsFunc(rs, func(r api.Route) bool { return underPrefix(r.Path, prefix) })
				if dir == f.Dir && !covers {
					t.Errorf("%s: fallback %s covers none of its own routes", f.LogicalID, fb.Path)
				}
				if dir != f.Dir && covers {
					t.Errorf("%s: fallback %s covers routes of %s", f.LogicalID, fb.Path, dir)
				}
			}
		}
	}
	if !slices.Equal(defaults, []string{"meta"}) {
		t.Errorf("$default route on %v, want on meta only", defaults)
	}
}

// underPrefix reports whether path is prefix or below it, segment by segment.
func underPrefix(path, prefix string) bool {
	path = strings.TrimSuffix(path, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

var probeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// lookupRoutes are public routes that read a stored object by its name: the probe's name (a bare
// UUID) names no object, so their handler answers 404 in the envelope without any storage call.
// That the route is there shows in the 405 its other methods get.
var lookupRoutes = map[api.Route]bool{{Method: http.MethodGet, Path: "/media/{name}"}: true}

// TestRoutesReachTheirGroup replays, through the template's API Gateway routing and the Go
// handler, each Go route with and without its trailing slash and with every other method: the
// request must reach the group's function, and its handler must serve it (no 404/405) or, for a
// method it does not serve there, answer 405 in the JSON envelope (a lookupRoutes route answers
// its unknown name with 404). Unknown paths reach meta's JSON 404. No request carries a key, so
// nothing needs DynamoDB or S3.
func TestRoutesReachTheirGroup(t *testing.T) {
	tpl := loadTemplate(t)
	a := offlineApp(t)
	const id = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	params := regexp.MustCompile(`\{[a-z_]+\}`)
	for _, f := range httpFunctions(tpl) {
		g, err := a.Handler(f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range g.Routes() {
			concrete := params.ReplaceAllString(r.Path, id)
			for _, path := range []string{concrete, strings.TrimSuffix(concrete, "/")} {
				for _, m := range probeMethods {
					got, route, ok := tpl.Match(m, path)
					if !ok || got != f.LogicalID {
						t.Errorf("%s %s reaches %s (route %v), want %s", m, path, got, route, f.LogicalID)
						continue
					}
					status, body := serve(g, m, path)
					if lookupRoutes[r] && m == r.Method {
						if status != http.StatusNotFound || errorType(body) != "not_found_error" {
							t.Errorf("%s %s: status %d body %v, want 404 for an unknown name", m, path, status, body)
						}
						continue
					}
					if goServes(g.Routes(), m, path) {
						if status == http.StatusNotFound || status == http.StatusMethodNotAllowed || body == nil {
							t.Errorf("%s %s: status %d body %v, want it served", m, path, status, body)
						}
						continue
					}
					if status != http.StatusMethodNotAllowed || errorType(body) != "invalid_request_error" {
						t.Errorf("%s %s: status %d body %v, want 405 in the envelope", m, path, status, body)
					}
				}
			}
		}
	}
	meta, err := a.Handler("meta")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/api/v1/nothing/", "/api/v1/auth", "/api/v2/agent/", "/api/v1/runtime/", "/api/v1/images/", "/media/", "/api/v1/media/x.png"} {
		got, _, _ := tpl.Match(http.MethodGet, path)
		if got != "MetaFunction" {
			t.Errorf("GET %s reaches %s, want MetaFunction", path, got)
			continue
		}
		if status, body := serve(meta, http.MethodGet, path); status != http.StatusNotFound || errorType(body) != "not_found_error" {
			t.Errorf("GET %s: status %d body %v, want 404 in the envelope", path, status, body)
		}
	}
}

// goServes reports whether one of the group's routes takes method and path ({name} matches one
// segment; the trailing slash does not count).
func goServes(routes []api.Route, method, path string) bool {
	req := strings.Split(strings.Trim(path, "/"), "/")
	// A literal route of any method shadows parameter routes on the same path.
	literal := false
	for _, r := range routes {
		if strings.Trim(r.Path, "/") == strings.Join(req, "/") {
			literal = true
		}
	}
	for _, r := range routes {
		if r.Method != method || (literal && strings.Contains(r.Path, "{")) {
			continue
		}
		segs := strings.Split(strings.Trim(r.Path, "/"), "/")
		if len(segs) != len(req) {
			continue
		}
		match := true
		for i, s := range segs {
			if !strings.HasPrefix(s, "{") && s != req[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// serve runs one request through h and decodes the JSON body (nil when it is not JSON).
func serve(h http.Handler, method, path string) (int, map[string]any) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader("{}")))
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		return rec.Code, nil
	}
	return rec.Code, body
}

func errorType(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}
