package glove

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// appendIDs appends the rows of the known words of text, in order (see the package doc).
func (m *Model) appendIDs(dst []int32, text string) []int32 {
	forEachWord(text, func(w string) {
		if id, ok := m.index[w]; ok {
			dst = append(dst, id)
			return
		}
		for _, part := range split(w) {
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
	forEachWord(text, func(w string) { out = append(out, w) })
	return out
}

// forEachWord calls f with each lowercased word of text: a run of letters, digits and marks,
// where a hyphen or apostrophe (’ read as ') between two such runs joins them. Clitics are
// resolved here: "n't" becomes a word "not" after its stem, the other clitics are dropped.
func forEachWord(text string, f func(string)) {
	text = strings.ToLower(text)
	for len(text) > 0 {
		r, size := utf8.DecodeRuneInString(text)
		if !isWordRune(r) {
			text = text[size:]
			continue
		}
		end := size
		for end < len(text) {
			r, size := utf8.DecodeRuneInString(text[end:])
			if isWordRune(r) {
				end += size
				continue
			}
			if r == '-' || r == '\'' || r == '’' {
				if next, _ := utf8.DecodeRuneInString(text[end+size:]); end+size < len(text) && isWordRune(next) {
					end += size
					continue
				}
			}
			break
		}
		word := text[:end]
		text = text[end:]
		if strings.ContainsAny(word, "'’") {
			clitics(strings.ReplaceAll(word, "’", "'"), f)
			continue
		}
		f(word)
	}
}

// clitics splits a word with apostrophes as the Penn Treebank tokenizer GloVe's corpus went
// through would, and maps the pieces to words the vocabulary holds: "n't" → "not" (ca, wo, sha →
// can, will, shall), the clitics 's 're 've 'll 'd 'm dropped, other apostrophes (o'clock) split.
func clitics(word string, f func(string)) {
	if stem, ok := strings.CutSuffix(word, "n't"); ok && stem != "" && !strings.Contains(stem, "'") {
		switch stem {
		case "ca":
			stem = "can"
		case "wo":
			stem = "will"
		case "sha":
			stem = "shall"
		}
		f(stem)
		f("not")
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
		f(p)
	}
}

// split is the parts of a hyphenated word (nil if it has none).
func split(word string) []string {
	if !strings.Contains(word, "-") {
		return nil
	}
	return strings.Split(word, "-")
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}
