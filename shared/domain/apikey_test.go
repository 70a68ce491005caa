package domain

import (
	"strings"
	"testing"
)

func TestPrincipalCan(t *testing.T) {
	tests := []struct {
		scopes []string
		scope  string
		want   bool
	}{
		{nil, ScopeAgentsWrite, true},
		{nil, ScopeKeysManage, true},
		{nil, ScopeAdmin, false}, // an unscoped key is no admin
		{[]string{ScopeAdmin}, ScopeAdmin, true},
		{[]string{ScopeAdmin}, ScopeSessionsWrite, true},
		{[]string{ScopeAgentsWrite}, ScopeAgentsRead, true},
		{[]string{ScopeAgentsRead}, ScopeAgentsWrite, false},
		{[]string{ScopeKeysManage}, ScopeAdmin, false},
	}
	for _, tt := range tests {
		if got := (Principal{Scopes: tt.scopes}).Can(tt.scope); got != tt.want {
			t.Errorf("%v can %s = %v, want %v", tt.scopes, tt.scope, got, tt.want)
		}
	}
}

func TestValidIdentifier(t *testing.T) {
	for s, want := range map[string]bool{
		"alice": true, "alice@acme.com": true, "a.b_c-d+e": true, "A1": true, strings.Repeat("a", 128): true,
		"": false, " alice": false, "-alice": false, "a#b": false, "a/b": false, "a b": false, "ä": false, strings.Repeat("a", 129): false,
	} {
		if got := ValidIdentifier(s); got != want {
			t.Errorf("ValidIdentifier(%q) = %v, want %v", s, got, want)
		}
	}
}
