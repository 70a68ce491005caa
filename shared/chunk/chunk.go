// Package chunk splits text into the chunks a knowledge base embeds. Its one strategy,
// "recursive", gives with split_by "char" exactly the chunks of LangChain.js's
// RecursiveCharacterTextSplitter (@langchain/textsplitters 1.0.2) for the same separators, size
// and overlap; split_by "word" runs the same algorithm with lengths counted in words. It is pure
// logic: no I/O.
//
// What "exactly LangChain.js's chunks" takes (shared/KNOWLEDGE-NOTES.md section 6):
//   - Lengths are UTF-16 code units (JS's string length), not bytes or runes.
//   - A separator stays with the piece it starts: JS splits on the lookahead /(?=sep)/, so
//     "a\n\n\nb" on "\n\n" is "a", "\n", "\n\nb" (every occurrence after position 0 is a cut,
//     overlapping ones too).
//   - Chunks are trimmed with JS's trim(): ECMAScript whitespace, which strips U+FEFF and keeps
//     U+0085 (see isJSSpace); chunks that trim to nothing are dropped.
//   - A piece is "too long" at a length of chunk_size or more (JS tests length < size), and is
//     split with the separators after the one used. When the list has no "" and its last
//     separator was the one used, that is per UTF-16 code unit (JS recurses with an empty list,
//     and split("") cuts surrogate pairs: such a cut half is U+FFFD in Go, see text.go).
//   - A piece too long that holds none of the remaining separators is a chunk of its own, whole
//     and untrimmed, however long (even if it is all whitespace): the only chunks over the size.
//
// Word length: the number of maximal runs of characters outside JS's whitespace set (the set
// trim() strips, and \s in a JS regular expression), so that a chunk's words are what
// LangChain.js would count with lengthFunction t => (t.match(/\S+/g) ?? []).length — the tests
// check that equivalence too. Like LangChain.js, the merge adds up its pieces' lengths; a piece
// cut inside a word (only by the per-character fallback) counts that word in both halves, so a
// chunk never has more words than the size unless it is a piece that could not be split.
//
// split_by "token" runs the same algorithm with lengths counted in the embedding model's tokens
// (Splitter.WithTokens gives the model's tokenizer; without one a token is a third of a UTF-8
// byte count): a span's length is the sum of what each of its words adds, tokenized once per
// distinct word with the whitespace before it (tokens.go), so splitting stays linear in the text.
// Its chunks are LangChain.js's with that length function up to the tokenizer's context effects.
package chunk

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// Values of chunking_strategy's fields.
const (
	StrategyRecursive = "recursive"
	SplitChar         = "char"
	SplitCharacter    = "character" // an alias of SplitChar that Atthene clients may send
	SplitWord         = "word"
	// SplitToken counts lengths in the embedding model's tokens (see WithTokens).
	SplitToken = "token"
)

// Bounds on recursive_separators: each separator is a pass over the text, so their number bounds
// the work of a split.
const (
	MaxSeparators      = 32
	MaxSeparatorLength = 100 // characters
)

// AttheneSeparators are Atthene's default recursive_separators: paragraphs, lines, sentences,
// words. It has no "", so a word longer than a chunk is cut per character (see the package doc).
func AttheneSeparators() []string { return []string{"\n\n", "\n", ". ", " "} }

// LangChainSeparators are LangChain's default separators.
func LangChainSeparators() []string { return []string{"\n\n", "\n", " ", ""} }

// Default is Atthene's default chunking_strategy: recursive, 500 words with 50 words of overlap,
// Atthene's separators. It suits embedders that read a whole 500-word chunk (Titan v2 reads 8,192
// tokens, OpenAI's 8,191).
func Default() domain.Chunking {
	return domain.Chunking{Strategy: StrategyRecursive, ChunkSize: 500, ChunkOverlap: 50, SplitBy: SplitWord,
		RecursiveSeparators: AttheneSeparators()}
}

// DefaultLocal is a chunking_strategy in words for the offline `local` embedder, where its
// tokenizer is not at hand (knowledge bases default to DefaultTokens, in its tokens): recursive,
// 60 words with 10 words of overlap, Atthene's separators. The model (USE-lite) reads only the first
// 128 SentencePiece tokens of a text and silently drops the rest, so a chunk must fit them. On
// Persuasion (testdata) its tokenizer (shared/localembed) makes 1.57 tokens a word: with 80-word
// chunks 84 of 1,449 exceed 128 tokens (up to 149), with 70 words 3 do, with 60 words none does
// (at most 121, median 76). Text denser in names, numbers or punctuation still can: a chunk over
// the limit is the embedder's to catch (Embedder.Tokens), never a silent cut.
func DefaultLocal() domain.Chunking {
	return domain.Chunking{Strategy: StrategyRecursive, ChunkSize: 60, ChunkOverlap: 10, SplitBy: SplitWord,
		RecursiveSeparators: AttheneSeparators()}
}

