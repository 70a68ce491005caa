package knowledge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// lineEmbedder counts tokens as the local model's tokenizer does, roughly: a token a word, one
// for each run of line breaks, and one more when the text starts with whitespace (SentencePiece's
// dummy prefix). It records how many bytes it tokenized.
type lineEmbedder struct {
	max   int
	bytes int
}

func (e *lineEmbedder) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }
func (e *lineEmbedder) Dimensions() int                                      { return 1 }
func (e *lineEmbedder) MaxTokens() int                                       { return e.max }
func (e *lineEmbedder) Name() string                                         { return "line" }
func (e *lineEmbedder) Tokens(s string) int {
	e.bytes += len(s)
	n := len(strings.Fields(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\n') {
			n++
		}
	}
	if s != "" && unicode.IsSpace(rune(s[0])) {
		n++
	}
	return n
}

// TestFitTokensBalanced: a chunk over the limit becomes ⌈n/limit⌉ pieces of near-equal size,
// each within the limit, holding every word in order: 101 tokens at a limit of 100 are two
// pieces of about 50, not 100 and a one-word tail.
func TestFitTokensBalanced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		limit int
	}{
		{"one over", words(101, " "), 100},
		{"prose", words(1000, " "), 100},
		{"short lines", words(300, "\n"), 128},
		{"man page", manLike(400), 128},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &lineEmbedder{max: tc.limit}
			n := e.Tokens(tc.text)
			got := fitTokens(e, []string{"first", tc.text, "last"})
			if got[0] != "first" || got[len(got)-1] != "last" {
				t.Fatalf("the chunks around it moved: %q … %q", got[0], got[len(got)-1])
			}
			pieces := got[1 : len(got)-1]
			if want := (n + tc.limit - 1) / tc.limit; len(pieces) != want {
				t.Errorf("%d tokens cut into %d pieces, want %d", n, len(pieces), want)
			}
			least := n
			for _, p := range pieces {
				m := e.Tokens(p)
				if m > tc.limit {
					t.Errorf("a piece of %d tokens, over %d: %.60q", m, tc.limit, p)
				}
				least = min(least, m)
			}
			if share := n / len(pieces); least < share*8/10 {
				t.Errorf("the smallest piece has %d tokens, want near %d (an even share)", least, share)
			}
			if strings.Join(strings.Fields(strings.Join(pieces, " ")), " ") != strings.Join(strings.Fields(tc.text), " ") {
				t.Error("the pieces do not hold the text's words in order")
			}
		})
	}
}

// TestFitTokensLinear: cutting a long chunk tokenizes a few times its length, not once per
// word (20,000 words at a limit of 100).
func TestFitTokensLinear(t *testing.T) {
	text := words(20000, " ")
	e := &lineEmbedder{max: 100}
	fitTokens(e, []string{text})
	if e.bytes > 4*len(text) {
		t.Fatalf("tokenized %d bytes to cut a chunk of %d", e.bytes, len(text))
	}
}

// TestFitTokensLongWord: a word over the limit on its own is cut between characters into
// even parts within the limit.
func TestFitTokensLongWord(t *testing.T) {
	e := &bowLike{max: 8}
	word := strings.Repeat("y", 100) // 13 tokens
	got := fitTokens(e, []string{"a " + word + " b"})
	if strings.Join(got, "") != "a"+word+"b" && strings.ReplaceAll(strings.Join(got, " "), " ", "") != "a"+word+"b" {
		t.Fatalf("pieces %q do not hold the text", got)
	}
	for _, p := range got {
		if n := e.Tokens(p); n > 8 {
			t.Errorf("piece %q has %d tokens", p, n)
		}
	}
}

// bowLike counts a token per 8 characters of each word.
type bowLike struct{ max int }

func (e *bowLike) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }
func (e *bowLike) Dimensions() int                                      { return 1 }
func (e *bowLike) MaxTokens() int                                       { return e.max }
func (e *bowLike) Name() string                                         { return "bow" }
func (e *bowLike) Tokens(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		n += (len(w) + 7) / 8
	}
	return n
}

// words is n distinct words joined by sep.
func words(n int, sep string) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", i)
	}
	return strings.Join(w, sep)
}

// manLike is text shaped as a rendered man page: short indented lines and blank lines.
func manLike(lines int) string {
	var b strings.Builder
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "       opt%d  does %d\n", i, i)
		if i%7 == 6 {
			b.WriteString("\n")
		}
	}
	return b.String()
}
