package app_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
)

// TestAuditThroughFunctions: the functions as wired for Lambda record what an admin does (a key
// created and revoked in the auth function, an agent deleted in the agents function) on
// DynamoDB Local, and the auth function lists it, newest first, with the acting key's id.
func TestAuditThroughFunctions(t *testing.T) {
	env := localstack.NewTestEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	admin, secret, err := a.Auth.CreateKey(t.Context(), auth.NewKey{Owner: "ops", Company: "co-audit", Scopes: []string{auth.ScopeAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	authFn, err := a.Handler("auth")
	if err != nil {
		t.Fatal(err)
	}
	agentsFn, err := a.Handler("agents")
	if err != nil {
		t.Fatal(err)
	}
	call := func(h http.Handler, method, path, body string) (int, []byte) {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("x-api-key", secret)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		b, _ := io.ReadAll(w.Result().Body)
		return w.Code, b
	}
	id := func(b []byte) string {
		var v struct{ ID string }
		if err := json.Unmarshal(b, &v); err != nil || v.ID == "" {
			t.Fatalf("no id in %s", b)
		}
		return v.ID
	}
	code, b := call(authFn, http.MethodPost, "/api/v1/api-keys/", `{"name":"ci"}`)
	if code != http.StatusCreated {
		t.Fatalf("create key: %d %s", code, b)
	}
	key := id(b)
	if code, b := call(authFn, http.MethodDelete, "/api/v1/api-keys/"+key+"/", ""); code != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", code, b)
	}
	code, b = call(agentsFn, http.MethodPost, "/api/v1/agent/", `{"system_config":{"name":"audited"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create agent: %d %s", code, b)
	}
	agent := id(b)
	if code, b := call(agentsFn, http.MethodDelete, "/api/v1/agent/"+agent+"/", ""); code != http.StatusNoContent {
		t.Fatalf("delete agent: %d %s", code, b)
	}

	code, b = call(authFn, http.MethodGet, "/api/v1/audit/", "")
	if code != http.StatusOK {
		t.Fatalf("audit: %d %s", code, b)
	}
	type row struct{ Action, ActorKeyID, TargetType, TargetID string }
	var got []row
	var raw []struct {
		Action     string `json:"action"`
		ActorKeyID string `json:"actor_key_id"`
		TargetType string `json:"target_type"`
		TargetID   string `json:"target_id"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	for _, r := range raw {
		got = append(got, row(r))
	}
	want := []row{
		{"agent.deleted", admin.ID, "agent", agent},
		{"api_key.revoked", admin.ID, "api_key", key},
		{"api_key.created", admin.ID, "api_key", key},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
	if strings.Contains(string(b), "ak_") {
		t.Errorf("the log holds a key secret: %s", b)
	}
}
