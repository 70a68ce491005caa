package chunk

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// TestValidate names each bad field, without a prefix, in a KindInvalid error from New.
func TestValidate(t *testing.T) {
	ok := chunking(100, 10, SplitChar, nil)
	tests := []struct {
		name   string
		change func(*domain.Chunking)
		field  string
		msg    string
	}{
		{"size zero", func(c *domain.Chunking) { c.ChunkSize = 0; c.ChunkOverlap = 0 }, "chunk_size", "positive"},
		{"size negative", func(c *domain.Chunking) { c.ChunkSize = -5; c.ChunkOverlap = 0 }, "chunk_size", "positive"},
		{"overlap equal to size", func(c *domain.Chunking) { c.ChunkOverlap = 100 }, "chunk_overlap", "less than chunk_size"},
		{"overlap over size", func(c *domain.Chunking) { c.ChunkOverlap = 101 }, "chunk_overlap", "less than chunk_size"},
		{"overlap negative", func(c *domain.Chunking) { c.ChunkOverlap = -1 }, "chunk_overlap", "at least 0"},
		{"split_by unknown", func(c *domain.Chunking) { c.SplitBy = "sentence" }, "split_by", `"sentence"`},
		{"split_by empty", func(c *domain.Chunking) { c.SplitBy = "" }, "split_by", `"word"`},
		{"strategy hierarchical", func(c *domain.Chunking) { c.Strategy = "hierarchical" }, "strategy", `"recursive"`},
		{"strategy empty", func(c *domain.Chunking) { c.Strategy = "" }, "strategy", `"recursive"`},
		{"no separators", func(c *domain.Chunking) { c.RecursiveSeparators = nil }, "recursive_separators", "at least one"},
		{"too many separators", func(c *domain.Chunking) { c.RecursiveSeparators = make([]string, MaxSeparators+1) }, "recursive_separators", "at most"},
		{"separator too long", func(c *domain.Chunking) {
			c.RecursiveSeparators = []string{"\n", strings.Repeat("é", MaxSeparatorLength+1)}
		}, "recursive_separators", "item 1"},
		{"separator not UTF-8", func(c *domain.Chunking) { c.RecursiveSeparators = []string{"\xff"} }, "recursive_separators", "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			c.RecursiveSeparators = append([]string(nil), ok.RecursiveSeparators...)
			tt.change(&c)
			s, err := New(c)
			if err == nil || s != nil {
				t.Fatalf("New(%+v) = %v, %v; want an error", c, s, err)
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
				t.Fatalf("New: %v, want a domain KindInvalid error", err)
			}
			if len(de.Fields) != 1 || de.Fields[0].Field != tt.field || !strings.Contains(de.Fields[0].Message, tt.msg) {
				t.Fatalf("fields %+v, want one on %s saying %q", de.Fields, tt.field, tt.msg)
			}
			if !strings.HasPrefix(de.Message, tt.field+": ") {
				t.Errorf("message %q does not name %s", de.Message, tt.field)
			}
		})
	}
	// Every fault at once: each field is named.
	errs := Validate(domain.Chunking{Strategy: "fixed", ChunkSize: 0, ChunkOverlap: -1, SplitBy: "chars"})
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	if want := []string{"strategy", "chunk_size", "chunk_overlap", "split_by", "recursive_separators"}; !cmp.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	for _, c := range []domain.Chunking{ok, Default(), DefaultLocal(), chunking(2, 1, SplitCharacter, []string{""})} {
		if errs := Validate(c); errs != nil {
			t.Errorf("Validate(%+v) = %v, want none", c, errs)
		}
	}
}

// TestCharacterIsChar: "character", Atthene's spelling, splits as "char" does.
func TestCharacterIsChar(t *testing.T) {
	text := persuasion(t)[:30_000]
	want := mustNew(t, 300, 30, SplitChar, AttheneSeparators()).Split(text)
	got := mustNew(t, 300, 30, SplitCharacter, AttheneSeparators()).Split(text)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("character vs char (-char +character):\n%s", d)
	}
	words := mustNew(t, 300, 30, SplitWord, AttheneSeparators()).Split(text)
	if cmp.Equal(words, got) {
		t.Fatal("word splits as char does: split_by is ignored")
	}
}

