package domain

import (
	"fmt"
	"slices"
	"testing"
)

// TestLLMParamsMatchValidation: each parameter the catalog announces is accepted by
// ValidateAgentConfig at its bounds and refused just outside them (and as a fraction when it is
// an integer), so that a form holding values to the catalog's limits is never refused by the
// server, nor lets through what the server refuses.
func TestLLMParamsMatchValidation(t *testing.T) {
	params := LLMParams()
	if len(params) == 0 {
		t.Fatal("no parameters")
	}
	check := func(name string, v float64, wantOK bool) {
		t.Helper()
		cfg := parse(t, fmt.Sprintf(`{"name":"a","llm_config":{%q:%v}}`, name, v))
		errs := ValidateAgentConfig(cfg, "")
		if got := !slices.Contains(fields(errs), "llm_config."+name); got != wantOK {
			t.Errorf("llm_config.%s = %v: accepted %v, want %v (%v)", name, v, got, wantOK, errs)
		}
	}
	for _, p := range params {
		step := 0.01
		if p.Integer {
			step = 1
			check(p.Name, p.Min+0.5, false)
		}
		check(p.Name, p.Min, true)
		check(p.Name, p.Max, true)
		check(p.Name, p.Min-step, false)
		check(p.Name, p.Max+step, false)
		if p.Default != nil && (*p.Default < p.Min || *p.Default > p.Max) {
			t.Errorf("%s: default %v outside [%v, %v]", p.Name, *p.Default, p.Min, p.Max)
		}
	}
}
