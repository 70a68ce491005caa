package knowledge

import (
	"unicode"
	"unicode/utf8"
)

// fitTokens splits every chunk the embedder could not read whole (over MaxTokens) into pieces
// it can, at word boundaries, keeping their order: no part of a chunk goes unembedded.
func fitTokens(emb Embedder, texts []string) []string {
	limit := emb.MaxTokens()
	if limit <= 0 {
		return texts
	}
	var out []string
	for i, t := range texts {
		if emb.Tokens(t) <= limit {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(texts)+4), texts[:i]...)
		}
		out = append(out, splitTokens(emb, t, limit)...)
	}
	if out == nil {
		return texts
	}
	return out
}

// splitTokens cuts text into pieces of at most limit tokens: as many whole words as fit, and a
// word that alone is over the limit between characters.
func splitTokens(emb Embedder, text string, limit int) []string {
	var out []string
	start := -1 // start of the piece being grown
	end := 0    // end of its last word that fits
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i // the word text[i:j]
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		switch {
		case start >= 0 && emb.Tokens(text[start:j]) <= limit:
			end = j
		case emb.Tokens(text[i:j]) <= limit:
			if start >= 0 {
				out = append(out, text[start:end])
			}
			start, end = i, j
		default: // a word over the limit on its own
			if start >= 0 {
				out = append(out, text[start:end])
			}
			start = -1
			out = append(out, splitRunes(emb, text[i:j], limit)...)
		}
		i = j
	}
	if start >= 0 {
		out = append(out, text[start:end])
	}
	return out
}

// splitRunes cuts a word into the longest prefixes of at most limit tokens (at least one
// character each).
func splitRunes(emb Embedder, word string, limit int) []string {
	var out []string
	for word != "" {
		// Binary search on the prefix length in runes.
		runes := []rune(word)
		lo, hi := 1, len(runes)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if emb.Tokens(string(runes[:mid])) <= limit {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		cut := len(string(runes[:lo]))
		out = append(out, word[:cut])
		word = word[cut:]
	}
	return out
}
