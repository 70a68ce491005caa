package chunk

import (
	"io"
	"log"
	"testing"

	"github.com/tmc/langchaingo/textsplitter"
)

// BenchmarkSplitChars2000_200 splits Persuasion (467 KB of English prose) into 2,000-character
// chunks with 200 of overlap and LangChain's separators: this package (on the ASCII text and on
// its curly-quoted variant, which takes the UTF-16 unit table), langchaingo's RecursiveCharacter
// beside it, and LangChain.js itself (a warm Node process splits once per iteration, told to and
// answering through a pipe, whose round trip of a few microseconds is in its figure).
func BenchmarkSplitChars2000_200(b *testing.B) {
	text := persuasion(b)
	b.Run("chunk", func(b *testing.B) {
		s := mustNew(b, 2000, 200, SplitChar, nil)
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			s.Split(text)
		}
	})
	b.Run("chunk-atthene", func(b *testing.B) {
		s := mustNew(b, 2000, 200, SplitChar, AttheneSeparators())
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			s.Split(text)
		}
	})
	b.Run("chunk-nonascii", func(b *testing.B) {
		c := curly(text)
		s := mustNew(b, 2000, 200, SplitChar, nil)
		b.SetBytes(int64(len(c)))
		for b.Loop() {
			s.Split(c)
		}
	})
	b.Run("langchaingo", func(b *testing.B) {
		// It logs a warning for every chunk over the size; the log is not what is measured.
		defer log.SetOutput(log.Writer())
		log.SetOutput(io.Discard)
		s := textsplitter.NewRecursiveCharacter(textsplitter.WithChunkSize(2000), textsplitter.WithChunkOverlap(200))
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := s.SplitText(text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("langchainjs", func(b *testing.B) {
		split := benchReference(b, text, refCase{Size: 2000, Overlap: 200})
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			split(1)
		}
	})
}

// BenchmarkSplitWords500_50 is Atthene's default (500 words, 50 of overlap) on Persuasion.
func BenchmarkSplitWords500_50(b *testing.B) {
	text := persuasion(b)
	s := mustNew(b, 500, 50, SplitWord, AttheneSeparators())
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.Split(text)
	}
}
