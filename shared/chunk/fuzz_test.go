package chunk

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeparators are the separator lists the fuzz target picks from.
var fuzzSeparators = [][]string{
	LangChainSeparators(),
	AttheneSeparators(),
	{"\n\n", "\n"},
	{" "},
	{""},
	{".", "😀", "\\", "ab"},
	{"zzz"},
}

// FuzzSplit: for any text, size, overlap and separator list, in characters or words,
//   - every chunk is within the size, unless it is a piece that could not be split: one the
//     remaining separators do not occur in (after its first position), kept whole and untrimmed;
//   - the chunks, in order, take in every character of the text that is not whitespace: only
//     trimmed whitespace is left out, no text is lost;
//   - offsets, texts and lengths agree (checkChunk).
func FuzzSplit(f *testing.F) {
	for i, text := range append(edgeTexts(), randomTexts(8)...) {
		f.Add(text, uint16(1+i*7), uint16(i), uint8(i), i%3 == 0)
	}
	f.Add(strings.Repeat("word ", 50)+strings.Repeat("x", 100), uint16(10), uint16(3), uint8(1), false)
	f.Add("a b c d", uint16(0), uint16(0), uint8(3), false) // size 1: one-character chunks
	f.Add("ab cd", uint16(2), uint16(0), uint8(3), false)   // two-character chunks
	f.Add("x😀y😀z", uint16(1), uint16(1), uint8(4), false)   // size 2 by units: cut pairs
	f.Add("one two three four", uint16(1), uint16(0), uint8(1), true)
	f.Fuzz(func(t *testing.T, text string, size, overlap uint16, sepChoice uint8, words bool) {
		n := 1 + int(size)%300
		c := chunking(n, int(overlap)%n, SplitChar, fuzzSeparators[int(sepChoice)%len(fuzzSeparators)])
		if words {
			c.SplitBy = SplitWord
		}
		s, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		chunks := s.Chunks(text)
		src := repair(text)
		covered := make([]bool, len(src))
		prev := 0
		for _, ch := range chunks {
			checkChunk(t, s, src, ch)
			if ch.Start < prev {
				t.Fatalf("chunk %d starts at %d, before the previous one (%d)", ch.Index, ch.Start, prev)
			}
			prev = ch.Start
			for i := ch.Start; i < ch.End; i++ {
				covered[i] = true
			}
			if ch.Length > n {
				if ch.Text != src[ch.Start:ch.End] {
					t.Fatalf("chunk %d %q has %d > %d but is not a whole piece of the text", ch.Index, ch.Text, ch.Length, n)
				}
				for _, sep := range c.RecursiveSeparators {
					if sep == "" || strings.Contains(ch.Text[1:], sep) {
						t.Fatalf("chunk %d %q has %d > %d though separator %q could split it", ch.Index, ch.Text, ch.Length, n, sep)
					}
				}
			}
		}
		for i := 0; i < len(src); {
			r, size := utf8.DecodeRuneInString(src[i:])
			if !isJSSpace(r) && !covered[i] {
				t.Fatalf("%q at byte %d is in no chunk: text lost (chunks %q)", r, i, s.Split(text))
			}
			i += size
		}
	})
}
