package domain

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// HasVisible reports whether s has at least one character that shows: not white space, not a
// control or format character (zero-width spaces and joiners, the byte order mark, the soft
// hyphen), not a combining mark on its own, not a variation selector and not one of the
// default-ignorable letters (Hangul fillers) or the blank Braille pattern.
func HasVisible(s string) bool {
	for _, r := range s {
		if !invisible(r) {
			return true
		}
	}
	return false
}

func invisible(r rune) bool {
	return unicode.IsSpace(r) || r == '\u2800' || r == unicode.ReplacementChar ||
		unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Mn, unicode.Me, unicode.Zs, unicode.Zl, unicode.Zp,
			unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// JSONType names the JSON type of a decoded value for error messages ("an array", "an object"),
// so that no Go type name reaches a client.
func JSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, float32, int, int64, int32, uint, uint64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value of an unknown type"
}

// Transliterate spells s in ASCII where it can: compatibility decomposition (NFKD: "ﬁ" → "fi",
// "Ｂ" → "B", "²" → "2") with the combining marks dropped ("Ü" → "U"), then a table for letters
// that do not decompose (ß, æ, ø, ł …) and for Greek and Cyrillic. Characters it cannot spell
// are kept as they are, for the caller to drop.
func Transliterate(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		lower := unicode.ToLower(r)
		if t, ok := translit[lower]; ok {
			if lower != r && t != "" {
				t = strings.ToUpper(t[:1]) + t[1:]
			}
			b.WriteString(t)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// translit spells the lower-case letters NFKD leaves alone. Upper-case letters are looked up by
// their lower case.
var translit = map[rune]string{
	// Latin letters without a decomposition.
	'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'đ': "d", 'ð': "d", 'þ': "th", 'ł': "l",
	'ħ': "h", 'ı': "i", 'ŋ': "ng", 'ŧ': "t", 'ĸ': "k", 'ſ': "s", 'ƒ': "f", 'ǥ': "g",
	'ɨ': "i", 'ʉ': "u", 'ɖ': "d", 'ɗ': "d", 'ƀ': "b", 'ƈ': "c", 'ɠ': "g", 'ƙ': "k",
	// Greek (accents are combining marks after NFKD).
	'α': "a", 'β': "v", 'γ': "g", 'δ': "d", 'ε': "e", 'ζ': "z", 'η': "i", 'θ': "th",
	'ι': "i", 'κ': "k", 'λ': "l", 'μ': "m", 'ν': "n", 'ξ': "x", 'ο': "o", 'π': "p",
	'ρ': "r", 'σ': "s", 'ς': "s", 'τ': "t", 'υ': "y", 'φ': "f", 'χ': "ch", 'ψ': "ps",
	'ω': "o",
	// Cyrillic (й, ё, ї, ў decompose to a base letter and a mark).
	'а': "a", 'б': "b", 'в': "v", 'г': "g", 'д': "d", 'е': "e", 'ж': "zh", 'з': "z",
	'и': "i", 'к': "k", 'л': "l", 'м': "m", 'н': "n", 'о': "o", 'п': "p", 'р': "r",
	'с': "s", 'т': "t", 'у': "u", 'ф': "f", 'х': "kh", 'ц': "ts", 'ч': "ch", 'ш': "sh",
	'щ': "shch", 'ъ': "", 'ы': "y", 'ь': "", 'э': "e", 'ю': "yu", 'я': "ya", 'і': "i",
	'є': "ye", 'ґ': "g", 'ђ': "dj", 'ј': "j", 'љ': "lj", 'њ': "nj", 'ћ': "c", 'џ': "dz",
	'ѕ': "dz",
}

// Clip shortens s to at most n bytes without splitting a UTF-8 character, marking a cut with "…"
// (so a clipped string is at most n+3 bytes). Messages quote client input through it.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// IsID reports whether s is an identifier in the form the service generates: a UUID of 36
// characters. uuid.Parse alone also takes braces, urn: prefixes and no hyphens, which would name
// the same record differently.
func IsID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}
