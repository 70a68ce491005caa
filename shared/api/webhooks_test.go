package api_test

import (
	"context"
	"encoding/json"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

// The webhooks group over the real feature on the in-memory store: statuses, views (checked
// against the OpenAPI document by send), scopes and the one showing of the secret.

const hookURL = "https://hooks.example.com/in"

func webhookStack(t *testing.T) *stack {
	t.Helper()
	s, f := newFakeStack(t)
	hooks := webhookstest.NewStore()
	svc := webhooks.New(hooks, netguard.Policy{}).WithAudit(audit.New(audittest.NewStore()))
	dels := webhooks.NewDeliverer(hooks, webhookstest.NewDeliveries(), nopQueue{}, http.DefaultClient)
	g := api.NewWebhooks(svc, dels, api.Options{Auth: fakeAuth{f}, Log: slog.New(slog.DiscardHandler)})
	rest := s.mux
	s.mux = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/webhooks") {
			g.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
	return s
}

func TestWebhookHandlers(t *testing.T) {
	s := webhookStack(t)
	key := s.key("alice", "acme")
	var bodies []string
	do := func(r req) response {
		t.Helper()
		r.key = key
		res := s.do(r)
		bodies = append(bodies, string(res.body))
		return res
	}
	res := do(req{method: "POST", path: "/api/v1/webhooks/", body: map[string]any{"url": hookURL,
		"events": []string{"execution.completed", "knowledge_base.ingestion.failed"}, "description": "CI"}})
	if res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	hook := res.json(t)
	id, _ := hook["id"].(string)
	secret, _ := hook["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || hook["enabled"] != true || hook["disabled_reason"] != nil || hook["url"] != hookURL {
		t.Errorf("created %s", res.body)
	}

	// Only create and rotate-secret show the secret.
	do(req{method: "POST", path: "/api/v1/webhooks/", body: `{"url":"` + hookURL + `/2","events":["execution.failed"]}`})
	res = do(req{method: "GET", path: "/api/v1/webhooks/?limit=1"})
	var list []map[string]any
	if err := json.Unmarshal(res.body, &list); err != nil || res.status != 200 || len(list) != 1 || list[0]["url"] != hookURL+"/2" {
		t.Errorf("list page: %d %s", res.status, res.body)
	}
	if link := res.header.Get("Link"); !strings.Contains(link, "offset=1") {
		t.Errorf("Link = %q", link)
	}
	res = do(req{method: "GET", path: "/api/v1/webhooks/" + id + "/"})
	if m := res.json(t); res.status != 200 || m["id"] != id || m["secret"] != nil {
		t.Errorf("get: %d %s", res.status, res.body)
	}
	res = do(req{method: "PATCH", path: "/api/v1/webhooks/" + id + "/", body: "enabled: false\ndescription: null\n",
		header: map[string]string{"Content-Type": "application/yaml"}})
	if m := res.json(t); res.status != 200 || m["enabled"] != false || m["description"] != "" || m["secret"] != nil {
		t.Errorf("patch: %d %s", res.status, res.body)
	}
	res = do(req{method: "POST", path: "/api/v1/webhooks/" + id + "/rotate-secret/"})
	rotated, _ := res.json(t)["secret"].(string)
	if res.status != 200 || !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
		t.Errorf("rotate: %d %s", res.status, res.body)
	}
	for i, b := range bodies {
		if i != 0 && strings.Contains(b, secret) || i != len(bodies)-1 && strings.Contains(b, rotated) {
			t.Errorf("answer %d shows a secret outside create and rotate: %s", i, b)
		}
	}
	res = do(req{method: "GET", path: "/api/v1/webhooks/" + id + "/deliveries/"})
	if res.status != 200 || strings.TrimSpace(string(res.body)) != "[]" {
		t.Errorf("deliveries: %d %s", res.status, res.body)
	}
	if res = do(req{method: "POST", path: "/api/v1/webhooks/" + id + "/deliveries/msg_unknown/redeliver/"}); res.status != 404 {
		t.Errorf("redeliver an unknown delivery: %d %s", res.status, res.body)
	}
	res = do(req{method: "DELETE", path: "/api/v1/webhooks/" + id + "/"})
	if res.status != http.StatusNoContent || len(res.body) != 0 {
		t.Errorf("delete: %d %s", res.status, res.body)
	}
	if res = do(req{method: "GET", path: "/api/v1/webhooks/" + id + "/"}); res.status != 404 {
		t.Errorf("get after delete: %d", res.status)
	}
}

