package domain

import (
	"slices"
	"testing"
)

// TestConfigScopesNeeded: a configuration naming knowledge bases (in any node, enabled or not)
// needs knowledge:read, which Permit asks of the caller; one naming none needs nothing.
func TestConfigScopesNeeded(t *testing.T) {
	kb := map[string]any{"name": "docs", "knowledge_base_id": "k1", "enabled": false}
	configs := map[string]map[string]any{
		"flat with a disabled knowledge base": {"name": "a", "knowledge_bases": []any{kb}},
		"graph node with one": {"name": "g", "agents": []any{
			map[string]any{"name": "plain"},
			map[string]any{"name": "kb", "knowledge_bases": []any{kb}}},
			"edges": []any{map[string]any{"from": "__start__", "to": "plain"}, map[string]any{"from": "plain", "to": "kb"},
				map[string]any{"from": "kb", "to": "__end__"}}},
		"none": {"name": "a"},
	}
	for name, cfg := range configs {
		g, errs := ParseConfig(cfg, nil, "")
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs)
		}
		names := name != "none"
		if got := g.ScopesNeeded(); slices.Equal(got, []string{ScopeKnowledgeRead}) != names || !names && len(got) != 0 {
			t.Errorf("%s: ScopesNeeded = %v", name, got)
		}
		for _, tt := range []struct {
			scopes []string
			ok     bool
		}{
			{[]string{ScopeSessionsWrite}, !names},
			{[]string{ScopeAgentsWrite, ScopeSessionRead}, !names},
			{[]string{ScopeSessionsWrite, ScopeKnowledgeRead}, true},
			{[]string{ScopeKnowledgeWrite}, true},
			{[]string{ScopeAdmin}, true},
			{nil, true},
		} {
			err := g.Permit(Principal{Scopes: tt.scopes})
			if (err == nil) != tt.ok || err != nil && (KindOf(err) != KindPermission || MessageOf(err) != MsgNoPermission) {
				t.Errorf("%s, scopes %v: Permit = %v, want ok %t", name, tt.scopes, err, tt.ok)
			}
		}
	}
}

// TestGrants: a principal's grants are the scopes it holds, never empty for a key that may do
// anything, so that a recorded copy cannot read as an unscoped key.
func TestGrants(t *testing.T) {
	for _, tt := range []struct {
		scopes, want []string
	}{
		{nil, []string{ScopeAgentsRead, ScopeAgentsWrite, ScopeKeysManage, ScopeSessionRead, ScopeSessionsWrite, ScopeKnowledgeRead, ScopeKnowledgeWrite, ScopeApprovals, ScopeWebhooksRead, ScopeWebhooksWrite, ScopeUsageRead, ScopeMemoryRead, ScopeMemoryWrite}},
		{[]string{ScopeSessionsWrite}, []string{ScopeSessionRead, ScopeSessionsWrite}},
		{[]string{ScopeAdmin}, KnownScopes},
	} {
		got := Principal{Scopes: tt.scopes}.Grants()
		if !slices.Equal(got, tt.want) {
			t.Errorf("Grants of %v = %v, want %v", tt.scopes, got, tt.want)
		}
		for _, s := range KnownScopes {
			if (Principal{Scopes: got}).Can(s) != (Principal{Scopes: tt.scopes}).Can(s) {
				t.Errorf("grants %v and scopes %v differ on %s", got, tt.scopes, s)
			}
		}
	}
}
