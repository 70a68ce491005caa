package engine

import "strings"

// DefaultContextWindow is the context window, in tokens, assumed for a model ContextWindow does
// not know, including the deployment's default model when a configuration names none.
const DefaultContextWindow = 128_000

// LocalContextWindow is the context window given to the local development model, which has none:
// small, so that the history budget shows offline.
const LocalContextWindow = 32_000

// contextWindows are known context windows by a fragment of the model id, most specific first.
var contextWindows = []struct {
	fragment string
	tokens   int
}{
	{"claude", 200_000},
	{"nova-premier", 1_000_000},
	{"nova-pro", 300_000},
	{"nova-lite", 300_000},
	{"nova-micro", 128_000},
	{"llama3", 128_000},
	{"llama-3", 128_000},
	{"mistral-large", 128_000},
	{"mistral", 32_000},
	{"titan-text", 8_000},
	{"gpt-4.1", 1_000_000},
	{"gpt-5", 400_000},
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4", 8_000},
	{"gpt-3.5", 16_000},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4", 200_000},
}

// ContextWindow returns the context window in tokens of a provider's model: the local model's
// LocalContextWindow, a known model family's window (a part of the model id, case-insensitive),
// or DefaultContextWindow.
func ContextWindow(provider, model string) int {
	if provider == "local" {
		return LocalContextWindow
	}
	id := strings.ToLower(model)
	for _, w := range contextWindows {
		if hasFamily(id, w.fragment) {
			return w.tokens
		}
	}
	return DefaultContextWindow
}

// hasFamily reports whether fragment starts a part of id: at its start or after '.', '/', ':'
// or '-' ("us.anthropic.claude-…", "o3-mini"), so that "o1" does not match "…-v1:0".
func hasFamily(id, fragment string) bool {
	for i := 0; i <= len(id)-len(fragment); i++ {
		if strings.HasPrefix(id[i:], fragment) && (i == 0 || strings.ContainsRune("./:-", rune(id[i-1]))) {
			return true
		}
	}
	return false
}

// EstimateTokens estimates the tokens of text as its UTF-8 bytes ÷ 4, rounded up: close for
// English prose, low for code and most other languages, hence the margin in HistoryBudget.
func EstimateTokens(text string) int {
	return (len(text) + 3) / 4
}

// HistoryBudget returns how many estimated tokens of stored history an execution of g gives the
// models: for each node half its model's context window (the other half is room for the system
// prompt, the new message, the messages of earlier steps and the estimate's error) less its
// max_tokens, and the smallest of these over the nodes. It is never negative.
func HistoryBudget(g *Graph) int {
	budget := -1
	for _, n := range g.Nodes {
		b := max(ContextWindow(n.Provider, n.Model)/2-n.MaxTokens, 0)
		if budget < 0 || b < budget {
			budget = b
		}
	}
	return max(budget, 0)
}
