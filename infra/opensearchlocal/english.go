package opensearchlocal

import (
	"strings"

	porter "github.com/blevesearch/go-porterstemmer"
)

// knownAnalyzer reports whether name is a built-in analyzer the stand-in implements.
func knownAnalyzer(name string) bool {
	switch name {
	case "", "standard", "default", "english":
		return true
	}
	return false
}

// analyzeWith runs the named built-in analyzer ("" and "default" are the standard one).
func analyzeWith(name, text string) []string {
	if name == "english" {
		return analyzeEnglish(text)
	}
	return analyze(text)
}

// englishStopWords is Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, the default stop set of
// OpenSearch's `english` analyzer.
var englishStopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true,
	"by": true, "for": true, "if": true, "in": true, "into": true, "is": true, "it": true, "no": true,
	"not": true, "of": true, "on": true, "or": true, "such": true, "that": true, "the": true,
	"their": true, "then": true, "there": true, "these": true, "they": true, "this": true, "to": true,
	"was": true, "will": true, "with": true,
}

// analyzeEnglish is OpenSearch's built-in `english` analyzer, Lucene's EnglishAnalyzer:
// StandardTokenizer → EnglishPossessiveFilter (a trailing 's, ’s or ＇s goes) → LowerCaseFilter
// → StopFilter (englishStopWords) → SetKeywordMarkerFilter (no keywords by default) →
// PorterStemFilter (the original Porter algorithm as in Martin Porter's C version, which
// go-porterstemmer implements; words of one or two letters are left as they are). Stop words
// leave no position gap that matters here: the stand-in scores bags of terms, not phrases.
//
// analyze lowercases as it tokenizes; the possessive filter's test is case-blind ('s or 'S), so
// running it after lowercasing gives the same tokens.
func analyzeEnglish(text string) []string {
	var out []string
	for _, t := range analyze(text) {
		t = stripPossessive(t)
		if englishStopWords[t] {
			continue
		}
		out = append(out, string(porter.StemWithoutLowerCasing([]rune(t))))
	}
	return out
}

// stripPossessive is Lucene's EnglishPossessiveFilter: a token ending in an apostrophe
// (U+0027, U+2019 or U+FF07) and s loses those two characters.
func stripPossessive(t string) string {
	for _, suf := range []string{"'s", "\u2019s", "\uff07s"} {
		if strings.HasSuffix(t, suf) {
			return t[:len(t)-len(suf)]
		}
	}
	return t
}