// DefaultTokens is the default chunking_strategy for an embedder that reads maxTokens tokens of a
// text (0: unknown, taken as 8,192) when chunks are measured in its own tokens: recursive, a
// sixteenth below the limit (120 of the local model's 128, leaving room for a word the
// tokenizer reads differently in context) and at most 500 tokens, a sixth of it overlapping,
// Atthene's separators. On Persuasion, 15 man pages and 5 licences none of the local model's
// chunks passes 128 tokens (at most 119); with DefaultLocal's 60 words 562 of 955 man-page
// chunks did (every newline is a token of that model).
func DefaultTokens(maxTokens int) domain.Chunking {
	if maxTokens <= 0 {
		maxTokens = 8192
	}
	size := min(maxTokens-maxTokens/16, 500)
	return domain.Chunking{Strategy: StrategyRecursive, ChunkSize: size, ChunkOverlap: size / 6, SplitBy: SplitToken,
		RecursiveSeparators: AttheneSeparators()}
}

// Validate checks a chunking_strategy and names each bad field without a prefix (chunk_size,
// chunk_overlap, split_by, recursive_separators, strategy). It fills no defaults: that is the
// caller's job (Default, DefaultLocal).
func Validate(c domain.Chunking) []domain.FieldError {
	var errs []domain.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, domain.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if c.Strategy != StrategyRecursive {
		add("strategy", "must be %q, the only strategy supported (got %q)", StrategyRecursive, c.Strategy)
	}
	if c.ChunkSize <= 0 {
		add("chunk_size", "must be a positive integer (got %d)", c.ChunkSize)
	}
	switch {
	case c.ChunkOverlap < 0:
		add("chunk_overlap", "must be at least 0 (got %d)", c.ChunkOverlap)
	case c.ChunkSize > 0 && c.ChunkOverlap >= c.ChunkSize:
		add("chunk_overlap", "must be less than chunk_size (%d; got %d)", c.ChunkSize, c.ChunkOverlap)
	}
	switch c.SplitBy {
	case SplitChar, SplitCharacter, SplitWord, SplitToken:
	default:
		add("split_by", "must be %q (or %q), %q or %q (got %q)", SplitChar, SplitCharacter, SplitWord, SplitToken, c.SplitBy)
	}
	switch n := len(c.RecursiveSeparators); {
	case n == 0:
		add("recursive_separators", `must list at least one separator (for example ["\n\n", "\n", ". ", " "]; [""] splits by character)`)
	case n > MaxSeparators:
		add("recursive_separators", "must list at most %d separators (got %d)", MaxSeparators, n)
	default:
		for i, s := range c.RecursiveSeparators {
			if !utf8.ValidString(s) {
				add("recursive_separators", "item %d is not valid UTF-8", i)
			} else if utf8.RuneCountInString(s) > MaxSeparatorLength {
				add("recursive_separators", "item %d is longer than %d characters", i, MaxSeparatorLength)
			}
		}
	}
	return errs
}

// Splitter cuts texts into chunks by one chunking_strategy. It is safe for concurrent use.
type Splitter struct {
	size, overlap int
	words         bool
	tokens        func(string) int // split_by "token": the model's token count (nil: bytes/3 rounded up)
	seps          []string
}

// New builds the splitter of a chunking_strategy, or returns a domain.KindInvalid error with a
// field error for each bad field (see Validate).
func New(c domain.Chunking) (*Splitter, error) {
	if errs := Validate(c); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	s := &Splitter{size: c.ChunkSize, overlap: c.ChunkOverlap, words: c.SplitBy == SplitWord,
		seps: append([]string(nil), c.RecursiveSeparators...)}
	if c.SplitBy == SplitToken {
		s.tokens = estimateTokens
	}
	return s, nil
}

// WithTokens returns a copy of a split_by "token" splitter that counts tokens with count (the
// embedding model's own tokenizer); other splitters are returned as they are. Without it a token
// is a third of a UTF-8 byte count, rounded up.
func (s *Splitter) WithTokens(count func(string) int) *Splitter {
	if s.tokens == nil || count == nil {
		return s
	}
	c := *s
	c.tokens = count
	return &c
}

// Chunk is one chunk of a text.
type Chunk struct {
	Index int    // its place among the text's chunks, from 0
	Text  string // trimmed, unless it is a piece too long that could not be split (see the package doc)
	// Start and End are its byte offsets in the text: Text is text[Start:End], except that a
	// chunk that begins or ends with half of a surrogate pair (the per-character fallback cut a
	// character outside the BMP) has U+FFFD there and its offsets take in the whole character.
	// Offsets refer to the text with invalid UTF-8 bytes replaced by U+FFFD.
	Start, End int
	// Length is the chunk's length in the splitter's unit: UTF-16 code units, words or tokens.
	Length int
}

// Split returns the texts of the chunks of text, in order.
func (s *Splitter) Split(text string) []string {
	r := s.run(text)
	out := make([]string, len(r.out))
	for i, p := range r.out {
		out[i] = slice(r.text, p.a, p.b)
	}
	return out
}

// Chunks returns the chunks of text with their offsets and lengths, in order.
func (s *Splitter) Chunks(text string) []Chunk {
	r := s.run(text)
	out := make([]Chunk, len(r.out))
	for i, p := range r.out {
		out[i] = Chunk{Index: i, Text: slice(r.text, p.a, p.b), Start: outer(r.text, p.a, false),
			End: outer(r.text, p.b, true), Length: p.n}
	}
	return out
}

// Length measures text in the splitter's unit (UTF-16 code units, words or tokens).
func (s *Splitter) Length(text string) int {
	text = repair(text)
	if s.tokens != nil {
		return s.tokens(text)
	}
	if s.words {
		return countWords(text, 0, len(text))
	}
	n := 0
	for _, r := range text {
		n += utf16.RuneLen(r)
	}
	return n
}
