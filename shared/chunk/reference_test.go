package chunk

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// chunking is a recursive chunking_strategy; nil separators are LangChain's default.
func chunking(size, overlap int, splitBy string, seps []string) domain.Chunking {
	if seps == nil {
		seps = LangChainSeparators()
	}
	return domain.Chunking{Strategy: StrategyRecursive, ChunkSize: size, ChunkOverlap: overlap, SplitBy: splitBy,
		RecursiveSeparators: seps}
}

// edgeTexts are texts made to hit each rule that changes boundaries.
func edgeTexts() []string {
	longWord := strings.Repeat("Pneumonoultramicroscopicsilicovolcanoconiosis", 40)
	return []string{
		"",
		"a\n\n\nb",
		"One.\n\n\n\nTwo two.\n\n\nThree three three.\n\nFour.\n\n\n\n\n",
		"\n\n\n\n",
		"   \t  \n  ",
		"Alpha beta gamma deltaEpsilonzetaetatheta iota. Kappa lambda mu. Nu xi omicron pi rho sigma tau.",
		"Emoji 😀😃😄 in text 👩‍👩‍👧‍👦 family, flags 🇩🇪🇫🇷, and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math. 😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀 end.\n\nNext 🎉 paragraph.",
		"\uFEFFByte order mark at the start.\u00A0No-break spaces\u00A0\u00A0here.\u0085Next line (U+0085) kept by trim.\u0085\n\n\u2028Line separator\u2029paragraph separator.\u3000Ideographic\u3000space.\v\f\uFEFF",
		"Windows line ends.\r\nSecond line.\r\n\r\nNew paragraph here, with more words.\r\n\r\n\r\nAnd a last one.\r\n",
		"Short intro.\n\n" + longWord + "\n\nAfter the long word. " + longWord[:500] + " tail.",
		strings.Repeat("無分隔的中文文本沒有空格。", 60) + "\n\n日本語のテキストも。",
		"Regex specials: a.b(c)d$e^f*g+h?i|j\\k[l]m{n}o/p-q. End. $$ (( )) || \\\\ .. ",
		strings.Repeat("😀", 300),
		"x😀y😀z",
		"\u0085\u0085\u0085 only NEL \u0085\u0085",
		" \uFEFF \u00A0 ",
	}
}

// randomTexts are seeded random texts over an alphabet rich in separators, whitespace of every
// kind, surrogate pairs and regex metacharacters.
func randomTexts(n int) []string {
	rng := rand.New(rand.NewPCG(8, 2026))
	atoms := []string{"a", "b", "word", "longerword", " ", "  ", "\n", "\n\n", "\n\n\n", ". ", ".", ",", "\t",
		"\r\n", "\u00A0", "\uFEFF", "\u0085", "\u2028", "\u3000", "😀", "👍🏽", "𝔘", "é", "中文", "$", "(", "\\", "|", "-", "e\u0301"}
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for range rng.IntN(400) {
			sb.WriteString(atoms[rng.IntN(len(atoms))])
		}
		out[i] = sb.String()
	}
	return out
}

// curly is an ASCII text with typographic quotes and dashes, so that it is not ASCII throughout.
func curly(text string) string {
	var sb strings.Builder
	open := true
	for _, r := range text {
		switch r {
		case '"':
			sb.WriteString(map[bool]string{true: "“", false: "”"}[open])
			open = !open
		case '\'':
			sb.WriteString("’")
		default:
			sb.WriteRune(r)
		}
	}
	return strings.ReplaceAll(sb.String(), "--", "—")
}

