package chunk

import (
	"sort"
	"unicode/utf8"
)

// Token lengths (split_by "token"). The recursive algorithm adds up the lengths of the pieces
// it merges, as LangChain.js does with any length function; tokenizing every piece at every
// level of the recursion would tokenize the text several times over. Instead the text is read
// once as Words, each costed once, and a span's length is the sum of the costs of the words
// that start in it (prefix sums: O(log n) a span). A span that begins or ends inside a word
// (only the per-character fallback cuts one) is tokenized whole instead.

// Word is one word of a text (a maximal run outside JS whitespace, as split_by "word" counts
// them): its byte range and its cost in tokens, what it adds with the whitespace before it to a
// text it follows, count("x"+gap+word) − count("x"), so that a newline the model reads as a
// token of its own counts; a first word with nothing before it costs count(word).
type Word struct {
	Start, End int
	Cost       int
}

// Words reads text's words and costs each distinct (whitespace, word) once with count.
func Words(text string, count func(string) int) []Word {
	var out []Word
	cache := map[string]int{}
	base := count("x")
	prevEnd := 0
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if isJSSpace(r) {
			i += n
			continue
		}
		j := i + n
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if isJSSpace(r) {
				break
			}
			j += n
		}
		unit := text[prevEnd:j] // the whitespace before the word, and the word
		c, ok := cache[unit]
		if !ok {
			if prevEnd == 0 && i == 0 {
				c = count(unit)
			} else {
				c = max(count("x"+unit)-base, 0)
			}
			cache[unit] = c
		}
		out = append(out, Word{Start: i, End: j, Cost: c})
		prevEnd, i = j, j
	}
	return out
}

// tokenRun holds a text's words and their cumulative costs.
type tokenRun struct {
	starts, ends []int // byte offsets of each word
	cum          []int // cum[i] is the cost of words [0, i)
}

// newTokenRun reads text's words and costs them with count.
func newTokenRun(text string, count func(string) int) *tokenRun {
	t := &tokenRun{cum: []int{0}}
	for _, w := range Words(text, count) {
		t.starts = append(t.starts, w.Start)
		t.ends = append(t.ends, w.End)
		t.cum = append(t.cum, t.cum[len(t.cum)-1]+w.Cost)
	}
	return t
}

// inWord reports whether pos falls strictly inside a word.
func (t *tokenRun) inWord(pos int) bool {
	k := sort.SearchInts(t.starts, pos+1) - 1 // the last word starting at or before pos
	return k >= 0 && t.starts[k] < pos && pos < t.ends[k]
}

// length is the token length of text[a:b] (see the comment above).
func (t *tokenRun) length(text string, a, b int, count func(string) int) int {
	if a >= b {
		return 0
	}
	if t.inWord(a) || t.inWord(b) {
		return count(text[a:b])
	}
	i := sort.SearchInts(t.starts, a)
	j := sort.SearchInts(t.starts, b)
	return t.cum[j] - t.cum[i]
}

// estimateTokens bounds tokens from above when no tokenizer is given: a third of the UTF-8
// bytes, rounded up (English averages about four bytes a token).
func estimateTokens(text string) int { return (len(text) + 2) / 3 }
