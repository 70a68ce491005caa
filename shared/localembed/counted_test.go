package localembed

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestEmbedCountedCountsWhatTheModelReads: EmbedCounted gives Embed's vectors and the tokens
// read, min(len(Tokenize(text)), MaxTokens) summed over the texts (a long text's tail unread).
func TestEmbedCountedCountsWhatTheModelReads(t *testing.T) {
	m := testModel(t)
	texts := []string{"", "Hello world.", "tabs\tand\nlines", strings.Repeat("refunds are accepted within thirty days ", 60)}
	want := 0
	for _, s := range texts {
		want += min(len(m.Tokenize(s)), m.MaxTokens())
	}
	if len(m.Tokenize(texts[3])) <= m.MaxTokens() {
		t.Fatal("the long text fits: the case tests nothing")
	}
	ctx := context.Background()
	got, n, err := m.EmbedCounted(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("tokens = %d, want %d", n, want)
	}
	plain, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if !slices.Equal(got[i], plain[i]) {
			t.Errorf("text %d: EmbedCounted's vector differs from Embed's", i)
		}
	}
}