// params are the chunking parameters every small text is split with.
var params = []struct {
	size, overlap int
	splitBy       string
	seps          []string
}{
	{2000, 200, SplitChar, nil},
	{2000, 200, SplitChar, AttheneSeparators()},
	{500, 50, SplitChar, AttheneSeparators()},
	{100, 0, SplitChar, nil},
	{100, 30, SplitChar, AttheneSeparators()},
	{37, 5, SplitChar, AttheneSeparators()},
	{10, 3, SplitChar, AttheneSeparators()},
	{10, 9, SplitChar, nil},
	{5, 1, SplitChar, []string{"\n\n", "\n"}},
	{3, 2, SplitChar, []string{" "}},
	{2, 1, SplitChar, nil},
	{1, 0, SplitChar, AttheneSeparators()},
	{1, 0, SplitChar, nil},
	{12, 4, SplitChar, []string{".", "(", "$", "\\", "|", "😀", "-"}},
	{8, 2, SplitChar, []string{""}},
	{20, 5, SplitChar, []string{"\r\n\r\n", "\r\n", " "}},
	{20, 5, SplitChar, []string{"\n\n", "\n", ". ", " ", ""}},
	{6, 0, SplitChar, []string{"zzz-not-there"}},
	{500, 50, SplitWord, AttheneSeparators()},
	{80, 10, SplitWord, AttheneSeparators()},
	{20, 5, SplitWord, nil},
	{3, 1, SplitWord, AttheneSeparators()},
	{2, 0, SplitWord, []string{"\n"}},
	{1, 0, SplitWord, AttheneSeparators()},
}

// TestMatchesLangChainJS requires the very chunks LangChain.js's RecursiveCharacterTextSplitter
// makes (for split_by "word": with the word length function, see the package doc) on a novel, its
// non-ASCII variant, edge texts and seeded random texts, over sizes, overlaps and separator lists
// (LangChain's, Atthene's without "", custom ones with regex metacharacters and emoji). Lone
// surrogates from JS arrive as U+FFFD (encoding/json's reading of a lone "\ud83d"), which is
// how the splitter represents them too.
func TestMatchesLangChainJS(t *testing.T) {
	novel := persuasion(t)
	small := append(edgeTexts(), randomTexts(40)...)
	small = append(small, novel[:20_000], curly(novel[:8_000]))
	texts := append([]string{novel, curly(novel[:60_000])}, small...)
	var req refRequest
	req.Texts = texts
	type named struct {
		name string
		c    domain.Chunking
	}
	var names []named
	add := func(text, size, overlap int, splitBy string, seps []string) {
		req.Cases = append(req.Cases, refCase{Text: text, Size: size, Overlap: overlap, Separators: seps, SplitBy: splitBy})
		names = append(names, named{fmt.Sprintf("text%d/%s-%d-%d-%q", text, splitBy, size, overlap, seps), chunking(size, overlap, splitBy, seps)})
	}
	for _, p := range []struct{ size, overlap int }{{2000, 200}, {1000, 200}, {300, 60}, {100, 20}} {
		add(0, p.size, p.overlap, SplitChar, nil)
		add(0, p.size, p.overlap, SplitChar, AttheneSeparators())
		add(1, p.size, p.overlap, SplitChar, AttheneSeparators())
	}
	add(0, 500, 50, SplitWord, AttheneSeparators())
	add(0, 80, 10, SplitWord, AttheneSeparators())
	add(1, 80, 10, SplitWord, nil)
	for i := 2; i < len(texts); i++ {
		for _, p := range params {
			add(i, p.size, p.overlap, p.splitBy, p.seps)
		}
	}
	resp := runReference(t, req)
	t.Logf("%d cases on %d texts against LangChain.js under Node %s", len(req.Cases), len(texts), resp.Node)
	failed, cut := 0, 0
	for i, c := range req.Cases {
		s, err := New(names[i].c)
		if err != nil {
			t.Fatalf("%s: New: %v", names[i].name, err)
		}
		got := s.Split(texts[c.Text])
		want := resp.Chunks[i]
		if want == nil {
			want = []string{}
		}
		if d := cmp.Diff(want, got); d != "" {
			failed++
			if failed <= 5 {
				t.Errorf("%s: chunks differ from LangChain.js (-js +go):\n%s", names[i].name, d)
			}
		}
		for _, w := range want {
			if strings.ContainsRune(w, utf8.RuneError) && !strings.ContainsRune(texts[c.Text], utf8.RuneError) {
				cut++
				break
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d cases differ", failed, len(req.Cases))
	}
	if cut == 0 {
		t.Error("no case cut a surrogate pair: the lone-surrogate rule went untested")
	}
}
