package embeddings_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
)

// counted is what each provider's embedder offers beside Embed: the tokens it was billed for.
type counted interface {
	EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error)
}

func words(texts []string) int {
	n := 0
	for _, t := range texts {
		n += len(strings.Fields(t))
	}
	return n
}

// TestEmbedCountsProviderTokens: Bedrock's count is the sum of Titan's inputTextTokenCount over
// its calls, an OpenAI-compatible server's the sum of usage.prompt_tokens over the batches (the
// fakes count words, which no estimate would match), and a server that leaves usage out is
// estimated from the texts rather than counted as nothing. The vectors are Embed's.
func TestEmbedCountsProviderTokens(t *testing.T) {
	in := texts(7)
	tests := []struct {
		name string
		emb  embeddings.Embedder
		want int // 0: an estimate, more than the words
	}{
		{"bedrock", bedrockEmbedder(t, nil, embeddings.Options{}, domain.Embedding{Provider: "bedrock"}), words(in)},
		{"openai", openaiEmbedder(t, &fakeOpenAI{native: 1536}, "/v1", domain.Embedding{Model: "text-embedding-3-small"}), words(in)},
		{"openai without usage", openaiEmbedder(t, &fakeOpenAI{native: 1536, noUsage: true}, "/v1", domain.Embedding{Model: "text-embedding-3-small"}), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := tc.emb.(counted)
			if !ok {
				t.Fatalf("%T does not count tokens", tc.emb)
			}
			vecs, n, err := c.EmbedCounted(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := tc.emb.Embed(context.Background(), in)
			if err != nil || len(vecs) != len(in) || len(plain) != len(in) {
				t.Fatalf("%d vectors, Embed %d, %v", len(vecs), len(plain), err)
			}
			for i := range vecs {
				if vecs[i][0] != plain[i][0] {
					t.Errorf("vector %d differs from Embed's", i)
				}
			}
			switch {
			case tc.want > 0 && n != tc.want:
				t.Errorf("tokens = %d, want %d", n, tc.want)
			case tc.want == 0 && n <= words(in):
				t.Errorf("estimated tokens = %d, want an estimate above the %d words", n, words(in))
			}
		})
	}
}
