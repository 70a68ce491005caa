package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/openapilint"
	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/tools"
)

// TestOpenAPILint runs two validators independent of the one the other tests use (kin-openapi):
// Redocly CLI's lint with the recommended rules (redocly.yaml) and the OpenAPI 3.1 JSON schema
// (@seriousme/openapi-schema-validator). Errors fail; warnings are logged. The pinned validators
// are installed into .cache/openapilint on first use; without node and npm the test is skipped.
func TestOpenAPILint(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := openapilint.Ensure(ctx, root, os.Stderr); errors.Is(err, openapilint.ErrNoNode) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func(context.Context, string, string) ([]openapilint.Problem, error){
		"redocly lint": openapilint.Redocly, "openapi-schema-validator": openapilint.SchemaValidator,
	} {
		problems, err := run(ctx, root, openapilint.DocPath)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range problems {
			if p.Severity == "error" {
				t.Errorf("%s: %s", name, p)
			} else {
				t.Logf("%s: %s", name, p)
			}
		}
	}
}

// TestOpenAPIValidateWrongMethod checks what the document says of GET /api/v1/agent/validate/
// against what the router answers.
func TestOpenAPIValidateWrongMethod(t *testing.T) {
	doc, err := openapiDoc()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`GET /api/v1/agent/validate/`[^.]*?answers \\*{0,2}(\\d{3})").FindStringSubmatch(doc.Info.Description)
	if m == nil {
		t.Fatal("the document's description does not say what GET /api/v1/agent/validate/ answers")
	}
	want, _ := strconv.Atoi(m[1])
	p := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1", ExpiresAt: time.Now().Add(time.Hour)}
	h := api.NewAgents(agents.NewService(nil, tools.NewRegistry(tools.Builtins(tools.Options{})...)), api.Options{Auth: openapiAuth{p: p}})
	r := httptest.NewRequest(http.MethodGet, "/api/v1/agent/validate/", nil)
	r.Header.Set("x-api-key", "ak_x")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != want {
		t.Errorf("GET /api/v1/agent/validate/ answers %d; the document says %d", w.Code, want)
	}
	if w.Code == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "POST" {
		t.Errorf("Allow = %q, want POST", w.Header().Get("Allow"))
	}
	checkOpenAPI(t, r, nil, w.Code, w.Header(), w.Body.Bytes())
}
