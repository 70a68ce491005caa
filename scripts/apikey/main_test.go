package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

func TestLifetimeFlag(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "730d": 730 * 24 * time.Hour, "24h": 24 * time.Hour, "90m": 90 * time.Minute} {
		var l lifetime
		if err := l.Set(in); err != nil || time.Duration(l) != want {
			t.Errorf("%s: got %v %v, want %v", in, time.Duration(l), err, want)
		}
	}
	for _, in := range []string{"", "d", "1.5d", "-3d", "forever"} {
		var l lifetime
		if err := l.Set(in); err == nil {
			t.Errorf("%q accepted as %v", in, time.Duration(l))
		}
	}
	if got := lifetime(90 * 24 * time.Hour); got.String() != "90d" {
		t.Errorf("default shown as %q", got.String())
	}
}

func TestFlagErrorNamesFlags(t *testing.T) {
	err := flagError(domain.Invalid([]domain.FieldError{{Field: "expires_in", Message: "must be between 1 second and 730 days"}, {Field: "scopes.1", Message: "unknown scope"},
		{Field: "limits.monthly_tokens", Message: "must be a positive integer"}}))
	if want := "--ttl: must be between 1 second and 730 days; --scopes: unknown scope; --monthly-tokens: must be a positive integer"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}

// TestListJSON: list --json prints what the API shows of a key (never its hash or ancestors),
// under the names it always had, and its limits (null where none).
func TestListJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	parent := "k-0"
	k := &domain.APIKey{ID: "k-1", Name: "ci", Prefix: "ak_abc", Hash: "h-secret", Owner: "alice", Company: "acme", ParentID: &parent,
		Ancestors: []string{"k-0"}, Scopes: []string{domain.ScopeAgentsRead}, RateLimit: 60, ExpiresAt: at, CreatedAt: at}
	var b strings.Builder
	if err := printJSON(&b, []*domain.APIKey{k}); err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "id": "k-1",
    "name": "ci",
    "prefix": "ak_abc",
    "owner": "alice",
    "company": "acme",
    "parent_id": "k-0",
    "scopes": [
      "agents:read"
    ],
    "rate_limit": 60,
    "limits": {
      "requests_per_minute": 60,
      "monthly_tokens": null,
      "monthly_cost_usd": null
    },
    "expires_at": "2026-01-02T03:04:05Z",
    "revoked_at": null,
    "created_at": "2026-01-02T03:04:05Z"
  }
]
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("list --json (-want +got):\n%s", diff)
	}
}
