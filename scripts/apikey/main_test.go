package main

import (
	"testing"
	"time"

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
	err := flagError(domain.Invalid([]domain.FieldError{{Field: "expires_in", Message: "must be between 1 second and 730 days"}, {Field: "scopes.1", Message: "unknown scope"}}))
	if want := "--ttl: must be between 1 second and 730 days; --scopes: unknown scope"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}
