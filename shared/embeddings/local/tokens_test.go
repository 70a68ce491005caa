package local_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/localembed"
)

// localEmbedder is the local provider's use-lite over the repository's model cache, and the
// model itself.
func localEmbedder(t *testing.T) (domain.Embedder, *localembed.Model) {
	t.Helper()
	ctx := context.Background()
	cache := modelCache(t)
	p, err := embeddings.New(embeddings.Options{Local: local.Loader(cache)})
	if err != nil {
		t.Fatal(err)
	}
	e, err := p.Embedder(ctx, domain.Embedding{Model: "use-lite"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := localembed.EnsureFiles(ctx, cache)
	if err != nil {
		t.Fatal(err)
	}
	m, err := localembed.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

// TestReadableCanAddTokens: collapsing whitespace can lengthen a text for the model. A line
// break is an unknown token, and so is a character the vocabulary lacks after it, and a run of
// unknowns is one token; a space there is a "▁" of its own before the unknown. So the count of
// the text as given does not bound what is embedded, and Tokens takes the larger of the two.
func TestReadableCanAddTokens(t *testing.T) {
	e, m := localEmbedder(t)
	s := "All rights reserved.\n© 2024 Example Ltd."
	raw, read := len(m.Tokenize(s)), len(m.Tokenize(local.Readable(s)))
	if read <= raw {
		t.Fatalf("as given %d tokens, as embedded %d: want more as embedded", raw, read)
	}
	if got := e.Tokens(s); got != read {
		t.Errorf("Tokens = %d, want %d (as embedded)", got, read)
	}
	// And the other way: tabs and line breaks before words the vocabulary knows cost tokens
	// that collapsing removes.
	s = "Hello world.\nNew line\tTab"
	raw, read = len(m.Tokenize(s)), len(m.Tokenize(local.Readable(s)))
	if raw <= read {
		t.Fatalf("as given %d tokens, as embedded %d: want more as given", raw, read)
	}
	if got := e.Tokens(s); got != raw {
		t.Errorf("Tokens = %d, want %d (as given)", got, raw)
	}
}

// chunkTexts are the texts whose chunk boundaries TestTokensKeepChunkBoundaries pins: the three
// retrieval eval corpora (prose, a licence, a manual) and the passages with tabs and line breaks
// of shared/localembed's testdata.
func chunkTexts(t *testing.T) map[string][]string {
	t.Helper()
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var passages []string
	if err := json.Unmarshal([]byte(read("../../localembed/testdata/spec-and-licence.json")), &passages); err != nil {
		t.Fatal(err)
	}
	return map[string][]string{
		"persuasion": {read("../../chunk/testdata/persuasion.txt")},
		"mpl":        {read("../../knowledge/testdata/eval/mpl/MPL-2.0.txt")},
		"apt-get":    {read("../../knowledge/testdata/eval/apt-get/apt-get.8.txt")},
		"passages":   passages,
	}
}

// TestTokensKeepChunkBoundaries: the local model's default token chunking (120 tokens, 20
// overlapping, counted with the provider's Tokens) cuts the corpora exactly where it did when
// Tokens took the larger of the two counts (commit 4e97b34, two full tokenizations a text): the
// chunk counts and digests of every chunk's text, in order, were computed with that commit's
// code. A change to the tokenizer or to Tokens that moved a boundary fails here.
func TestTokensKeepChunkBoundaries(t *testing.T) {
	e, _ := localEmbedder(t)
	s, err := chunk.New(domain.Chunking{Strategy: chunk.StrategyRecursive, ChunkSize: 120, ChunkOverlap: 20,
		SplitBy: chunk.SplitToken, RecursiveSeparators: chunk.AttheneSeparators()})
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithTokens(e.Tokens)
	want := map[string]string{
		"persuasion": "1576 da9f5d660861f5cd2c307e24",
		"mpl":        "65 b583056cf2b8a1ad7ef52691",
		"apt-get":    "156 c33286e06c06e34e1ec49b1e",
		"passages":   "195 5427fc3cede6a034a8dc0ee6",
	}
	for name, texts := range chunkTexts(t) {
		h := sha256.New()
		n := 0
		for _, text := range texts {
			for _, c := range s.Split(text) {
				_, _ = fmt.Fprintf(h, "%d:%s\x00", len(c), c)
				n++
			}
			h.Write([]byte{1})
		}
		if got := fmt.Sprintf("%d %x", n, h.Sum(nil)[:12]); got != want[name] {
			t.Errorf("%s: chunks and digest %s, want %s", name, got, want[name])
		}
	}
}
