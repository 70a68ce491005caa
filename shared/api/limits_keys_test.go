package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestKeyLimitsDecoded: what the auth group reads of a key's limits (over the fake key service):
// limits.requests_per_minute is rate_limit by another name, a budget goes to the key as given,
// and each wrong value is a 400 naming its field under limits.
func TestKeyLimitsDecoded(t *testing.T) {
	s, f := newFakeStack(t)
	key := s.key("alice", "acme")
	post := func(body string) response {
		return s.do(req{method: "POST", path: "/api/v1/api-keys/", key: key, body: body})
	}
	wantStatus(t, "limits", post(`{"limits":{"requests_per_minute":7,"monthly_tokens":1000,"monthly_cost_usd":2.5}}`), 201, "", "")
	wantStatus(t, "both, equal", post(`{"rate_limit":9,"limits":{"requests_per_minute":9,"monthly_tokens":null}}`), 201, "", "")
	wantStatus(t, "none", post(`{}`), 201, "", "")
	f.keySvc.mu.Lock()
	got := f.keySvc.created
	f.keySvc.mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("%d keys created, want 3", len(got))
	}
	if in := got[0]; in.RateLimit != 7 || *in.Budget.MonthlyTokens != 1000 || *in.Budget.MonthlyCostUSD != 2.5 {
		t.Errorf("limits read as %+v %+v", in, in.Budget)
	}
	if in := got[1]; in.RateLimit != 9 || in.Budget.Set() {
		t.Errorf("rate_limit and requests_per_minute read as %+v", in)
	}
	if got[2].Budget.Set() {
		t.Errorf("no limits read as %+v", got[2].Budget)
	}

	for _, tc := range []struct{ body, field, msg string }{
		{`{"limits":{"monthly_tokens":0}}`, "limits.monthly_tokens", "positive integer"},
		{`{"limits":{"monthly_tokens":1.5}}`, "limits.monthly_tokens", "integer"},
		{`{"limits":{"monthly_tokens":"1000"}}`, "limits.monthly_tokens", "integer"},
		{`{"limits":{"monthly_cost_usd":-0.01}}`, "limits.monthly_cost_usd", "between 0"},
		{`{"limits":{"requests_per_minute":0}}`, "limits.requests_per_minute", "positive integer"},
		{`{"rate_limit":5,"limits":{"requests_per_minute":6}}`, "limits.requests_per_minute", "must equal rate_limit (5)"},
		{`{"limits":{"monthly":1}}`, "limits.monthly", "unknown field"},
		{`{"limits":[]}`, "limits", "object"},
	} {
		field, msg := fieldError(t, post(tc.body))
		if field != tc.field || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %s: %s, want %s: …%s…", tc.body, field, msg, tc.field, tc.msg)
		}
	}
}

// TestKeyLimitsShown: a key's limits are stored with it and shown on its create and list views,
// null where it has none; a key made by a budgeted key has its creator's budget (shared/auth
// holds the bounds).
func TestKeyLimitsShown(t *testing.T) {
	s := newStack(t)
	tokens := int64(5000)
	_, admin := s.operatorKey(auth.NewKey{Owner: "alice", Company: "limits-shown", Scopes: []string{auth.ScopeAdmin},
		Budget: domain.Budget{MonthlyTokens: &tokens}})
	res := s.do(req{method: "POST", path: "/api/v1/api-keys/", key: admin, body: `{"limits":{"requests_per_minute":30,"monthly_cost_usd":1.25}}`})
	wantStatus(t, "create", res, 201, "", "")
	var created struct {
		ID        string         `json:"id"`
		RateLimit int            `json:"rate_limit"`
		Limits    map[string]any `json:"limits"`
	}
	if err := json.Unmarshal(res.body, &created); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"requests_per_minute": 30.0, "monthly_tokens": 5000.0, "monthly_cost_usd": 1.25}
	if created.RateLimit != 30 || !equalJSON(created.Limits, want) {
		t.Errorf("created: rate_limit %d, limits %v, want 30 and %v", created.RateLimit, created.Limits, want)
	}
	var listed []struct {
		ID     string         `json:"id"`
		Limits map[string]any `json:"limits"`
	}
	if err := json.Unmarshal(s.ok("GET", "/api/v1/api-keys/", admin, nil).body, &listed); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, k := range listed {
		switch k.ID {
		case created.ID:
			seen++
			if !equalJSON(k.Limits, want) {
				t.Errorf("listed limits %v, want %v", k.Limits, want)
			}
		default: // the admin's own key
			seen++
			if w := map[string]any{"requests_per_minute": nil, "monthly_tokens": 5000.0, "monthly_cost_usd": nil}; !equalJSON(k.Limits, w) {
				t.Errorf("admin's limits %v, want %v", k.Limits, w)
			}
		}
	}
	if seen != 2 {
		t.Errorf("listed %d keys, want 2", seen)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
