package opensearchlocal

import (
	"bufio"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Martin Porter's published test vocabulary and its stems (testdata/porter, see its SOURCE):
// the stemmer must give every one of the 23,531 stems. Lucene's own PorterStemFilter test runs
// the same two lists.
func TestPorterStemmerMatchesPorterList(t *testing.T) {
	voc := readLines(t, "testdata/porter/voc.txt")
	want := readLines(t, "testdata/porter/output.txt")
	if len(voc) != 23531 || len(want) != len(voc) {
		t.Fatalf("voc.txt has %d words and output.txt %d, want 23531 each", len(voc), len(want))
	}
	bad := 0
	for i, w := range voc {
		toks := analyzeEnglish(w)
		if englishStopWords[w] {
			if len(toks) != 0 {
				t.Errorf("stop word %q analysed to %q", w, toks)
			}
			continue
		}
		if len(toks) != 1 || toks[0] != want[i] {
			if bad++; bad <= 20 {
				t.Errorf("english(%q) = %q, want [%q]", w, toks, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d words stem differently from Porter's list", bad, len(voc))
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Expected tokens are worked out by hand from Lucene's EnglishAnalyzer chain: standard
// tokenizer, possessive filter, lowercase, the English stop set, Porter stemming.
func TestEnglishAnalyzer(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"The 2 QUICK Brown-Foxes jumped over the lazy dog's bone.", []string{"2", "quick", "brown", "fox", "jump", "over", "lazi", "dog", "bone"}},
		// Possessives with each apostrophe Lucene strips; "it's" becomes the stop word "it".
		{"John’s house＇s roof; it's SARAH'S", []string{"john", "hous", "roof", "sarah"}},
		// A trailing apostrophe is no part of the token (UAX #29); the plural is stemmed.
		{"the dogs' bowls", []string{"dog", "bowl"}},
		{"To be or not to be: that is the question", []string{"question"}},
		{"Generalizations of relational databases", []string{"gener", "relat", "databas"}},
		// One- and two-letter words are not stemmed; three-letter ones are.
		{"us gas as 3.14 news", []string{"us", "ga", "3.14", "new"}},
		{"   ", nil},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, analyzeEnglish(c.in)); diff != "" {
			t.Errorf("analyzeEnglish(%q) (-want +got):\n%s", c.in, diff)
		}
	}
}