// TestJSSemantics pins the rules of the package doc on small texts, so that a failure names the
// rule (TestMatchesLangChainJS checks them all against LangChain.js itself).
func TestJSSemantics(t *testing.T) {
	tests := []struct {
		name          string
		text          string
		size, overlap int
		splitBy       string
		seps          []string
		want          []string
	}{
		// The lookahead split of "a\n\n\nb" on "\n\n" is "a", "\n", "\n\nb"; the last is too long
		// and is split again on "\n".
		{"lookahead split", "a\n\n\nb", 3, 0, SplitChar, []string{"\n\n", "\n"}, []string{"a", "b"}},
		{"separator starts the next piece", "aa bb cc", 5, 0, SplitChar, []string{" "}, []string{"aa bb", "cc"}},
		{"overlap is whole pieces", "aa bb cc dd", 6, 3, SplitChar, []string{" "}, []string{"aa bb", "bb cc", "cc dd"}},
		// Atthene's list has no "": after " ", a too-long word is cut per character.
		{"per-character fallback", "Alpha deltaEpsilonzeta", 6, 0, SplitChar, AttheneSeparators(),
			[]string{"Alpha", "delta", "Epsilo", "nzeta"}},
		// ... but a text without any of the separators is kept whole, however long.
		{"no separator: whole", "Supercalifragilistic", 6, 0, SplitChar, AttheneSeparators(),
			[]string{"Supercalifragilistic"}},
		// A piece kept whole (no "-" in it) is not trimmed.
		{"whole piece untrimmed", "ab\n\n  Supercalifragilistic", 8, 0, SplitChar, []string{"\n\n", "-"},
			[]string{"ab", "\n\n  Supercalifragilistic"}},
		// ... while with the last separator used, the rest is cut per character.
		{"last separator then per character", "ab\n\n  Supercalifragilistic", 8, 0, SplitChar, []string{"\n\n"},
			[]string{"ab", "Supe", "rcalifra", "gilistic"}},
		// 4 + 5 units do not fit 6 (as runes, 2 + 3 would).
		{"lengths are UTF-16 units", "😀😀 😀😀", 6, 0, SplitChar, []string{" "}, []string{"😀😀", "😀😀"}},
		// split("") cuts the pair: the halves are lone surrogates in JS, U+FFFD here.
		{"surrogate pair cut", "a😀b", 2, 0, SplitChar, []string{""}, []string{"a\uFFFD", "\uFFFDb"}},
		{"trim strips U+FEFF, keeps U+0085", "\uFEFFa\u0085 b\u00A0", 100, 0, SplitChar, nil, []string{"a\u0085 b"}},
		{"empty text", "", 10, 0, SplitChar, nil, []string{}},
		{"whitespace only", " \n\n \t ", 10, 0, SplitChar, nil, []string{}},
		{"words", "one two three four five", 2, 1, SplitWord, []string{" "},
			[]string{"one two", "two three", "three four", "four five"}},
		// "a\u0085b" is one word (U+0085 is not JS whitespace), " c\uFEFFd" two (U+FEFF is).
		{"words: whitespace is JS's", "a\u0085b c\uFEFFd", 2, 0, SplitWord, []string{" "}, []string{"a\u0085b", "c\uFEFFd"}},
		// A word cut per character counts one word a character.
		{"words: per-character fallback", "abc de", 1, 0, SplitWord, []string{" "}, []string{"a", "b", "c", "d", "e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustNew(t, tt.size, tt.overlap, tt.splitBy, tt.seps).Split(tt.text)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Split(%q) (-want +got):\n%s", tt.text, d)
			}
		})
	}
}

