package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// goDuration finds a Go duration string such as 17520h0m0s or 1.5s in a message.
var goDuration = regexp.MustCompile(`\d(h|m|s|ms|µs|ns)(\d|\b)`)

// instances are two Lambda instances on the same resources: each with its own key cache, the
// second's living cacheTTL.
func instances(t *testing.T, cacheTTL time.Duration, extra ...func(*dynamodb.Options)) (*stack, *stack) {
	t.Helper()
	env := testEnv(t)
	build := func(ttl time.Duration) *stack {
		cfg := env.Config
		cfg.KeyCacheTTL = ttl
		a := app.NewWithAWS(env.AWS, cfg, slog.New(slog.DiscardHandler), extra...)
		groups := map[string]http.Handler{}
		for _, fn := range []string{"agents", "auth"} {
			h, err := a.Handler(fn)
			if err != nil {
				t.Fatal(err)
			}
			groups[fn] = h
		}
		mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/v1/agent") {
				groups["agents"].ServeHTTP(w, r)
				return
			}
			groups["auth"].ServeHTTP(w, r)
		})
		return &stack{t: t, app: a, mux: mux}
	}
	return build(env.Config.KeyCacheTTL), build(cacheTTL)
}

// operatorKey creates a key as scripts/apikey does and returns it with its secret.
func (s *stack) operatorKey(in auth.NewKey) (*domain.APIKey, string) {
	s.t.Helper()
	k, secret, err := s.app.Auth.CreateKey(context.Background(), in)
	if err != nil {
		s.t.Fatal(err)
	}
	return k, secret
}

func (s *stack) token(key string) map[string]string {
	s.t.Helper()
	res := s.do(req{method: "POST", path: "/api/v1/auth/token/", key: key})
	if res.status != 200 {
		s.t.Fatalf("token: %d %s", res.status, res.body)
	}
	return map[string]string{"Authorization": "Bearer " + res.json(s.t)["access_token"].(string)}
}

// wantStatus checks a response's status and, for an error, its type and message.
func wantStatus(t *testing.T, what string, res response, status int, typ, msg string) {
	t.Helper()
	if res.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, res.status, status, res.body)
		return
	}
	if typ == "" {
		return
	}
	if gotType, gotMsg := res.errorType(t); gotType != typ || (msg != "" && gotMsg != msg) {
		t.Errorf("%s: %s %q, want %s %q", what, gotType, gotMsg, typ, msg)
	}
}

// fieldError returns the first field error of a 400.
func fieldError(t *testing.T, res response) (field, msg string) {
	t.Helper()
	var body struct {
		Error struct {
			Type   string `json:"type"`
			Errors []struct{ Field, Message string }
		} `json:"error"`
	}
	if err := json.Unmarshal(res.body, &body); err != nil || res.status != 400 || body.Error.Type != "invalid_request_error" || len(body.Error.Errors) == 0 {
		t.Fatalf("want a 400 naming a field, got %d %s", res.status, res.body)
	}
	return body.Error.Errors[0].Field, body.Error.Errors[0].Message
}

func TestRevokingAKeyEndsItsTokens(t *testing.T) {
	here, elsewhere := instances(t, 300*time.Millisecond)
	k, key := here.operatorKey(auth.NewKey{Owner: "alice", Company: "acme"})
	bearer := here.token(key)
	for _, in := range []*stack{here, elsewhere} {
		wantStatus(t, "token before the revocation", in.do(req{method: "GET", path: "/api/v1/agent/", header: bearer}), 200, "", "")
	}
	// A token never creates keys: a stolen token must not buy a two-year key.
	res := here.do(req{method: "POST", path: "/api/v1/api-keys/", header: bearer, body: `{"expires_in":63072000}`})
	wantStatus(t, "key created with a token", res, 403, "permission_error", domain.MsgNoPermission)

	wantStatus(t, "revoke", here.do(req{method: "DELETE", path: "/api/v1/api-keys/" + k.ID + "/", key: key}), 204, "", "")
	wantStatus(t, "token on the instance that revoked its key", here.do(req{method: "GET", path: "/api/v1/agent/", header: bearer}),
		401, "authentication_error", domain.MsgBadCredentials)
	// Another instance sees the revocation when its cached lookup of the key expires.
	time.Sleep(300 * time.Millisecond)
	wantStatus(t, "token on another instance after its key cache TTL", elsewhere.do(req{method: "GET", path: "/api/v1/agent/", header: bearer}),
		401, "authentication_error", domain.MsgBadCredentials)
}

