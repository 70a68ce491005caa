package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/platform"
)

// TestMain starts DynamoDB Local and the other stand-ins unless the run already provides them.
func TestMain(m *testing.M) { localstack.RunTests(m) }

// Placeholders in events/*.json that the replay fills in.
const (
	placeholderKey     = "{{API_KEY}}"
	placeholderAgentID = "{{AGENT_ID}}"
	placeholderKeyID   = "{{KEY_ID}}"
)

// placeholder finds a placeholder the replay did not fill in.
var placeholder = regexp.MustCompile(`\{\{[A-Z_]+\}\}`)

type lambdaHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// TestEventsReplay runs every sample event in events/ through its function's Lambda adapter and
// handler against DynamoDB Local. An event must name, by its file prefix, a function of
// template.yaml; its routeKey must be one of that function's explicit routes, and the one API
// Gateway would pick for its path; the response must be a success with a JSON body (204 without
// one). Every explicit route must have an event.
func TestEventsReplay(t *testing.T) {
	root := repoRoot(t)
	tpl := loadTemplate(t)
	files, err := filepath.Glob(filepath.Join(root, "events", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events in %s: %v", filepath.Join(root, "events"), err)
	}
	env := localstack.NewTestEnv(t)
	log := slog.New(slog.DiscardHandler)
	a := app.NewWithAWS(env.AWS, env.Config, log)
	fns := map[string]sam.Function{}
	handlers := map[string]lambdaHandler{}
	for _, f := range tpl.Functions() {
		g, err := a.Handler(f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		fns[f.Dir], handlers[f.Dir] = f, platform.HTTPHandler(g, log)
	}
	r := &replayer{app: a, handlers: handlers, root: root}

	covered := map[string][]sam.Route{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir, _, _ := strings.Cut(name, "-")
			f, ok := fns[dir]
			if !ok {
				t.Fatalf("file prefix %q names no function of template.yaml", dir)
			}
			route := checkEvent(t, tpl, f, raw)
			covered[dir] = append(covered[dir], route)

			company := "company-" + name
			secret := r.newKey(t, company)
			vars := map[string]string{placeholderKey: secret}
			if bytes.Contains(raw, []byte(placeholderAgentID)) {
				vars[placeholderAgentID] = r.newAgent(t, secret)
			}
			if bytes.Contains(raw, []byte(placeholderKeyID)) {
				k, _, err := a.Auth.CreateKey(t.Context(), auth.NewKey{Name: "to revoke", Owner: "o", Company: company})
				if err != nil {
					t.Fatal(err)
				}
				vars[placeholderKeyID] = k.ID
			}
			status, body := r.replay(t, dir, raw, vars)
			if status < 200 || status > 299 {
				t.Fatalf("status %d, body %s", status, body)
			}
			if status == http.StatusNoContent {
				if len(body) != 0 {
					t.Errorf("204 with a body: %s", body)
				}
				return
			}
			if !json.Valid(body) || len(bytes.TrimSpace(body)) == 0 {
				t.Errorf("status %d, body is not JSON: %q", status, body)
			}
		})
	}
	for dir, f := range fns {
		for _, rt := range f.Routes {
			if !slices.Contains(covered[dir], rt) {
				t.Errorf("%s: route %s %s has no event in events/", f.LogicalID, rt.Method, rt.Path)
			}
		}
	}
}

// checkEvent checks the event's shape against the template and returns its route.
func checkEvent(t *testing.T, tpl *sam.Template, f sam.Function, raw []byte) sam.Route {
	t.Helper()
	var ev events.APIGatewayV2HTTPRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("not an API Gateway HTTP API (payload 2.0) event: %v", err)
	}
	if ev.Version != "2.0" || ev.RequestContext.Stage != "$default" || ev.IsBase64Encoded {
		t.Errorf("version %q, stage %q, base64 %v; want 2.0, $default, false", ev.Version, ev.RequestContext.Stage, ev.IsBase64Encoded)
	}
	method, path, _ := strings.Cut(ev.RouteKey, " ")
	route := sam.Route{Method: method, Path: path}
	if !slices.Contains(f.Routes, route) {
		t.Fatalf("routeKey %q is not an explicit route of %s in template.yaml", ev.RouteKey, f.LogicalID)
	}
	if ev.RequestContext.RouteKey != ev.RouteKey || ev.RequestContext.HTTP.Method != method || ev.RequestContext.HTTP.Path != ev.RawPath {
		t.Errorf("requestContext (routeKey %q, method %q, path %q) disagrees with the event (%q, %q)",
			ev.RequestContext.RouteKey, ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path, ev.RouteKey, ev.RawPath)
	}
	if ev.RequestContext.RequestID == "" {
		t.Error("requestContext.requestId is empty")
	}
	if id, got, _ := tpl.Match(method, ev.RawPath); id != f.LogicalID || got != route {
		t.Errorf("API Gateway would send %s %s to %s as %v, not to %s as %v", method, ev.RawPath, id, got, f.LogicalID, route)
	}
	return route
}

// replayer runs events through the functions' Lambda handlers.
type replayer struct {
	app      *app.App
	handlers map[string]lambdaHandler
	root     string
}

func (r *replayer) newKey(t *testing.T, company string) string {
	t.Helper()
	_, secret, err := r.app.Auth.CreateKey(t.Context(), auth.NewKey{Owner: "o", Company: company})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// newAgent creates an agent by replaying the create event and returns its id.
func (r *replayer) newAgent(t *testing.T, secret string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.root, "events", "agents-create-agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	status, body := r.replay(t, "agents", raw, map[string]string{placeholderKey: secret})
	var out struct {
		ID string `json:"id"`
	}
	if status != http.StatusCreated || json.Unmarshal(body, &out) != nil || out.ID == "" {
		t.Fatalf("create agent for the event: status %d body %s", status, body)
	}
	return out.ID
}

// replay fills the placeholders in, runs the event and returns the status and decoded body.
func (r *replayer) replay(t *testing.T, dir string, raw []byte, vars map[string]string) (int, []byte) {
	t.Helper()
	s := string(raw)
	for k, v := range vars {
		s = strings.ReplaceAll(s, k, v)
	}
	if left := placeholder.FindString(s); left != "" {
		t.Fatalf("placeholder %s left unfilled", left)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal([]byte(s), &ev); err != nil {
		t.Fatal(err)
	}
	resp, err := r.handlers[dir](t.Context(), ev)
	if err != nil {
		t.Fatalf("handler returned an error (API Gateway would answer with its own 5xx): %v", err)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, body
}
