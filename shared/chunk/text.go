package chunk

import (
	"math/bits"
	"strings"
	"unicode/utf8"
)

// The text model. LangChain.js works on JavaScript strings, that is on UTF-16 code units; Go
// strings are UTF-8 bytes. The splitter keeps every piece as a pair of byte offsets into the
// source and measures it in code units, so that it cuts where LangChain.js cuts:
//
//   - A position is a byte offset at a rune boundary, or — only after the per-character fallback
//     cut a character outside the BMP into its two surrogates, as JS's split("") does — the
//     offset of that character's 4-byte UTF-8 sequence plus 2, which is never a rune boundary
//     and so is unambiguous ("mid-rune").
//   - A text cut at a mid-rune position holds a lone surrogate in JS. A Go string cannot hold one:
//     the chunk's text has U+FFFD in its place (what encoding/json makes of a lone "\ud83d"
//     escape too), and counts it as the one code unit the surrogate was.
//   - Invalid UTF-8 in the input is read as U+FFFD, one per invalid byte (as encoding/json does
//     when it encodes such a string), before anything else.

// isMid reports whether pos is inside a rune: in valid UTF-8 only a continuation byte is.
func isMid(text string, pos int) bool {
	return pos > 0 && pos < len(text) && !utf8.RuneStart(text[pos])
}

// slice is the text between two positions, with U+FFFD for a cut surrogate at either end.
func slice(text string, a, b int) string {
	midA, midB := isMid(text, a), isMid(text, b)
	if a == b || !midA && !midB {
		return text[a:b]
	}
	var sb strings.Builder
	sb.Grow(b - a + 6)
	if midA {
		sb.WriteRune(utf8.RuneError)
		a += 2 // past the low surrogate's continuation bytes
	}
	if midB {
		b -= 2 // back to the start of the cut rune
		if b > a {
			sb.WriteString(text[a:b])
		}
		sb.WriteRune(utf8.RuneError)
	} else {
		sb.WriteString(text[a:b])
	}
	return sb.String()
}

// outer widens a position inside a rune to the rune's boundaries (start or end).
func outer(text string, pos int, end bool) int {
	if !isMid(text, pos) {
		return pos
	}
	if end {
		return pos + 2
	}
	return pos - 2
}

// repair returns text with every invalid UTF-8 byte replaced by U+FFFD.
func repair(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	var sb strings.Builder
	sb.Grow(len(text) + 16)
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.WriteString(text[i : i+n])
		}
		i += n
	}
	return sb.String()
}

// isJSSpace reports whether r is in the set JavaScript's String.prototype.trim() strips and its
// regular expressions call \s: ECMAScript WhiteSpace (tab, VT, FF, space, NBSP, U+FEFF and the
// Unicode Zs category) and LineTerminator (LF, CR, U+2028, U+2029). Unlike Go's unicode.IsSpace
// it includes U+FEFF and excludes U+0085 (NEL); unlike Python's str.strip it excludes U+001C–U+001F.
func isJSSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiSpace[r]
	}
	switch {
	case r == 0xA0, r == 0x1680, r >= 0x2000 && r <= 0x200A, r == 0x2028, r == 0x2029,
		r == 0x202F, r == 0x205F, r == 0x3000, r == 0xFEFF:
		return true
	}
	return false
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// trim narrows [a, b) to exclude leading and trailing JS whitespace (a cut surrogate at either
// end is not whitespace, and stops the trim).
func trim(text string, a, b int) (int, int) {
	for a < b {
		c := text[a]
		if c < utf8.RuneSelf {
			if !asciiSpace[c] {
				break
			}
			a++
			continue
		}
		if isMid(text, a) {
			break
		}
		r, n := utf8.DecodeRuneInString(text[a:b])
		if !isJSSpace(r) {
			break
		}
		a += n
	}
	for b > a {
		c := text[b-1]
		if c < utf8.RuneSelf {
			if !asciiSpace[c] {
				break
			}
			b--
			continue
		}
		if isMid(text, b) {
			break
		}
		r, n := utf8.DecodeLastRuneInString(text[a:b])
		if !isJSSpace(r) {
			break
		}
		b -= n
	}
	return a, b
}

// countWords is the word length of text[a:b]: the number of maximal runs of characters that are
// not JS whitespace. A cut surrogate at either end is a character like any other (its bytes
// decode as U+FFFD, which is not whitespace).
func countWords(text string, a, b int) int {
	n := 0
	prev := uint8(1) // 1 after whitespace: a word starts at a character that follows one
	for i := a; i < b; {
		c := text[i]
		var space uint8
		if c < utf8.RuneSelf {
			space = asciiSpaceBit[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(text[i:b])
			if isJSSpace(r) {
				space = 1
			}
			i += size
		}
		n += int(prev &^ space)
		prev = space
	}
	return n
}

var asciiSpaceBit = [utf8.RuneSelf]uint8{'\t': 1, '\n': 1, '\v': 1, '\f': 1, '\r': 1, ' ': 1}

// isASCII reports whether text is all ASCII.
func isASCII(text string) bool {
	i := 0
	for ; i+8 <= len(text); i += 8 {
		if load64(text[i:i+8])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// load64 reads the first 8 bytes of s, little-endian (the compiler makes it one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// countUnits is the number of UTF-16 code units between two positions of valid UTF-8 text: one
// per byte that does not continue a sequence, one more per 4-byte lead (a surrogate pair), and
// the halves of a pair cut at either end counted as one unit each. It counts eight bytes a step.
func countUnits(text string, a, b int) int {
	n := b - a
	i := a
	for ; i+8 <= b; i += 8 {
		w := load64(text[i : i+8])
		if w&0x8080808080808080 == 0 {
			continue
		}
		cont := w &^ (w << 1) & 0x8080808080808080                       // 10xxxxxx
		lead4 := w & (w << 1) & (w << 2) & (w << 3) & 0x8080808080808080 // 1111xxxx
		n += bits.OnesCount64(lead4) - bits.OnesCount64(cont)
	}
	for ; i < b; i++ {
		switch c := text[i]; {
		case c&0xC0 == 0x80:
			n--
		case c >= 0xF0:
			n++
		}
	}
	if isMid(text, a) {
		n++
	}
	if isMid(text, b) {
		n--
	}
	return n
}
