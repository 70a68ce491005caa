package engine

import (
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

func TestContextWindow(t *testing.T) {
	tests := []struct {
		provider, model string
		want            int
	}{
		{"local", "dev", LocalContextWindow},
		{"local", "claude", LocalContextWindow},
		{"bedrock", "global.anthropic.claude-haiku-4-5-20251001-v1:0", 200_000},
		{"", "us.amazon.nova-pro-v1:0", 300_000},
		{"bedrock", "amazon.nova-micro-v1:0", 128_000},
		{"bedrock", "mistral.mistral-7b-instruct-v0:2", 32_000},
		{"bedrock", "mistral.mistral-large-2407-v1:0", 128_000},
		{"openai", "gpt-4o-mini", 128_000},
		{"openai", "GPT-4.1", 1_000_000},
		{"openai", "o3-mini", 200_000},
		{"bedrock", "cohere.command-r-v1:0", DefaultContextWindow}, // "o1" is not a part of "…-v1:0"
		{"bedrock", "", DefaultContextWindow},
	}
	for _, tt := range tests {
		if got := ContextWindow(tt.provider, tt.model); got != tt.want {
			t.Errorf("ContextWindow(%q, %q) = %d, want %d", tt.provider, tt.model, got, tt.want)
		}
	}
}

func TestHistoryBudget(t *testing.T) {
	g := mustGraph(t, `{"name":"g","agents":[
		{"name":"a","llm_config":{"provider":"bedrock","model":"anthropic.claude-sonnet-4","max_tokens":8000}},
		{"name":"b","llm_config":{"provider":"local"}}]}`, nil)
	// The smallest node budget: b's, half the local window less the default max_tokens.
	if got, want := HistoryBudget(g), LocalContextWindow/2-domain.DefaultMaxTokens; got != want {
		t.Errorf("budget = %d, want %d", got, want)
	}
	delete(g.Nodes, "b")
	if got, want := HistoryBudget(g), 200_000/2-8000; got != want {
		t.Errorf("budget = %d, want %d", got, want)
	}
	g.Nodes["a"].MaxTokens = 150_000
	if got := HistoryBudget(g); got != 0 {
		t.Errorf("budget = %d, want 0 when max_tokens takes the window", got)
	}
	if got := EstimateTokens("héllo"); got != 2 {
		t.Errorf("EstimateTokens = %d, want 2 (6 bytes / 4, rounded up)", got)
	}
}