// TestWebhookRefusals: bad input is a 400 in the envelope naming the dotted field; another
// company's webhook is a 404 like an unknown one; the scopes are webhooks:read and :write.
func TestWebhookRefusals(t *testing.T) {
	s := webhookStack(t)
	key := s.key("alice", "acme")
	res := s.do(req{method: "POST", path: "/api/v1/webhooks/", key: key, body: `{"url":"` + hookURL + `","events":["execution.failed"]}`})
	if res.status != 201 {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	id, _ := res.json(t)["id"].(string)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		field                    string
	}{
		{"no url", "POST", "/api/v1/webhooks/", `{"events":["execution.failed"]}`, 400, "url"},
		{"loopback", "POST", "/api/v1/webhooks/", `{"url":"http://127.0.0.1:8080/","events":["execution.failed"]}`, 400, "url"},
		{"metadata address", "POST", "/api/v1/webhooks/", `{"url":"http://169.254.169.254/latest","events":["execution.failed"]}`, 400, "url"},
		{"unknown event", "POST", "/api/v1/webhooks/", `{"url":"` + hookURL + `","events":["execution.failed","nope"]}`, 400, "events.1"},
		{"events not strings", "POST", "/api/v1/webhooks/", `{"url":"` + hookURL + `","events":[1]}`, 400, "events.0"},
		{"unknown field", "POST", "/api/v1/webhooks/", `{"url":"` + hookURL + `","events":["execution.failed"],"secret":"whsec_x"}`, 400, "secret"},
		{"enabled not a boolean", "POST", "/api/v1/webhooks/", `{"url":"` + hookURL + `","events":["execution.failed"],"enabled":"yes"}`, 400, "enabled"},
		{"null url", "PATCH", "/api/v1/webhooks/" + id + "/", `{"url":null}`, 400, "url"},
		{"empty events", "PATCH", "/api/v1/webhooks/" + id + "/", `{"events":[]}`, 400, "events"},
		{"not an object", "POST", "/api/v1/webhooks/", `["x"]`, 400, ""},
		{"unknown id", "GET", "/api/v1/webhooks/00000000-0000-4000-8000-000000000000/", "", 404, ""},
		{"not a uuid", "POST", "/api/v1/webhooks/x/rotate-secret/", "", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := req{method: tc.method, path: tc.path, key: key}
			if tc.body != "" {
				r.body = tc.body
			}
			res := s.do(r)
			if res.status != tc.status {
				t.Fatalf("%d %s, want %d", res.status, res.body, tc.status)
			}
			if tc.field != "" {
				errs, _ := res.json(t)["error"].(map[string]any)["errors"].([]any)
				if len(errs) == 0 || errs[0].(map[string]any)["field"] != tc.field {
					t.Errorf("errors %v, want first field %q", errs, tc.field)
				}
			}
		})
	}
	if res := s.do(req{method: "GET", path: "/api/v1/webhooks/" + id + "/", key: s.key("bob", "globex")}); res.status != 404 {
		t.Errorf("another company's webhook: %d %s", res.status, res.body)
	}
	scoped := func(scopes ...string) string {
		return s.key("carol", "acme", func(k *auth.NewKey) { k.Scopes = scopes })
	}
	for _, tc := range []struct {
		key    string
		method string
		status int
	}{
		{scoped(domain.ScopeWebhooksRead), "GET", 200},
		{scoped(domain.ScopeWebhooksRead), "POST", 403},
		{scoped(domain.ScopeAgentsWrite), "GET", 403},
		{scoped(domain.ScopeWebhooksWrite), "GET", 200},
		{scoped(domain.ScopeWebhooksWrite), "POST", 200},
		{scoped(domain.ScopeAdmin), "POST", 200},
	} {
		path := "/api/v1/webhooks/" + id + "/"
		if tc.method == "POST" {
			path += "rotate-secret/"
		}
		if res := s.do(req{method: tc.method, path: path, key: tc.key}); res.status != tc.status {
			t.Errorf("%s %s with %s: %d, want %d", tc.method, path, tc.key, res.status, tc.status)
		}
	}
}

// nopQueue takes every message and sends none (the deliveries are the feature's tests').
type nopQueue struct{}

func (nopQueue) Send(context.Context, string, string) error { return nil }
