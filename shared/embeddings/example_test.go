package embeddings_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
)

// A command such as `kb embed --provider local` resolves the flags as a knowledge base's
// embedding_config and embeds with the result.
func Example() {
	ctx := context.Background()
	p, err := embeddings.New(embeddings.Options{DefaultProvider: "local", Local: local.Loader(".cache/models")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	cfg, fields := p.Resolve(domain.Embedding{Provider: "local"})
	if fields != nil {
		fmt.Fprintln(os.Stderr, domain.Invalid(fields))
		return
	}
	e, err := p.Embedder(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	vectors, err := e.Embed(ctx, []string{"How long do I have to return an item?"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for _, v := range vectors {
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"embedding": v})
	}
}
