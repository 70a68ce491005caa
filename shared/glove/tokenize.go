package glove

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// appendIDs appends the rows of the known words of text, in order (see the package doc).
func (m *Model) appendIDs(dst []int32, text string) []int32 {
	forEachWord(text, func(w []byte) {
		if id, ok := m.index[string(w)]; ok { // the conversion in a map index does not allocate
			dst = append(dst, id)
			return
		}
		if !bytes.Contains(w, []byte("-")) {
			return
		}
		for part := range strings.SplitSeq(string(w), "-") {
			if id, ok := m.index[part]; ok {
				dst = append(dst, id)
			}
		}
	})
	return dst
}

// Tokens are the words of text as Embed reads them, known to the vocabulary or not, before a
// hyphenated word the vocabulary lacks is split: for tests and for seeing what a text holds.
func Tokens(text string) []string {
	var out []string
	forEachWord(text, func(w []byte) { out = append(out, string(w)) })
	return out
}

// forEachWord calls f with each lowercased word of text: a run of letters, digits and marks,
// where a hyphen or apostrophe (’ read as ') between two such runs joins them. Clitics are
// resolved here: "n't" becomes a word "not" after its stem, the other clitics are dropped. f
// must not keep the slice it is given.
func forEachWord(text string, f func([]byte)) {
	var buf []byte
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		buf = buf[:0]
		apostrophe := false
		for {
			buf = appendLower(buf, r)
			i += size
			if i >= len(text) {
				break
			}
			r, size = utf8.DecodeRuneInString(text[i:])
			if isWordRune(r) {
				continue
			}
			if r != '-' && r != '\'' && r != '’' || i+size >= len(text) {
				break
			}
			next, nextSize := utf8.DecodeRuneInString(text[i+size:])
			if !isWordRune(next) {
				break
			}
			if r == '-' {
				buf = append(buf, '-')
			} else {
				buf, apostrophe = append(buf, '\''), true
			}
			i += size
			r, size = next, nextSize
		}
		if apostrophe {
			clitics(string(buf), f)
			continue
		}
		f(buf)
	}
}

// appendLower appends r lowercased.
func appendLower(b []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}

// clitics splits a word with apostrophes as the Penn Treebank tokenizer GloVe's corpus went
// through would, and maps the pieces to words the vocabulary holds: "n't" → "not" (ca, wo, sha →
// can, will, shall), the clitics 's 're 've 'll 'd 'm dropped, other apostrophes (o'clock) split.
func clitics(word string, f func([]byte)) {
	if stem, ok := strings.CutSuffix(word, "n't"); ok && stem != "" && !strings.Contains(stem, "'") {
		switch stem {
		case "ca":
			stem = "can"
		case "wo":
			stem = "will"
		case "sha":
			stem = "shall"
		}
		f([]byte(stem))
		f([]byte("not"))
		return
	}
	parts := strings.Split(word, "'")
	for i, p := range parts {
		if i > 0 && i == len(parts)-1 {
			switch p {
			case "s", "re", "ve", "ll", "d", "m":
				continue
			}
		}
		f([]byte(p))
	}
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}
