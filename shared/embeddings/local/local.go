// Package local is the local embedding provider: Universal Sentence Encoder lite run in-process
// by shared/localembed. It is a package of its own so that only the builds that offer the
// provider (the dev server, the tests, scripts/kb, scripts/invoke's bootstraps) link the model's
// code; the Lambda builds (tag nolocal, see shared/app) leave it out.
package local

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/localembed"
)

// Loader returns the loader of embeddings.Options.Local: it fetches the model's files into dir if
// they are missing (localembed.EnsureFiles; the repository uses .cache/models) and loads them.
func Loader(dir string) embeddings.LocalLoader {
	return func(ctx context.Context) (embeddings.Embedder, error) {
		files, err := localembed.EnsureFiles(ctx, dir)
		if err != nil {
			return nil, err
		}
		m, err := localembed.Load(files)
		if err != nil {
			return nil, err
		}
		return embedder{model: m}, nil
	}
}

// embedder is the local provider: the model's own tokenizer counts tokens exactly.
type embedder struct{ model *localembed.Model }

func (e embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, _, err := e.EmbedCounted(ctx, texts)
	return out, err
}

// EmbedCounted is Embed that also says how many tokens the model read: its tokenizer's count of
// each text, at most MaxTokens (what follows is not embedded).
func (e embedder) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	if len(texts) == 0 {
		return [][]float32{}, 0, nil
	}
	v, err := e.model.Embed(ctx, texts)
	if err != nil {
		return nil, 0, fmt.Errorf("local embeddings: %w", err)
	}
	tokens := 0
	for _, t := range texts {
		tokens += min(len(e.model.Tokenize(t)), e.model.MaxTokens())
	}
	return v, tokens, nil
}

func (e embedder) Dimensions() int        { return e.model.Dimensions() }
func (e embedder) MaxTokens() int         { return e.model.MaxTokens() }
func (e embedder) Tokens(text string) int { return len(e.model.Tokenize(text)) }
func (e embedder) Name() string           { return embeddings.ModelUSELite }
