package domain

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHasVisible(t *testing.T) {
	tests := map[string]bool{
		"Support Bot":            true,
		"a\u200b":                true,
		"Ünïcödé":                true,
		"助手":                     true,
		"🤖":                      true,
		"":                       false,
		"   \t\n":                false,
		"\u200b\u200c\u200d":     false, // zero-width space, non-joiner, joiner
		"\ufeff\u2060\u00ad":     false, // byte order mark, word joiner, soft hyphen
		"\u3164\u115f\uffa0":     false, // Hangul fillers
		"\u0301\u20dd":           false, // combining marks without a base
		"\u3000\u00a0\u2028":     false, // ideographic and no-break space, line separator
		"\ufe0f\U000e0100\u2800": false, // variation selectors, blank Braille pattern
		"\x01\x7f":               false,
	}
	for in, want := range tests {
		if got := HasVisible(in); got != want {
			t.Errorf("HasVisible(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestInvisibleNamesAreRefused(t *testing.T) {
	tests := []struct {
		name, cfg string
		want      []string
	}{
		{"zero-width name", `{"name":"\u200b\u200d\ufeff"}`, []string{"name"}},
		{"visible with zero-width", `{"name":"bot\u200b"}`, nil},
		{"graph node of zero-width name", `{"name":"g","agents":[{"name":"a"},{"name":"\u2060"}],"edges":[{"from":"__start__","to":"a"},{"from":"a","to":"__end__"}]}`, []string{"agents.1.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fields(ValidateAgentConfig(parse(t, tt.cfg), ""))); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJSONType(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{[]any{1}, "an array"},
		{map[string]any{}, "an object"},
		{json.Number("1"), "a number"},
		{1.5, "a number"},
		{"s", "a string"},
		{true, "a boolean"},
		{nil, "null"},
		{struct{}{}, "a value of an unknown type"},
	}
	for _, tt := range tests {
		if got := JSONType(tt.v); got != tt.want {
			t.Errorf("JSONType(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestTransliterate(t *testing.T) {
	tests := map[string]string{
		"Ünïcödé Bot": "Unicode Bot",
		"Straße":      "Strasse",
		"Ærø":         "Aero",
		"Œuvre":       "Oeuvre",
		"Щука":        "Shchuka",
		"助手 bot":      "助手 bot",
	}
	for in, want := range tests {
		if got := Transliterate(in); got != want {
			t.Errorf("Transliterate(%q) = %q, want %q", in, got, want)
		}
	}
}
