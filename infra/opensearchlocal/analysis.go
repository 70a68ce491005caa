package opensearchlocal

import (
	"math"
	"math/bits"
	"strings"
	"unicode"
)

// analyze is OpenSearch's `standard` analyzer: Lucene's StandardTokenizer (Unicode word
// boundaries, UAX #29), then a lowercase filter; no stop words (OpenSearch's default is _none_),
// tokens longer than 255 characters are split as the tokenizer's max_token_length does.
//
// The word-boundary rules are implemented for the classes that matter for words and numbers
// (letters, digits, the Mid* and ExtendNumLet joiners, Katakana runs, one token per Han or
// Hiragana character); rarer rules (regional indicators, emoji sequences, Hebrew quotes) are not.
func analyze(text string) []string {
	var out []string
	rs := []rune(text)
	i := 0
	for i < len(rs) {
		c := wordClass(rs[i])
		if c == wbOther || c == wbMidLetter || c == wbMidNum || c == wbMidNumLet || c == wbSingleQuote || c == wbExtend {
			i++
			continue
		}
		if c == wbIdeo || c == wbHiragana {
			out = appendToken(out, rs[i:i+1])
			i++
			continue
		}
		start := i
		j := i + 1
		last := c // class of the last non-Extend rune in the token
		for j < len(rs) {
			n := wordClass(rs[j])
			if n == wbExtend {
				j++
				continue
			}
			if joins(last, n) {
				last = n
				j++
				continue
			}
			// WB6/7 and WB11/12: a joiner between two letters or two digits stays inside.
			if isMid(n) && j+1 < len(rs) {
				k := j + 1
				for k < len(rs) && wordClass(rs[k]) == wbExtend {
					k++
				}
				if k < len(rs) {
					after := wordClass(rs[k])
					if (isLetterish(last) && isLetterish(after) && (n == wbMidLetter || n == wbMidNumLet || n == wbSingleQuote)) ||
						(last == wbNumeric && after == wbNumeric && (n == wbMidNum || n == wbMidNumLet || n == wbSingleQuote)) {
						last = after
						j = k + 1
						continue
					}
				}
			}
			break
		}
		// A token of only connector punctuation is not a word.
		if !(last == wbExtendNumLet && allClass(rs[start:j], wbExtendNumLet)) {
			out = appendToken(out, rs[start:j])
		}
		i = j
	}
	return out
}

const maxTokenLength = 255

func appendToken(out []string, rs []rune) []string {
	for len(rs) > maxTokenLength {
		out = append(out, strings.ToLower(string(rs[:maxTokenLength])))
		rs = rs[maxTokenLength:]
	}
	return append(out, strings.ToLower(string(rs)))
}

func allClass(rs []rune, c int) bool {
	for _, r := range rs {
		if wordClass(r) != c {
			return false
		}
	}
	return true
}

// Word-break classes (UAX #29), reduced to what analyze uses.
const (
	wbOther = iota
	wbALetter
	wbNumeric
	wbKatakana
	wbIdeo
	wbHiragana
	wbMidLetter
	wbMidNum
	wbMidNumLet
	wbSingleQuote
	wbExtendNumLet
	wbExtend
)

func wordClass(r rune) int {
	switch r {
	case '\'':
		return wbSingleQuote
	case '.', '\u2018', '\u2019', '\u2024', '\uFE52', '\uFF07', '\uFF0E':
		return wbMidNumLet
	case ':', '\u00B7', '\u0387', '\u055F', '\u05F4', '\u2027', '\uFE13', '\uFE55', '\uFF1A':
		return wbMidLetter
	case ',', ';', '\u037E', '\u0589', '\u060C', '\u060D', '\u066C', '\u07F8', '\u2044', '\uFE10', '\uFE14', '\uFE50', '\uFE54', '\uFF0C', '\uFF1B':
		return wbMidNum
	}
	switch {
	case unicode.Is(unicode.Pc, r):
		return wbExtendNumLet
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Mc, r) || r == '\u200D' || unicode.Is(unicode.Cf, r) && r != '\u00AD':
		return wbExtend
	case unicode.Is(unicode.Han, r):
		return wbIdeo
	case unicode.Is(unicode.Hiragana, r):
		return wbHiragana
	case unicode.Is(unicode.Katakana, r) || r == '\u30FC' || r == '\uFF70':
		return wbKatakana
	case unicode.IsDigit(r):
		return wbNumeric
	case unicode.IsLetter(r) || unicode.Is(unicode.Nl, r):
		return wbALetter
	}
	return wbOther
}

