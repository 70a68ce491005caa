package localembed

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// jsSpace is the set of JavaScript's \s (ECMAScript WhiteSpace and LineTerminator): code a
// tokenizer written against a JS regex would split on exactly these.
var jsSpace = []rune{'\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
	0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF}

// blankRunes are the code points that a text may hold as space, line break, control or invisible
// format character: Unicode's White_Space, Pattern_White_Space and the Z categories, the C0 and C1
// controls and DEL (Cc), every format character (Cf, U+200B and U+FEFF among them), JavaScript's
// \s, and the blank-looking letters and symbols (U+180E, the Hangul fillers, U+2800, U+3164,
// U+FFA0) plus U+FFFC, U+FFFD and the noncharacters U+FFFE and U+FFFF.
func blankRunes() []rune {
	var out []rune
	seen := map[rune]bool{}
	add := func(r rune) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, tab := range []*unicode.RangeTable{unicode.White_Space, unicode.Pattern_White_Space, unicode.Z, unicode.Cc, unicode.Cf} {
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.Is(tab, r) {
				add(r)
			}
		}
	}
	for _, r := range jsSpace {
		add(r)
	}
	for _, r := range []rune{0x180E, 0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0, 0x034F, 0xFE0F, 0xFFFC, 0xFFFD, 0xFFFE, 0xFFFF} {
		add(r)
	}
	return out
}

// TestBlankRunesCoverWhitespaceAndControls keeps TestWhitespaceMatchesReference honest: the set
// it checks holds every C0 and C1 control, DEL, every White_Space code point and JS's \s.
func TestBlankRunesCoverWhitespaceAndControls(t *testing.T) {
	have := map[rune]bool{}
	for _, r := range blankRunes() {
		have[r] = true
	}
	var want []rune
	for r := rune(0); r <= 0x9F; r++ {
		if r < 0x20 || r >= 0x7F {
			want = append(want, r)
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.White_Space, r) {
			want = append(want, r)
		}
	}
	want = append(want, jsSpace...)
	want = append(want, 0x180E, 0x200B, 0xFEFF)
	for _, r := range want {
		if !have[r] {
			t.Errorf("blankRunes lacks %U", r)
		}
	}
	if n := len(have); n < 250 {
		t.Errorf("blankRunes has %d code points, want the ~260 of Cc, Cf, Z and White_Space", n)
	}
}

// blankTexts puts c into short sentences: between letters, between and after words, leading,
// trailing, alone, doubled, and next to spaces.
func blankTexts(c string) []string {
	return []string{
		"a" + c + "b",
		"word" + c + "word" + c,
		c + "leading",
		"trailing" + c,
		c,
		"two" + c + c + "of them",
		"the " + c + " spaced " + c + " out",
	}
}

// TestWhitespaceMatchesReference embeds every blank code point (blankRunes) in short sentences,
// and tab-rich real text (testdata/spec-and-licence.json: every second blank-line-separated
// passage that holds a tab of the Go specification, go1.26 doc/go_spec.html with its tags
// stripped, and the paragraphs of the Apache License 2.0 with their indentation turned into
// tabs), through the TF.js reference, and requires the same token ids and a cosine of at
// least 0.9999 for every text.
func TestWhitespaceMatchesReference(t *testing.T) {
	var texts []string
	for _, r := range blankRunes() {
		texts = append(texts, blankTexts(string(r))...)
	}
	b, err := os.ReadFile("testdata/spec-and-licence.json")
	if err != nil {
		t.Fatal(err)
	}
	var passages []string
	if err := json.Unmarshal(b, &passages); err != nil {
		t.Fatal(err)
	}
	tabbed := 0
	for _, s := range passages {
		s = indentWithTabs(s) // the licence is indented with spaces; real copies often hold tabs
		texts = append(texts, s)
		if strings.Contains(s, "\t") {
			tabbed++
		}
	}
	if tabbed < 150 {
		t.Fatalf("only %d real texts hold tabs", tabbed)
	}
	tokens, embeddings := referenceEmbed(t, texts)

	m := testModel(t)
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	bad, worst := 0, 1.0
	for i, text := range texts {
		c := cosine(got[i], embeddings[i])
		ids := m.Tokenize(text)
		if !slices.Equal(ids, tokens[i]) || !(c >= 0.9999) {
			bad++
			if bad <= 20 {
				t.Errorf("text %d %+.60q: cosine %.6f (want ≥ 0.9999), tokens\n got %v\nwant %v", i, text, c, ids, tokens[i])
			}
		}
		worst = min(worst, c)
	}
	if bad > 0 {
		t.Errorf("%d of %d texts disagree with the reference", bad, len(texts))
	}
	t.Logf("%d texts (%d blank code points, %d real texts with tabs); lowest cosine to the reference %.9f (1 − cosine = %.2g)", len(texts), len(blankRunes()), tabbed, worst, 1-worst)
}

// indentWithTabs turns each line's leading runs of spaces into tabs, a tab for up to eight
// spaces, as editors that indent with tabs save text.
func indentWithTabs(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		n := len(l) - len(strings.TrimLeft(l, " "))
		if n > 0 {
			lines[i] = strings.Repeat("\t", (n+7)/8) + l[n:]
		}
	}
	return strings.Join(lines, "\n")
}

// referenceEmbed runs the reference over texts and returns its token ids and embeddings. The
// reference pads a batch to its longest text and its WebAssembly backend fails on very large
// batches ("table index is out of bounds"), so the texts go in batches of similar length.
func referenceEmbed(tb testing.TB, texts []string) ([][]int, [][]float32) {
	tb.Helper()
	const batch = 512
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(texts[a]) - len(texts[b]) })
	tokens := make([][]int, len(texts))
	embeddings := make([][]float32, len(texts))
	for lo := 0; lo < len(order); lo += batch {
		idx := order[lo:min(lo+batch, len(order))]
		part := make([]string, len(idx), len(idx)+1)
		for j, i := range idx {
			part[j] = texts[i]
		}
		if part[len(idx)-1] == "" { // the reference drops trailing empty strings from a batch
			part = append(part, "x")
		}
		var ref struct {
			Tokens     [][]int     `json:"tokens"`
			Embeddings [][]float64 `json:"embeddings"`
		}
		runReference(tb, map[string]any{"texts": part}, &ref)
		if len(ref.Tokens) != len(part) || len(ref.Embeddings) != len(part) {
			tb.Fatalf("reference answered %d token lists and %d embeddings for %d texts", len(ref.Tokens), len(ref.Embeddings), len(part))
		}
		for j, i := range idx {
			v := make([]float32, len(ref.Embeddings[j]))
			for c, x := range ref.Embeddings[j] {
				v[c] = float32(x)
			}
			if len(v) != hidden {
				tb.Fatalf("reference embedding of %d dimensions, want %d", len(v), hidden)
			}
			tokens[i], embeddings[i] = ref.Tokens[j], v
		}
	}
	return tokens, embeddings
}
