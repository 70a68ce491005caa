package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/tools"
)

// TestAgentCatalog: GET /api/v1/agent/catalog/ answers the agents service's catalog (providers
// as given, local's default model null, the registry's built-in tools with their descriptions
// and input schemas, llm_config's limits) to a key with agents:read, as the document says; it is
// a literal route, never the agent "catalog"; other methods are 405, no key 401, a key without
// agents:read 403.
func TestAgentCatalog(t *testing.T) {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	var specs []domain.ToolSpec
	for _, n := range reg.Names() {
		tool, _ := reg.Tool(n)
		specs = append(specs, tool.Spec())
	}
	providers := []domain.ModelProvider{
		{Name: domain.ProviderLocal, Default: true},
		{Name: domain.ProviderBedrock, DefaultModel: domain.DefaultBedrockModel, Models: []string{domain.DefaultBedrockModel, "amazon.nova-lite-v1:0"}},
	}
	// The service without a store: a request routed to an agent's read would fail with 500.
	svc := agents.NewService(nil, reg).WithCatalog(domain.Catalog{Providers: providers, Tools: specs})
	everything := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1", ExpiresAt: time.Now().Add(time.Hour)}
	sessionsOnly := everything
	sessionsOnly.Scopes = []string{domain.ScopeSessionRead}
	agentsRead := everything
	agentsRead.Scopes = []string{domain.ScopeAgentsRead}

	do := func(t *testing.T, auth api.Authenticator, method, path string, key bool) (int, []byte) {
		t.Helper()
		h := api.NewAgents(svc, api.Options{Auth: auth})
		r := httptest.NewRequest(method, path, nil)
		if key {
			r.Header.Set("x-api-key", "ak_x")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		res := rec.Result()
		body, _ := io.ReadAll(res.Body)
		if err := openapiError(r, nil, res.StatusCode, res.Header, body); err != nil {
			t.Errorf("%s %s: response does not match the document: %v\nbody: %s", method, path, err, body)
		}
		return res.StatusCode, body
	}

	for _, path := range []string{"/api/v1/agent/catalog/", "/api/v1/agent/catalog"} {
		status, body := do(t, openapiAuth{p: agentsRead}, http.MethodGet, path, true)
		if status != http.StatusOK {
			t.Fatalf("GET %s = %d, want 200: %s", path, status, body)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		wantProviders := []any{
			map[string]any{"name": "local", "default": true, "default_model": nil, "models": []any{}},
			map[string]any{"name": "bedrock", "default": false, "default_model": domain.DefaultBedrockModel,
				"models": []any{domain.DefaultBedrockModel, "amazon.nova-lite-v1:0"}},
		}
		if diff := cmp.Diff(wantProviders, got["providers"]); diff != "" {
			t.Errorf("providers (-want +got):\n%s", diff)
		}
		var wantTools []any
		for _, s := range specs {
			schema := roundTrip(t, s.Schema)
			wantTools = append(wantTools, map[string]any{"name": s.Name, "description": s.Description, "input_schema": schema})
		}
		if len(wantTools) != 3 {
			t.Fatalf("the registry has %d built-ins, want calculator, current_time and http_request", len(wantTools))
		}
		if diff := cmp.Diff(wantTools, got["tools"]); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
		wantParams := []any{
			map[string]any{"name": "temperature", "type": "number", "minimum": 0.0, "maximum": 2.0, "default": nil},
			map[string]any{"name": "top_p", "type": "number", "minimum": 0.0, "maximum": 1.0, "default": nil},
			map[string]any{"name": "max_tokens", "type": "integer", "minimum": 1.0, "maximum": 1e6, "default": 4096.0},
		}
		if diff := cmp.Diff(wantParams, got["parameters"]); diff != "" {
			t.Errorf("parameters (-want +got):\n%s", diff)
		}
	}

	for _, tt := range []struct {
		name   string
		auth   api.Authenticator
		method string
		key    bool
		want   int
	}{
		{"no key", openapiAuth{p: everything}, http.MethodGet, false, http.StatusUnauthorized},
		{"without agents:read", openapiAuth{p: sessionsOnly}, http.MethodGet, true, http.StatusForbidden},
		{"POST", openapiAuth{p: everything}, http.MethodPost, true, http.StatusMethodNotAllowed},
		{"DELETE is not agent catalog's delete", openapiAuth{p: everything}, http.MethodDelete, true, http.StatusMethodNotAllowed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if status, body := do(t, tt.auth, tt.method, "/api/v1/agent/catalog/", tt.key); status != tt.want {
				t.Errorf("status %d, want %d: %s", status, tt.want, body)
			}
		})
	}
}

// roundTrip is v as JSON decodes it (numbers as float64, lists as []any).
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