func isMid(c int) bool {
	return c == wbMidLetter || c == wbMidNum || c == wbMidNumLet || c == wbSingleQuote
}

func isLetterish(c int) bool { return c == wbALetter }

// joins reports whether two adjacent classes stay in one word (WB5, WB8–10, WB13, WB13a/b).
func joins(a, b int) bool {
	word := func(c int) bool { return c == wbALetter || c == wbNumeric || c == wbKatakana }
	switch {
	case (a == wbALetter || a == wbNumeric) && (b == wbALetter || b == wbNumeric):
		return true
	case a == wbKatakana && b == wbKatakana:
		return true
	case (word(a) || a == wbExtendNumLet) && b == wbExtendNumLet:
		return true
	case a == wbExtendNumLet && word(b):
		return true
	}
	return false
}

// Lucene's BM25Similarity (Lucene 9, used by OpenSearch 2.x) with OpenSearch's defaults.
const (
	bm25K1 = float32(1.2)
	bm25B  = float32(0.75)
)

// bm25IDF is log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5)), computed in double and
// stored as a float, as Lucene does.
func bm25IDF(docFreq, docCount int64) float32 {
	return float32(math.Log(1 + (float64(docCount)-float64(docFreq)+0.5)/(float64(docFreq)+0.5)))
}

// bm25AvgDL is sumTotalTermFreq / docCount as a float.
func bm25AvgDL(sumTotalTermFreq, docCount int64) float32 {
	if docCount <= 0 {
		return 1
	}
	return float32(float64(sumTotalTermFreq) / float64(docCount))
}

// bm25Score scores one term in one document the way Lucene's BM25Scorer does: the document
// length goes through the one-byte norm encoding (lossy above 23 terms), and the result is
// weight - weight/(1 + freq*normInverse) in float arithmetic.
func bm25Score(boost, idf float32, freq float32, length int, avgdl float32) float32 {
	dl := float32(byte4ToInt(intToByte4(length)))
	normInverse := 1 / (bm25K1 * ((1 - bm25B) + bm25B*dl/avgdl))
	weight := boost * idf
	return weight - weight/(1+freq*normInverse)
}

// Lucene's SmallFloat int-to-byte norm encoding.

const (
	maxInt4         = 231 // longToInt4(Integer.MAX_VALUE)
	numFreeValues   = 255 - maxInt4
	smallFloatShift = 3
)

func longToInt4(i int64) int {
	numBits := bits.Len64(uint64(i))
	if numBits < 4 {
		return int(i)
	}
	shift := numBits - 4
	encoded := int(i>>uint(shift)) & 0x07
	encoded |= (shift + 1) << smallFloatShift
	return encoded
}

func int4ToLong(i int) int64 {
	bits := int64(i & 0x07)
	shift := (i >> smallFloatShift) - 1
	if shift == -1 {
		return bits
	}
	return (bits | 0x08) << uint(shift)
}

func intToByte4(i int) byte {
	if i < numFreeValues {
		return byte(i)
	}
	return byte(numFreeValues + longToInt4(int64(i-numFreeValues)))
}

func byte4ToInt(b byte) int {
	i := int(b)
	if i < numFreeValues {
		return i
	}
	return int(numFreeValues + int4ToLong(i-numFreeValues))
}
