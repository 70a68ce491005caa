package domain_test

import (
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

func TestValidSessionTitle(t *testing.T) {
	for _, tc := range []struct {
		title string
		want  bool
	}{
		{"Refund questions", true},
		{"x", true},
		{" leading and trailing ", true},
		{"Émile — 返品 🙂", true},
		{strings.Repeat("é", domain.MaxSessionTitle), true}, // characters, not bytes
		{strings.Repeat("a", domain.MaxSessionTitle+1), false},
		{"", false},
		{"   ", false},
		{"two\nlines", false},
		{"tab\there", false},
		{"nul\x00", false},
		{"del\x7f", false},
		{"c1\u0085", false},
		{"bad \xff utf-8", false},
	} {
		if got := domain.ValidSessionTitle(tc.title); got != tc.want {
			t.Errorf("ValidSessionTitle(%q) = %v, want %v", tc.title, got, tc.want)
		}
	}
}
