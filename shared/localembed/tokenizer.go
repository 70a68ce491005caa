package localembed

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// reservedPieces is the number of vocabulary entries that are never matched against text
// (`"\ufffd"`, `<s>`, `</s>`, `extra_token_id_1..3`); entry 0 doubles as the unknown token.
const reservedPieces = 6

// maxPieceRunes bounds the prefix search; the longest piece of the vocabulary is 16 code points.
const maxPieceRunes = 32

// tokenizer is the unigram (SentencePiece-style) tokenizer of @energetic-ai/embeddings 0.2.0,
// ported decision for decision so that token ids are equal to the reference's.
type tokenizer struct {
	trie   *trie     // the pieces of ids ≥ reservedPieces; a repeated piece keeps its last id as the JS trie does
	scores []float64 // id → score
	units  []int     // id → length of the piece in UTF-16 code units (the JS backtrack steps by .length)
	maxLen int       // longest piece in code points
	work   sync.Pool // *lattice
}

// newTokenizer reads vocab.json: an array of [piece, score] pairs.
func newTokenizer(vocabJSON []byte) (*tokenizer, error) {
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(vocabJSON, &raw); err != nil {
		return nil, fmt.Errorf("vocab.json: %w", err)
	}
	if len(raw) <= reservedPieces {
		return nil, fmt.Errorf("vocab.json: %d entries, want more than %d", len(raw), reservedPieces)
	}
	t := &tokenizer{
		scores: make([]float64, len(raw)),
		units:  make([]int, len(raw)),
	}
	pieces := make(map[string]int32, len(raw))
	for i, e := range raw {
		var piece string
		var score float64
		if err := json.Unmarshal(e[0], &piece); err != nil {
			return nil, fmt.Errorf("vocab.json entry %d: piece: %w", i, err)
		}
		if err := json.Unmarshal(e[1], &score); err != nil {
			return nil, fmt.Errorf("vocab.json entry %d: score: %w", i, err)
		}
		if piece == "" {
			return nil, fmt.Errorf("vocab.json entry %d: empty piece", i)
		}
		t.scores[i] = score
		t.units[i] = utf16Len(piece)
		if i < reservedPieces {
			continue
		}
		pieces[piece] = int32(i)
		if n := utf8.RuneCountInString(piece); n > t.maxLen {
			t.maxLen = n
		}
	}
	if t.maxLen > maxPieceRunes {
		return nil, fmt.Errorf("vocab.json: a piece of %d code points, at most %d supported", t.maxLen, maxPieceRunes)
	}
	t.trie = newTrie(pieces)
	return t, nil
}

// preprocess appends to buf the reference's processInput of text: NFKC, then, for non-empty
// text, a leading "▁" and every U+0020 replaced by "▁". The reference replaces / /g, not \s: only the spaces that NFKC
// turns into U+0020 (U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000) join it; tabs, line breaks,
// the C0 and C1 controls, U+1680, U+2028/U+2029, U+200B, U+FEFF and the other format characters
// stay themselves, start no piece and become the unknown token (TestWhitespaceMatchesReference).
func preprocess(buf []byte, text string) []byte {
	s := norm.NFKC.String(strings.ToValidUTF8(text, "\ufffd")) // text itself when already so
	if s == "" {
		return buf
	}
	buf = append(buf, "\u2581"...)
	for {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return append(buf, s...)
		}
		buf = append(append(buf, s[:i]...), "\u2581"...)
		s = s[i+1:]
	}
}

// encode returns the token ids of text, all of them (the model reads only the first MaxTokens).
//
// The lattice search follows the reference exactly, quirks included: pieces are looked up by
// code point; a position where no piece starts gets a one-character unknown (id 0, score 0);
// for each end position the candidates are visited by ascending start and a candidate replaces
// the best so far when that best is exactly 0 or the candidate is not worse (so ties go to the
// later start); the backtrack steps by the UTF-16 length of the chosen piece; runs of unknowns
// collapse to one id 0.
func (t *tokenizer) encode(text string) []int {
	w := t.search(text, true)
	ids := make([]int, 0, w.tokens)
	for k := len(w.rev) - 1; k >= 0; k-- {
		ids = append(ids, int(w.rev[k]))
	}
	t.release(w)
	return ids
}

