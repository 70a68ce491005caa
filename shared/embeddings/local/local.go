// Package local is the local embedding provider: Universal Sentence Encoder lite run in-process
// by shared/localembed. It is a package of its own so that only the builds that offer the
// provider (the dev server, the tests, scripts/kb, scripts/invoke's bootstraps) link the model's
// code; the Lambda builds (tag nolocal, see shared/app) leave it out.
//
// The provider embeds each text with its whitespace normalised (Readable): the model's tokenizer
// knows only the space, so a line break or a tab becomes an unknown token and the word after it
// loses its word-start piece; collapsed, the same words embed as the sentence the model was
// trained on. Every caller (ingestion's chunks, search's queries) goes through here, so
// documents and queries are read alike; the text stored and returned stays the caller's own.
package local

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/glove"
	"github.com/agentorch/agentorch/shared/localembed"
)

// Loader returns the loader of embeddings.Options.Local: it fetches a model's files into dir if
// they are missing (localembed.EnsureFiles, and glove.EnsureFiles for use-lite-glove; the
// repository uses .cache/models) and loads them. The two models share one use-lite.
func Loader(dir string) embeddings.LocalLoader {
	var use *localembed.Model // Providers calls the loader one call at a time
	return func(ctx context.Context, id string) (embeddings.Embedder, error) {
		if id != embeddings.ModelUSELite && id != embeddings.ModelUSEGlove {
			return nil, fmt.Errorf("no local model %q", id)
		}
		if use == nil {
			files, err := localembed.EnsureFiles(ctx, dir)
			if err != nil {
				return nil, err
			}
			if use, err = localembed.Load(files); err != nil {
				return nil, err
			}
		}
		if id == embeddings.ModelUSELite {
			return embedder{model: use}, nil
		}
		files, err := glove.EnsureFiles(ctx, dir)
		if err != nil {
			return nil, err
		}
		g, err := glove.Load(files)
		if err != nil {
			return nil, err
		}
		return joined{embedder: embedder{model: use}, glove: g}, nil
	}
}

// EnsureFiles fetches into dir whatever the local models' files lack (use-lite's, then the GloVe
// vectors of use-lite-glove), so that the loader later reads them offline: for callers that
// fetch ahead of the first knowledge base (make dev, make test).
func EnsureFiles(ctx context.Context, dir string) error {
	if _, err := localembed.EnsureFiles(ctx, dir); err != nil {
		return err
	}
	_, err := glove.EnsureFiles(ctx, dir)
	return err
}

// Readable is the text the provider embeds for text: every run of white space (spaces, tabs,
// line breaks, and the other code points unicode.IsSpace accepts) becomes one space, and the
// ends are trimmed. A text that is already so is returned as it is, without copying.
func Readable(text string) string {
	prevSpace := true // so that a leading space counts as a change
	for _, r := range text {
		sp := unicode.IsSpace(r)
		if sp && (r != ' ' || prevSpace) {
			return strings.Join(strings.Fields(text), " ")
		}
		prevSpace = sp
	}
	if prevSpace && text != "" { // a trailing space
		return strings.Join(strings.Fields(text), " ")
	}
	return text
}

// embedder is the local provider: the model's own tokenizer counts tokens exactly.
type embedder struct{ model *localembed.Model }

func (e embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, _, err := e.EmbedCounted(ctx, texts)
	return out, err
}

// EmbedCounted is Embed that also says how many tokens the model read: its tokenizer's count of
// each text as embedded (Readable), at most MaxTokens (what follows is not embedded).
func (e embedder) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	if len(texts) == 0 {
		return [][]float32{}, 0, nil
	}
	read := make([]string, len(texts))
	for i, t := range texts {
		read[i] = Readable(t)
	}
	v, tokens, err := e.model.EmbedCounted(ctx, read)
	if err != nil {
		return nil, 0, fmt.Errorf("local embeddings: %w", err)
	}
	return v, tokens, nil
}

func (e embedder) Dimensions() int { return e.model.Dimensions() }
func (e embedder) MaxTokens() int  { return e.model.MaxTokens() }

// Tokens bounds from above the tokens the model reads of text: the larger of the counts of the
// text as given and as embedded (Readable). The first keeps chunk boundaries (split_by "token")
// where they were before whitespace was normalised; the second makes sure that a chunk that fits
// is embedded whole even where normalising lengthens it, as it does where a line break or tab
// stands before a character the vocabulary lacks ("\n•" is one unknown token, " •" two tokens:
// TestReadableCanAddTokens), so neither count alone will do. Both are counts only
// (localembed's Count), which build no ids.
func (e embedder) Tokens(text string) int {
	n := e.model.Count(text)
	if r := Readable(text); r != text {
		n = max(n, e.model.Count(r))
	}
	return n
}

func (e embedder) Name() string { return embeddings.ModelUSELite }

// useWeight is use-lite's share of the joined model's cosine (GloVe's is the rest). Measured on
// the three eval sets (shared/knowledge/glove_eval_bench_test.go, docs/knowledge.md): dense
// recall@5 rose from use-lite's .333/.577/.357 to .367/.808/.429 at 0.3, 0.5 and 0.7 alike; fused
// with BM25 as the hybrid strategies do, only 0.3 kept hybrid at or above both parts on all three.
const useWeight = 0.3

// joined is the use-lite-glove model: use-lite's unit vector scaled by √useWeight followed by
// GloVe's scaled by √(1−useWeight), so that the cosine of two joined vectors (both unit length)
// is useWeight·cos(use-lite) + (1−useWeight)·cos(GloVe): one knn field ranks by both. It reads
// and counts tokens as use-lite does (GloVe reads every word and costs ~35 µs a chunk).
type joined struct {
	embedder
	glove *glove.Model
}

func (j joined) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, _, err := j.EmbedCounted(ctx, texts)
	return out, err
}

// EmbedCounted is Embed with use-lite's count of the tokens it read.
func (j joined) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	use, tokens, err := j.embedder.EmbedCounted(ctx, texts)
	if err != nil || len(texts) == 0 {
		return use, tokens, err
	}
	gv := j.glove.Embed(texts)
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = Join(use[i], gv[i], useWeight)
	}
	return out, tokens, nil
}

// Join is √w·a followed by √(1−w)·b: for unit a and b (and a2, b2), the dot product of two joined
// vectors is w·(a·a2) + (1−w)·(b·b2), and a joined vector has unit length.
func Join(a, b []float32, w float64) []float32 {
	wa, wb := float32(math.Sqrt(w)), float32(math.Sqrt(1-w))
	v := make([]float32, 0, len(a)+len(b))
	for _, x := range a {
		v = append(v, wa*x)
	}
	for _, x := range b {
		v = append(v, wb*x)
	}
	return v
}

func (j joined) Dimensions() int { return j.embedder.Dimensions() + j.glove.Dimensions() }
func (j joined) Name() string    { return embeddings.ModelUSEGlove }
