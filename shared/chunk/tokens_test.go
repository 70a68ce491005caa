package chunk

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// wordTokens is a tokenizer of one token a word (JS whitespace separates words), with nothing
// for whitespace.
func wordTokens(s string) int { return countWords(s, 0, len(s)) }

// lineTokens is a tokenizer like the local model's: a token a word and one more for each run of
// line breaks (USE-lite reads "\n" as a token of its own).
func lineTokens(s string) int {
	n := countWords(s, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\n') {
			n++ // a run of breaks is one token
		}
	}
	return n
}

// TestTokensAsWords: with a tokenizer of one token a word, split_by "token" cuts exactly where
// split_by "word" cuts (a span's length is the sum of what its words add), on prose and on the
// edge texts of the reference cases.
func TestTokensAsWords(t *testing.T) {
	texts := append([]string{persuasion(t)[:200000], "one two three four five", "  lead\n\ntrail  ",
		"a\u0085b c\uFEFFd e\u00a0f\n\n\ng"}, strings.Repeat("word ", 300))
	for _, size := range []int{3, 60, 500} {
		for _, text := range texts {
			words := mustNew(t, size, size/5, SplitWord, AttheneSeparators())
			tok, err := New(domain.Chunking{Strategy: StrategyRecursive, ChunkSize: size, ChunkOverlap: size / 5,
				SplitBy: SplitToken, RecursiveSeparators: AttheneSeparators()})
			if err != nil {
				t.Fatal(err)
			}
			tok = tok.WithTokens(wordTokens)
			if d := cmp.Diff(words.Split(text), tok.Split(text)); d != "" {
				t.Fatalf("size %d, text %.40q: token chunks differ from word chunks (-word +token):\n%s", size, text, d)
			}
		}
	}
}

// TestTokensCountLineBreaks: a tokenizer that reads each line break as a token makes chunks of
// short lines hold fewer words, and every chunk stays within the size by that tokenizer.
func TestTokensCountLineBreaks(t *testing.T) {
	var lines []string
	for i := 0; i < 400; i++ {
		lines = append(lines, "alpha beta")
	}
	text := strings.Join(lines, "\n")
	s, err := New(domain.Chunking{Strategy: StrategyRecursive, ChunkSize: 60, ChunkOverlap: 6, SplitBy: SplitToken,
		RecursiveSeparators: AttheneSeparators()})
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithTokens(lineTokens)
	chunks := s.Chunks(text)
	if len(chunks) == 0 {
		t.Fatal("no chunks")
	}
	for i, c := range chunks {
		if n := lineTokens(c.Text); n > 60 || n < 40 && i < len(chunks)-1 {
			t.Fatalf("chunk of %d tokens (%d words), want 40 to 60: %q", n, countWords(c.Text, 0, len(c.Text)), c.Text)
		}
	}
}

// TestTokensLinear: the tokenizer sees each distinct word (with the whitespace before it) once,
// not each piece at each level of the recursion: on Persuasion far fewer calls than words.
func TestTokensLinear(t *testing.T) {
	text := persuasion(t)
	var calls, bytes atomic.Int64
	count := func(s string) int {
		calls.Add(1)
		bytes.Add(int64(len(s)))
		return wordTokens(s)
	}
	s, err := New(domain.Chunking{Strategy: StrategyRecursive, ChunkSize: 100, ChunkOverlap: 15, SplitBy: SplitToken,
		RecursiveSeparators: AttheneSeparators()})
	if err != nil {
		t.Fatal(err)
	}
	s.WithTokens(count).Split(text)
	words := countWords(text, 0, len(text))
	if calls.Load() > int64(words/2) || bytes.Load() > int64(len(text)) {
		t.Fatalf("%d tokenizer calls over %d bytes for a text of %d words and %d bytes", calls.Load(), bytes.Load(), words, len(text))
	}
}

// TestTokensEstimate: without a tokenizer, split_by "token" counts a third of the UTF-8 bytes.
func TestTokensEstimate(t *testing.T) {
	s, err := New(domain.Chunking{Strategy: StrategyRecursive, ChunkSize: 10, ChunkOverlap: 0, SplitBy: SplitToken,
		RecursiveSeparators: []string{" "}})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Length("abcdefg"); n != 3 {
		t.Fatalf("Length(7 bytes) = %d, want 3", n)
	}
	if w := mustNew(t, 10, 0, SplitWord, nil); w.WithTokens(wordTokens) != w {
		t.Fatal("WithTokens changed a word splitter")
	}
}