// TestChunks: offsets, indexes and lengths agree with the texts Split returns.
func TestChunks(t *testing.T) {
	texts := append(edgeTexts(), randomTexts(20)...)
	texts = append(texts, persuasion(t)[:50_000], curly(persuasion(t)[:20_000]))
	for _, p := range params {
		s := mustNew(t, p.size, p.overlap, p.splitBy, p.seps)
		for _, text := range texts {
			split := s.Split(text)
			chunks := s.Chunks(text)
			if len(chunks) != len(split) {
				t.Fatalf("%d chunks, Split gave %d", len(chunks), len(split))
			}
			for i, c := range chunks {
				if c.Index != i || c.Text != split[i] {
					t.Fatalf("chunk %d: index %d, text %q; Split gave %q", i, c.Index, c.Text, split[i])
				}
				checkChunk(t, s, text, c)
			}
		}
	}
}

// checkChunk: Text is text[Start:End] (but for cut surrogates, U+FFFD, within the offsets) and
// Length measures Text.
func checkChunk(t *testing.T, s *Splitter, text string, c Chunk) {
	t.Helper()
	if c.Start < 0 || c.End > len(text) || c.Start >= c.End {
		t.Fatalf("chunk %d %q: offsets [%d, %d) out of the text's %d bytes", c.Index, c.Text, c.Start, c.End, len(text))
	}
	src := text[c.Start:c.End]
	if c.Text != src && !cutForm(src, c.Text) {
		t.Fatalf("chunk %d: text %q, but text[%d:%d] is %q", c.Index, c.Text, c.Start, c.End, src)
	}
	if n := s.Length(c.Text); n != c.Length {
		t.Fatalf("chunk %d %q: Length %d, Splitter.Length %d", c.Index, c.Text, c.Length, n)
	}
}

// cutForm reports whether text is src with the character outside the BMP at its start, its end
// or both replaced by U+FFFD (the half of a surrogate pair a chunk holds).
func cutForm(src, text string) bool {
	astral := func(s string) bool { r, n := utf8.DecodeRuneInString(s); return n == 4 && r >= 0x10000 }
	lastAstral := func(s string) bool { r, n := utf8.DecodeLastRuneInString(s); return n == 4 && r >= 0x10000 }
	const half = "\uFFFD"
	switch {
	case len(src) == 4 && astral(src):
		return text == half
	case astral(src) && lastAstral(src) && text == half+src[4:len(src)-4]+half:
		return true
	case astral(src) && text == half+src[4:]:
		return true
	case lastAstral(src) && text == src[:len(src)-4]+half:
		return true
	}
	return false
}

// TestInvalidUTF8: invalid bytes are read as U+FFFD, one each, and count one unit.
func TestInvalidUTF8(t *testing.T) {
	s := mustNew(t, 3, 0, SplitChar, []string{" "})
	got := s.Split("ab\xff \xfe\xfd\xfc")
	want := []string{"ab\uFFFD", "\uFFFD\uFFFD", "\uFFFD"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if n := s.Length("\xff\xfe"); n != 2 {
		t.Fatalf("Length of two invalid bytes = %d, want 2", n)
	}
}

// TestDefaults: Atthene's default, and DefaultLocal's chunks of English prose: at most 60 words
// each (which fit USE-lite's 128 tokens, see DefaultLocal) and enough of them for an evaluation.
func TestDefaults(t *testing.T) {
	if d := Default(); d.Strategy != StrategyRecursive || d.ChunkSize != 500 || d.ChunkOverlap != 50 ||
		d.SplitBy != SplitWord || !cmp.Equal(d.RecursiveSeparators, []string{"\n\n", "\n", ". ", " "}) {
		t.Fatalf("Default() = %+v, want Atthene's recursive 500/50 words", d)
	}
	s, err := New(DefaultLocal())
	if err != nil {
		t.Fatal(err)
	}
	chunks := s.Chunks(persuasion(t))
	if len(chunks) < 1000 {
		t.Fatalf("%d chunks of Persuasion, want over a thousand", len(chunks))
	}
	most := 0
	for _, c := range chunks {
		most = max(most, c.Length)
	}
	if most > 60 || most < 50 {
		t.Fatalf("the longest chunk has %d words, want 50–60", most)
	}
}