// count is len(encode(text)), without building the ids.
func (t *tokenizer) count(text string) int {
	w := t.search(text, false)
	n := w.tokens
	t.release(w)
	return n
}

// keptRunes bounds the lattices kept for reuse: one grown by a text longer than this (a whole
// file rather than a chunk) is left to the garbage collector.
const keptRunes = 1 << 16

// release puts w back for the next search, unless it grew past keptRunes.
func (t *tokenizer) release(w *lattice) {
	if cap(w.best) <= keptRunes {
		t.work.Put(w)
	}
}

// lattice is the working memory of one search, pooled: a search allocates nothing once its
// buffers have grown to the texts tokenized.
type lattice struct {
	text   []byte    // the preprocessed text
	best   []float64 // best[i]: score of the best tokenization of the first i code points
	words  []int32   // words[i]: the id of its last piece
	rev    []int32   // the ids, last first, unknown runs collapsed (when kept)
	tokens int       // how many ids
}

// search tokenizes text into a pooled lattice (the caller releases it): w.tokens ids and, if
// keep, w.rev them last first. The pieces that start at a code point are found in one walk of
// the trie, and the candidates are relaxed forwards, by ascending start and, for each start,
// ascending end: each end position sees its candidates in the order the reference visits them,
// and best[start] is final before any candidate leaves it, so the decisions are the reference's
// loop over end positions (TestSearchMatchesLattice holds it to that loop).
func (t *tokenizer) search(text string, keep bool) *lattice {
	w, _ := t.work.Get().(*lattice)
	if w == nil {
		w = &lattice{}
	}
	w.text = preprocess(w.text[:0], text)
	w.rev, w.tokens = w.rev[:0], 0
	s := w.text
	if len(s) == 0 {
		return w
	}
	n := 0 // code points: s is valid UTF-8, so its bytes that are not continuation bytes
	for _, c := range s {
		if c&0xC0 != 0x80 {
			n++
		}
	}
	w.best = slices.Grow(w.best[:0], n+1)[:n+1]
	w.words = slices.Grow(w.words[:0], n+1)[:n+1]
	clear(w.best)
	clear(w.words)
	best, words := w.best, w.words
	relax := func(end int, id int32, base float64) {
		score := t.scores[id] + base
		if best[end] == 0 || score >= best[end] {
			best[end] = score
			words[end] = id
		}
	}
	for b, i := 0, 0; b < len(s); i++ { // b is the byte offset of code point i
		found := false
		node, runes := int32(0), 0
		for k := b; k < len(s); k++ {
			if node = t.trie.next(node, s[k]); node == 0 {
				break
			}
			if s[k]&0xC0 != 0x80 {
				runes++
			}
			// A piece is whole UTF-8, so a node that ends one is at a code point boundary.
			if id := t.trie.id[node]; id >= 0 {
				relax(i+runes, id, best[i])
				found = true
			}
		}
		if !found {
			relax(i+1, 0, best[i])
		}
		if s[b] < utf8.RuneSelf {
			b++
		} else {
			_, size := utf8.DecodeRune(s[b:])
			b += size
		}
	}
	prevUnk := false
	for it := n; it > 0; it -= t.units[words[it]] {
		id := words[it]
		if !(prevUnk && id == 0) {
			w.tokens++
			if keep {
				w.rev = append(w.rev, id)
			}
		}
		prevUnk = id == 0
	}
	return w
}

// utf16Len is the length of s in UTF-16 code units, JavaScript's String.prototype.length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