// TestTokenReadsNoMoreThanItsKey counts DynamoDB calls: a token's check of its key is the cached
// lookup, so on a warm instance a token request costs what the same request with the key costs.
func TestTokenReadsNoMoreThanItsKey(t *testing.T) {
	m := &ddbMeter{}
	warm, cold := instances(t, time.Minute, m.option)
	_, key := warm.operatorKey(auth.NewKey{Owner: "alice", Company: "acme"})
	id := warm.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig}).json(t)["id"].(string)
	bearer := warm.token(key)
	get := func(s *stack, r req) int64 {
		t.Helper()
		m.reset()
		r.method, r.path = "GET", "/api/v1/agent/"+id+"/"
		wantStatus(t, "get agent", s.do(r), 200, "", "")
		return m.calls.Load()
	}
	withKey := get(warm, req{key: key})
	if got := get(warm, req{header: bearer}); got != withKey {
		t.Errorf("a token on a warm instance made %d DynamoDB calls, the key %d", got, withKey)
	}
	// On a cold instance the first use reads the key once (by id) and its company's limits once
	// (a GetItem, cached as the key is), the next ones neither.
	if got := get(cold, req{header: bearer}); got != withKey+2 {
		t.Errorf("a token on a cold instance made %d DynamoDB calls, want %d", got, withKey+2)
	}
	if got := get(cold, req{header: bearer}); got != withKey {
		t.Errorf("a token on a now warm instance made %d DynamoDB calls, want %d", got, withKey)
	}
}

// TestChildKeysAreBoundedByTheirCreator: the one bound the auth feature's tests leave to the
// stack (an expires_at past any key's lifetime, told in days), and a revoked creator ending its
// descendants through the ancestors stored with each key. The other bounds and the children's
// defaults are TestCreateKeyAsBounds and TestChildKeysDieWithTheirCreator in shared/auth.
func TestChildKeysAreBoundedByTheirCreator(t *testing.T) {
	s := newStack(t)
	parent, parentKey := s.operatorKey(auth.NewKey{Owner: "alice", Company: "acme", TTL: time.Hour, RateLimit: 50,
		Scopes: []string{domain.ScopeKeysManage, domain.ScopeAgentsRead}})
	_, unscoped := s.operatorKey(auth.NewKey{Owner: "alice", Company: "acme"})
	far := time.Now().Add(800 * 24 * time.Hour).UTC().Format(time.RFC3339)
	field, msg := fieldError(t, s.do(req{method: "POST", path: "/api/v1/api-keys/", key: unscoped, body: `{"expires_at":"` + far + `"}`}))
	if field != "expires_at" || !strings.Contains(msg, "at most 730 days ahead") || goDuration.MatchString(msg) {
		t.Errorf("an expires_at past any key's lifetime: %s: %s", field, msg)
	}

	res := s.do(req{method: "POST", path: "/api/v1/api-keys/", key: parentKey, body: `{"name":"child"}`})
	wantStatus(t, "child", res, 201, "", "")
	var child struct {
		Key      string `json:"key"`
		ParentID string `json:"parent_id"`
	}
	if err := json.Unmarshal(res.body, &child); err != nil || child.ParentID != parent.ID {
		t.Fatalf("child = %s, parent %s (%v)", res.body, parent.ID, err)
	}
	res = s.do(req{method: "POST", path: "/api/v1/api-keys/", key: child.Key, body: `{"name":"grandchild","rate_limit":5}`})
	wantStatus(t, "grandchild", res, 201, "", "")
	grandchild := res.json(t)["key"].(string)
	for _, key := range []string{child.Key, grandchild} {
		wantStatus(t, "descendant before the revocation", s.do(req{method: "GET", path: "/api/v1/agent/", key: key}), 200, "", "")
	}

	// Revoking the creator ends its descendants too.
	wantStatus(t, "revoke the parent", s.do(req{method: "DELETE", path: "/api/v1/api-keys/" + parent.ID + "/", key: unscoped}), 204, "", "")
	for name, key := range map[string]string{"child": child.Key, "grandchild": grandchild} {
		wantStatus(t, name+" of a revoked key", s.do(req{method: "GET", path: "/api/v1/agent/", key: key}), 401, "authentication_error", domain.MsgBadCredentials)
	}
	wantStatus(t, "the revoking key", s.do(req{method: "GET", path: "/api/v1/agent/", key: unscoped}), 200, "", "")
}

