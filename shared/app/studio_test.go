package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/studio"
)

// TestStudioServedByMeta checks that the studio's paths reach MetaFunction through API Gateway's
// routing of template.yaml (its $default route: the studio needs no route of its own) and that
// meta's handler serves them as the studio (its page, or the 503 that says it is not built, both
// under the studio's Content-Security-Policy), not as the API's JSON 404; other methods stay 405
// in the envelope.
func TestStudioServedByMeta(t *testing.T) {
	tpl := loadTemplate(t)
	meta, err := offlineApp(t).Handler("meta")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/studio", "/studio/", "/studio/agents/5d8f4c1e", "/studio/assets/index-0.js"} {
		if got, route, _ := tpl.Match(http.MethodGet, path); got != "MetaFunction" {
			t.Errorf("GET %s reaches %s (route %v), want MetaFunction", path, got, route)
		}
		rec := httptest.NewRecorder()
		meta.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: status %d, CSP %q: not served by the studio (body %.200s)", path, rec.Code, csp, rec.Body)
		}
		switch rec.Code {
		case http.StatusServiceUnavailable:
			if strings.TrimSpace(rec.Body.String()) != studio.NotBuilt {
				t.Errorf("GET %s: 503 %q, want %q", path, rec.Body, studio.NotBuilt)
			}
		case http.StatusOK:
			if ct := rec.Header().Get("Content-Type"); path != "/studio/assets/index-0.js" && ct != "text/html; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q, want the studio's page", path, ct)
			}
		case http.StatusNotFound:
			if path != "/studio/assets/index-0.js" || strings.Contains(rec.Body.String(), "not_found_error") {
				t.Errorf("GET %s: 404 %q", path, rec.Body)
			}
		default:
			t.Errorf("GET %s: status %d %q", path, rec.Code, rec.Body)
		}
	}
	if status, body := serve(meta, http.MethodPost, "/studio/"); status != http.StatusMethodNotAllowed || errorType(body) != "invalid_request_error" {
		t.Errorf("POST /studio/: status %d body %v, want 405 in the envelope", status, body)
	}
}
