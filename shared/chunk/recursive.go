package chunk

import (
	"strings"
	"unicode/utf8"
)

// This file is LangChain.js's RecursiveCharacterTextSplitter._splitText and TextSplitter.mergeSplits
// (@langchain/textsplitters 1.0.2, dist/text_splitter.js) with keepSeparator true, its default,
// on positions instead of strings. Pieces are never copied: a piece and a chunk are two positions
// in the source, and the window of pieces mergeSplits keeps as currentDoc is a range of indices.

// span is a piece or a chunk: positions [a, b) in the text and its length n.
type span struct{ a, b, n int }

// run is the state of one Split.
type run struct {
	*Splitter
	text   string
	ascii  bool   // then a length in code units is a distance in bytes
	pieces []span // a stack: each level of the recursion appends its pieces and drops them on return
	out    []span
	tok    *tokenRun // split_by "token": the text's words and their costs
}

func (s *Splitter) run(text string) *run {
	r := &run{Splitter: s, text: repair(text)}
	r.ascii = !s.words && s.tokens == nil && isASCII(r.text)
	if s.tokens != nil {
		r.tok = newTokenRun(r.text, s.tokens)
	}
	r.split(0, len(r.text), s.seps)
	return r
}

// length is the length of text[a:b] in the splitter's unit.
func (r *run) length(a, b int) int {
	switch {
	case r.tok != nil:
		return r.tok.length(r.text, a, b, r.tokens)
	case r.words:
		return countWords(r.text, a, b)
	case r.ascii:
		return b - a
	}
	return countUnits(r.text, a, b)
}

// split is _splitText on text[a:b]. In JS the list it recurses with is "undefined" when the
// separator used was "" or none of the separators occurs in the text (then too-long pieces are
// kept whole), and an empty array after the last separator (then too-long pieces are split per
// code unit): an empty seps is that empty array, and deeper is false for "undefined".
func (r *run) split(a, b int, seps []string) {
	text := r.text[a:b]
	sep := ""
	if len(seps) > 0 {
		sep = seps[len(seps)-1]
	}
	var next []string
	deeper, first := false, -1
	for i, s := range seps {
		if s == "" {
			sep = ""
			break
		}
		if j := strings.Index(text, s); j >= 0 {
			sep, next, deeper, first = s, seps[i+1:], true, j
			break
		}
	}
	base := len(r.pieces)
	if sep == "" {
		r.splitUnits(a, b)
	} else {
		r.splitAt(a, b, sep, first)
	}
	end := len(r.pieces)
	good := -1 // the first of the pieces waiting to be merged
	for i := base; i < end; i++ {
		p := r.pieces[i]
		if p.n < r.size {
			if good < 0 {
				good = i
			}
			continue
		}
		if good >= 0 {
			r.merge(good, i)
			good = -1
		}
		if deeper {
			r.split(p.a, p.b, next) // appends above end, and drops them again
		} else {
			r.out = append(r.out, p)
		}
	}
	if good >= 0 {
		r.merge(good, end)
	}
	r.pieces = r.pieces[:base]
}

// splitAt is text.split(/(?=sep)/) on text[a:b] without empty pieces: a cut before every
// occurrence of sep after the first position, overlapping occurrences included. first is the
// first occurrence (-1 if none).
func (r *run) splitAt(a, b int, sep string, first int) {
	text := r.text[a:b]
	prev, q := 0, first
	if q == 0 {
		q = nextAt(text, sep, 1)
	}
	for q > 0 {
		r.pieces = append(r.pieces, span{a + prev, a + q, r.length(a+prev, a+q)})
		prev = q
		q = nextAt(text, sep, q+1)
	}
	if prev < len(text) {
		r.pieces = append(r.pieces, span{a + prev, b, r.length(a+prev, b)})
	}
}

// nextAt is the first occurrence of sep in text at or after from, or -1.
func nextAt(text, sep string, from int) int {
	if from >= len(text) {
		return -1
	}
	j := strings.Index(text[from:], sep)
	if j < 0 {
		return -1
	}
	return from + j
}

// splitUnits is text.split("") on text[a:b]: one piece per UTF-16 code unit, so a character
// outside the BMP becomes two pieces, cut at its mid-rune position. a and b are rune boundaries.
func (r *run) splitUnits(a, b int) {
	for i := a; i < b; {
		c := r.text[i]
		if r.tok != nil {
			_, size := utf8.DecodeRuneInString(r.text[i:b])
			r.pieces = append(r.pieces, span{i, i + size, r.length(i, i+size)})
			i += size
			continue
		}
		if c < utf8.RuneSelf {
			n := 1
			if r.words && asciiSpace[c] {
				n = 0
			}
			r.pieces = append(r.pieces, span{i, i + 1, n})
			i++
			continue
		}
		ch, size := utf8.DecodeRuneInString(r.text[i:b])
		if size == 4 {
			r.pieces = append(r.pieces, span{i, i + 2, 1}, span{i + 2, i + 4, 1})
		} else {
			n := 1
			if r.words && isJSSpace(ch) {
				n = 0
			}
			r.pieces = append(r.pieces, span{i, i + size, n})
		}
		i += size
	}
}

// merge is mergeSplits on the pieces [g0, g1), which are adjacent in the text, with the join
// separator "" (keepSeparator): it emits the trimmed text of a window of pieces whenever the
// next piece would take it past the size, then drops pieces from the window's front until at
// most the overlap is left and the next piece fits.
func (r *run) merge(g0, g1 int) {
	lo, total := g0, 0
	for hi := g0; hi < g1; hi++ {
		n := r.pieces[hi].n
		if total+n > r.size && hi > lo {
			r.emit(r.pieces[lo].a, r.pieces[hi-1].b)
			for total > r.overlap || total+n > r.size && total > 0 {
				total -= r.pieces[lo].n
				lo++
			}
		}
		total += n
	}
	if g1 > lo {
		r.emit(r.pieces[lo].a, r.pieces[g1-1].b)
	}
}

// emit is joinDocs: the trimmed text, dropped when nothing is left.
func (r *run) emit(a, b int) {
	a, b = trim(r.text, a, b)
	if a < b {
		r.out = append(r.out, span{a, b, r.length(a, b)})
	}
}
