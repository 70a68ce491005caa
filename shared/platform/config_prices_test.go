package platform

import (
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/pricing"
)

// TestLoadConfigModelPrices: MODEL_PRICES adds prices at load; a malformed value stops the
// function at start with a message naming the variable, not a 500 on each request.
func TestLoadConfigModelPrices(t *testing.T) {
	clearEnv(t)
	t.Setenv("MODEL_PRICES", `{"openai/house": {"input_per_mtok": 0.5, "output_per_mtok": 1}}`)
	c, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ModelPrices["openai/house"]; got != (pricing.Price{InputPerMTok: 0.5, OutputPerMTok: 1}) {
		t.Errorf("ModelPrices = %v", c.ModelPrices)
	}
	for _, bad := range []string{`{"openai/house": {"input_per_mtok": 1}}`, `{"house": {"input_per_mtok": 1, "output_per_mtok": 1}}`, `[`} {
		t.Setenv("MODEL_PRICES", bad)
		if _, err := LoadConfig(); err == nil || !strings.HasPrefix(err.Error(), "config: MODEL_PRICES: ") {
			t.Errorf("MODEL_PRICES=%s: %v, want a config error naming it", bad, err)
		}
	}
}
