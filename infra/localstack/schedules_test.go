package localstack_test

import (
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
)

// TestRate reads EventBridge's rate expressions and refuses what the stand-in cannot run.
func TestRate(t *testing.T) {
	for expr, want := range map[string]time.Duration{
		"rate(1 minute)": time.Minute, "rate(5 minutes)": 5 * time.Minute, "rate(2 hours)": 2 * time.Hour, "rate(1 day)": 24 * time.Hour,
	} {
		if got, err := localstack.Rate(expr); err != nil || got != want {
			t.Errorf("Rate(%q) = %v, %v; want %v", expr, got, err, want)
		}
	}
	for _, bad := range []string{"cron(0 12 * * ? *)", "rate(0 minutes)", "rate(1 fortnight)", "rate(x minutes)", "rate(1 minute"} {
		if _, err := localstack.Rate(bad); err == nil {
			t.Errorf("Rate(%q): no error", bad)
		}
	}
}