// TestKeyHandlers: what the auth group reads from a request and shows of a key, over a fake
// key service (the rules of who may make which key are the auth feature's, tested in shared/auth).
func TestKeyHandlers(t *testing.T) {
	s, f := newFakeStack(t)
	key := s.key("alice", "acme", func(k *auth.NewKey) { k.RateLimit = 50 })
	post := func(body string) response {
		return s.do(req{method: "POST", path: "/api/v1/api-keys/", key: key, body: body})
	}

	res := post(`{"name":"ci","expires_in":3600,"scopes":["agents:read"],"rate_limit":100}`)
	wantStatus(t, "create", res, 201, "", "")
	created := res.json(t)
	if secret, _ := created["key"].(string); !strings.HasPrefix(secret, "ak_") || created["name"] != "ci" || created["company"] != "acme" {
		t.Errorf("created key = %s", res.body)
	}
	at := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	wantStatus(t, "create with expires_at", post(`{"expires_at":"`+at.Format(time.RFC3339)+`"}`), 201, "", "")
	wantStatus(t, "create with no fields", post(`{}`), 201, "", "")
	res = post(`{"owner":"bob","name":"for bob"}`)
	wantStatus(t, "create for another owner", res, 201, "", "")
	if k := res.json(t); k["owner"] != "bob" || k["parent_id"] == nil || k["parent_id"] == "" {
		t.Errorf("key for bob = %s", res.body)
	}
	want := []auth.NewKey{
		{Name: "ci", TTL: time.Hour, Scopes: []string{"agents:read"}, RateLimit: 100},
		{ExpiresAt: at, RateLimit: 50},
		{RateLimit: 50}, // the creator's limit unless another is given
		{Name: "for bob", Owner: "bob", RateLimit: 50},
	}
	if diff := cmp.Diff(want, f.keySvc.created); diff != "" {
		t.Errorf("keys asked for (-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ body, field, msg string }{
		{`{"name":"x","company":"globex"}`, "company", "a key's company is always the caller's"},
		{`{"expires_in":60,"expires_at":"2999-01-01T00:00:00Z"}`, "expires_at", "not both"},
		{`{"expires_in":0}`, "expires_in", "between 1 and 63072000 seconds (730 days)"},
		{`{"expires_in":63072001}`, "expires_in", "between 1 and 63072000 seconds (730 days)"},
		{`{"expires_in":99999999999999999}`, "expires_in", "between 1 and 63072000 seconds (730 days)"},
		{`{"expires_at":"yesterday"}`, "expires_at", "RFC 3339"},
		{`{"rate_limit":"lots"}`, "rate_limit", "must be an integer"},
		{`{"scope":["agents:read"]}`, "scope", ""},
	} {
		field, msg := fieldError(t, post(tt.body))
		if field != tt.field || !strings.Contains(msg, tt.msg) || goDuration.MatchString(msg) {
			t.Errorf("%s: %s: %s, want %s: …%s…", tt.body, field, msg, tt.field, tt.msg)
		}
	}
	wantStatus(t, "array body", post(`[]`), 400, "invalid_request_error", "")
	if n := len(f.keySvc.created); n != len(want) {
		t.Errorf("refused bodies reached the service: %d keys asked for", n)
	}
	scoped := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeAgentsRead} })
	wantStatus(t, "create without keys:manage", s.do(req{method: "POST", path: "/api/v1/api-keys/", key: scoped, body: `{}`}),
		403, "permission_error", domain.MsgNoPermission)

	// The list shows no secret and no hash.
	res = s.do(req{method: "GET", path: "/api/v1/api-keys/", key: key})
	var keys []map[string]any
	if err := json.Unmarshal(res.body, &keys); err != nil || res.status != 200 || len(keys) != 4 {
		t.Fatalf("list: %d %s", res.status, res.body)
	}
	for _, k := range keys {
		if _, ok := k["key"]; ok || strings.Contains(string(res.body), "hash-") {
			t.Errorf("the list shows a secret or a hash: %v", k)
		}
	}
	id := created["id"].(string)
	if d := s.do(req{method: "DELETE", path: "/api/v1/api-keys/" + id + "/", key: key}); d.status != 204 || len(d.body) != 0 {
		t.Errorf("revoke: %d %s", d.status, d.body)
	}
	wantStatus(t, "revoke an unknown key", s.do(req{method: "DELETE", path: "/api/v1/api-keys/" + uuidOf(1) + "/", key: key}), 404, "not_found_error", "")
	if diff := cmp.Diff([]string{id}, f.keySvc.revoked); diff != "" {
		t.Errorf("revoked (-want +got):\n%s", diff)
	}
}

// TestTokenHandler: a token is exchanged for a key, with an empty body, never for a token.
func TestTokenHandler(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	for _, body := range []any{nil, `{}`} {
		res := s.do(req{method: "POST", path: "/api/v1/auth/token/", key: key, body: body})
		wantStatus(t, "token", res, 200, "", "")
		tok := res.json(t)
		if tok["token_type"] != "Bearer" || tok["expires_in"] != float64(900) || tok["access_token"] == "" {
			t.Errorf("token = %s", res.body)
		}
	}
	if field, _ := fieldError(t, s.do(req{method: "POST", path: "/api/v1/auth/token/", key: key, body: `{"expires_in":60}`})); field != "expires_in" {
		t.Errorf("token with a field: %s", field)
	}
	wantStatus(t, "token from a token", s.do(req{method: "POST", path: "/api/v1/auth/token/", header: map[string]string{"Authorization": "Bearer " + key}}),
		401, "authentication_error", domain.MsgBadCredentials)
	wantStatus(t, "token without credentials", s.do(req{method: "POST", path: "/api/v1/auth/token/"}), 401, "authentication_error", domain.MsgBadCredentials)
}

// uuidOf is a fixed UUID numbered n.
func uuidOf(n int) string { return fmt.Sprintf("3f1c2d4e-0000-4000-8000-%012d", n) }
