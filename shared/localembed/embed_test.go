package localembed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestParaphraseRanksFirst is the acceptance check: the paraphrase of a question about
// returns must be its nearest neighbour among unrelated texts.
func TestParaphraseRanksFirst(t *testing.T) {
	m := testModel(t)
	query := "how long do I have to return an item"
	paraphrase := "purchases may be sent back within thirty days"
	others := []string{
		"The weather today is sunny with a light breeze from the west.",
		"Quantum chromodynamics describes the strong interaction between quarks and gluons.",
		"Please reset my password; I can no longer sign in to the dashboard.",
		"The committee approved the budget after a lengthy debate about infrastructure spending.",
		"Add two cups of flour and stir until the batter is smooth.",
		"The train to Boston leaves from platform nine at half past six.",
		"Our office is closed on public holidays.",
		"The museum's new exhibit features paintings from the Dutch golden age.",
		"Install the driver before plugging in the printer.",
		"Penguins live almost exclusively in the southern hemisphere.",
		"The invoice lists the tax rate for each country separately.",
		"Photosynthesis converts light energy into chemical energy.",
	}
	texts := append([]string{query, paraphrase}, others...)
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	want := cosine(vecs[0], vecs[1])
	for i, o := range others {
		if c := cosine(vecs[0], vecs[2+i]); c >= want {
			t.Errorf("%q scores %.4f against the query, the paraphrase only %.4f", o, c, want)
		}
	}
	t.Logf("paraphrase cosine %.4f", want)
}

// TestTruncatesAtMaxTokens: what follows the first MaxTokens tokens does not change the vector,
// and Tokenize reports the full count so that callers can see the truncation.
func TestTruncatesAtMaxTokens(t *testing.T) {
	m := testModel(t)
	head := strings.Repeat("refunds are paid within five days ", 40)
	a, b := head+"and that is final.", head+"unless the parcel was lost by the courier."
	if n := len(m.Tokenize(a)); n <= m.MaxTokens() {
		t.Fatalf("test text has %d tokens, want more than %d", n, m.MaxTokens())
	}
	vecs, err := m.Embed(context.Background(), []string{a, b, "refunds are paid within five days"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vecs[0], vecs[1]) {
		t.Errorf("texts that differ only after token %d embed differently (cosine %.6f)", m.MaxTokens(), cosine(vecs[0], vecs[1]))
	}
	if slices.Equal(vecs[0], vecs[2]) {
		t.Error("a long text embeds exactly like its first sentence")
	}
}

// TestEmbedShape: one unit vector per text, in order, whatever the batch holds.
func TestEmbedShape(t *testing.T) {
	m := testModel(t)
	texts := loadSentences(t)
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, v := range got {
		if len(v) != m.Dimensions() {
			t.Errorf("text %d: %d dimensions, want %d", i, len(v), m.Dimensions())
		}
		if n := unitNorm(v); n < 0.9999 || n > 1.0001 {
			t.Errorf("text %d: norm %.6f, want 1", i, n)
		}
	}
	none, err := m.Embed(context.Background(), nil)
	if err != nil || len(none) != 0 {
		t.Errorf("Embed(nil) = %d vectors, %v; want none and no error", len(none), err)
	}
	// The empty string alone (which the reference cannot embed) gets the vector it has in a batch.
	i := slices.Index(texts, "")
	if i < 0 {
		t.Fatal("testdata/sentences.json has no empty string")
	}
	alone, err := m.Embed(context.Background(), []string{""})
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(alone[0], got[i]); c < 0.999999 {
		t.Errorf(`Embed([""]) differs from "" in a batch: cosine %.7f`, c)
	}
}

// TestBatchIndependence: a text embeds the same alone, in a batch, and when other goroutines
// embed at the same time (the model is shared by concurrent requests).
func TestBatchIndependence(t *testing.T) {
	m := testModel(t)
	texts := loadSentences(t)
	batch, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, text := range texts {
		wg.Go(func() {
			alone, err := m.Embed(context.Background(), []string{text})
			if err != nil {
				t.Error(err)
				return
			}
			if c := cosine(alone[0], batch[i]); c < 0.999999 {
				t.Errorf("text %d: cosine alone vs in a batch %.7f", i, c)
			}
		})
	}
	wg.Wait()
}

// TestEmbedCancelled: a done context stops Embed with its error.
func TestEmbedCancelled(t *testing.T) {
	m := testModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"hello"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestMakeGroups: every sentence lands in exactly one group, in order, within the limits.
func TestMakeGroups(t *testing.T) {
	for _, lens := range [][]int{{}, {0}, {128}, {5, 5, 5}, {128, 128, 128, 128, 128, 1}, make([]int, 200)} {
		sents := make([][]int, len(lens))
		total := 0
		for i, n := range lens {
			sents[i] = make([]int, n)
			total += n
		}
		groups := makeGroups(sents, total, 2)
		next := 0
		for _, g := range groups {
			tokens := 0
			for _, s := range sents[g[0]:g[1]] {
				tokens += len(s)
			}
			if g[0] != next || g[1] <= g[0] || tokens > maxGroupTokens || g[1]-g[0] > maxGroupSents {
				t.Errorf("lengths %v: bad group %v (%d tokens) after %d", lens, g, tokens, next)
			}
			next = g[1]
		}
		if next != len(sents) {
			t.Errorf("lengths %v: groups %v cover %d sentences", lens, groups, next)
		}
	}
}
