package domain

import "context"

// Embedder turns texts into vectors of one embedding space. It is the one port between the
// knowledge feature, which embeds chunks and queries with it, and the embedding adapters
// (shared/embeddings and its local model), which implement it: declared here because each side
// may import domain and neither may import the other.
type Embedder interface {
	// Embed returns one unit vector of Dimensions floats per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dimensions() int
	// MaxTokens is how many tokens of a text the model reads; Tokens counts (or bounds from
	// above, where the model's tokenizer is not at hand) the tokens of a text, so that no part of
	// a chunk goes unembedded silently.
	MaxTokens() int
	Tokens(text string) int
	// Name is the model's slug for index names ("use-lite", "titan-embed-text-v2").
	Name() string
}
