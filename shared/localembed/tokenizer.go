package localembed

import (
	"encoding/json"
	"fmt"
	"strings"
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
	pieces map[string]int32 // piece → id, for ids ≥ reservedPieces; a repeated piece keeps its last id as the JS trie does
	scores []float64        // id → score
	units  []int            // id → length of the piece in UTF-16 code units (the JS backtrack steps by .length)
	maxLen int              // longest piece in code points
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
		pieces: make(map[string]int32, len(raw)),
		scores: make([]float64, len(raw)),
		units:  make([]int, len(raw)),
	}
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
		t.pieces[piece] = int32(i)
		if n := utf8.RuneCountInString(piece); n > t.maxLen {
			t.maxLen = n
		}
	}
	if t.maxLen > maxPieceRunes {
		return nil, fmt.Errorf("vocab.json: a piece of %d code points, at most %d supported", t.maxLen, maxPieceRunes)
	}
	return t, nil
}

// preprocess is the reference's processInput: NFKC, then, for non-empty text, a leading "▁" and
// every U+0020 replaced by "▁". The reference replaces / /g, not \s: only the spaces that NFKC
// turns into U+0020 (U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000) join it; tabs, line breaks,
// the C0 and C1 controls, U+1680, U+2028/U+2029, U+200B, U+FEFF and the other format characters
// stay themselves, start no piece and become the unknown token (TestWhitespaceMatchesReference).
func preprocess(text string) string {
	s := norm.NFKC.String(strings.ToValidUTF8(text, "\ufffd"))
	if s == "" {
		return s
	}
	return "\u2581" + strings.ReplaceAll(s, " ", "\u2581")
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
	s := preprocess(text)
	if s == "" {
		return []int{}
	}
	// offs[i] is the byte offset of code point i; offs[n] == len(s).
	offs := make([]int, 0, len(s)+1)
	for i := range s {
		offs = append(offs, i)
	}
	n := len(offs)
	offs = append(offs, len(s))

	// cands[end] lists the (start, id) pairs of pieces ending at end, by ascending start.
	type cand struct {
		start int
		id    int32
	}
	cands := make([][]cand, n+1)
	for i := 0; i < n; i++ {
		found := false
		for l := 1; l <= t.maxLen && i+l <= n; l++ {
			if id, ok := t.pieces[s[offs[i]:offs[i+l]]]; ok {
				cands[i+l] = append(cands[i+l], cand{i, id})
				found = true
			}
		}
		if !found {
			cands[i+1] = append(cands[i+1], cand{i, 0})
		}
	}
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for end := 0; end <= n; end++ {
		// The candidates were appended by ascending start already, as JS visits integer keys.
		for _, c := range cands[end] {
			score := t.scores[c.id] + best[c.start]
			if best[end] == 0 || score >= best[end] {
				best[end] = score
				words[end] = c.id
			}
		}
	}
	var rev []int
	for it := n; it > 0; it -= t.units[words[it]] {
		rev = append(rev, int(words[it]))
	}
	ids := make([]int, 0, len(rev))
	prevUnk := false
	for _, id := range rev {
		if !(prevUnk && id == 0) {
			ids = append(ids, id)
		}
		prevUnk = id == 0
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
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
