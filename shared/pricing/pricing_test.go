package pricing

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBookCost(t *testing.T) {
	b := NewBook(Table{"openai/gpt-4.1-mini": {1, 2}, "openai/house-model": {10, 20}},
		Defaults{Provider: "bedrock", Models: map[string]string{"bedrock": "amazon.nova-lite-v1:0", "openai": "gpt-4.1-mini"}})
	tests := []struct {
		provider, model string
		in, out         int
		want            float64
		ok              bool
	}{
		{"bedrock", "amazon.nova-pro-v1:0", 1_000_000, 1_000_000, 0.80 + 3.20, true},
		{"bedrock", "global.anthropic.claude-haiku-4-5-20251001-v1:0", 2000, 500, (2000*1.00 + 500*5.00) / 1e6, true},
		{"", "", 1_000_000, 0, 0.06, true},                                 // the default provider's default model
		{"openai", "", 0, 1_000_000, 2, true},                              // overridden price of the default model
		{"openai", "house-model", 100, 100, (100*10 + 100*20) / 1e6, true}, // added by the override
		{"local", "anything", 5000, 5000, 0, true},                         // offline: free
		{"", "local-model", 1, 1, 0.06 / 1e6 * 1, false},                   // unknown bedrock model
		{"bedrock", "us.anthropic.claude-haiku-4-5-20251001-v1:0", 1, 1, 0, false},
		{"fake", "m1", 1, 1, 0, false},
	}
	for _, tt := range tests {
		got, ok := b.Cost(tt.provider, tt.model, tt.in, tt.out)
		if ok != tt.ok || (ok && !near(got, tt.want)) {
			t.Errorf("Cost(%q, %q, %d, %d) = %v, %v; want %v, %v", tt.provider, tt.model, tt.in, tt.out, got, ok, tt.want, tt.ok)
		}
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 }

func TestMeter(t *testing.T) {
	var m Meter
	if got := m.Total(); got == nil || *got != 0 {
		t.Fatalf("empty meter = %v, want 0", got)
	}
	m.Add(0.5, true)
	m.Add(0.25, true)
	if got := m.Total(); got == nil || *got != 0.75 {
		t.Fatalf("Total = %v, want 0.75", got)
	}
	m.Add(0, false)
	m.Add(1, true)
	if got := m.Total(); got != nil {
		t.Fatalf("Total after an unpriced call = %v, want nil", *got)
	}
}

func TestParse(t *testing.T) {
	got, err := Parse(` {"bedrock/x.y:0": {"input_per_mtok": 1.5, "output_per_mtok": 0}} `)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Table{"bedrock/x.y:0": {1.5, 0}}, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if got, err := Parse(""); err != nil || got != nil {
		t.Errorf("Parse(\"\") = %v, %v; want no override", got, err)
	}
	bad := map[string]string{
		`[1]`:  "not a JSON object",
		`null`: "not a JSON object",
		`{"x": {"input_per_mtok": 1, "output_per_mtok": 1}}`:          "provider/model",
		`{"/m": {"input_per_mtok": 1, "output_per_mtok": 1}}`:         "provider/model",
		`{"openai/m": {"input_per_mtok": 1}}`:                         "both required",
		`{"openai/m": null}`:                                          "both required",
		`{"openai/m": {"input_per_mtok": -1, "output_per_mtok": 1}}`:  "not negative",
		`{"openai/m": {"input": 1, "output_per_mtok": 1}}`:            "unknown field",
		`{"openai/m": {"input_per_mtok": "1", "output_per_mtok": 1}}`: "not a JSON object",
		`{} {}`: "trailing",
	}
	for in, want := range bad {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestListPricesAreValid(t *testing.T) {
	for k, p := range ListPrices() {
		if provider, model, ok := strings.Cut(k, "/"); !ok || provider == "" || model == "" || !valid(p.InputPerMTok) || !valid(p.OutputPerMTok) || p.InputPerMTok == 0 {
			t.Errorf("%s: %+v", k, p)
		}
	}
}
