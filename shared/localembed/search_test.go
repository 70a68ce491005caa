package localembed

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// latticeEncode is the tokenizer as first ported from the reference, decision for decision: the
// candidates of every end position collected by ascending start, then one loop over the end
// positions. search reorganises it (forward relaxation over a trie, pooled buffers, a count
// without ids); TestSearchMatchesLattice holds the two equal.
func latticeEncode(t *tokenizer, text string) []int {
	s := string(preprocess(nil, text))
	if s == "" {
		return []int{}
	}
	offs := make([]int, 0, len(s)+1)
	for i := range s {
		offs = append(offs, i)
	}
	n := len(offs)
	offs = append(offs, len(s))
	type cand struct {
		start int
		id    int32
	}
	cands := make([][]cand, n+1)
	for i := 0; i < n; i++ {
		found := false
		for l := 1; l <= t.maxLen && i+l <= n; l++ {
			if id, ok := t.trie.lookup(s[offs[i]:offs[i+l]]); ok {
				cands[i+l] = append(cands[i+l], cand{i, id})
				found = true
			}
		}
		if !found {
			cands[i+1] = append(cands[i+1], cand{i, 0})
		}
	}
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for end := 0; end <= n; end++ {
		for _, c := range cands[end] {
			score := t.scores[c.id] + best[c.start]
			if best[end] == 0 || score >= best[end] {
				best[end] = score
				words[end] = c.id
			}
		}
	}
	var rev []int
	for it := n; it > 0; it -= t.units[words[it]] {
		rev = append(rev, int(words[it]))
	}
	ids := make([]int, 0, len(rev))
	prevUnk := false
	for _, id := range rev {
		if !(prevUnk && id == 0) {
			ids = append(ids, id)
		}
		prevUnk = id == 0
	}
	slices.Reverse(ids)
	return ids
}

// vocabPieces reads the real vocabulary's pieces (id order) from the model's vocab.json.
func vocabPieces(tb testing.TB) []string {
	tb.Helper()
	raw, err := os.ReadFile(modelDir(tb) + "/vocab.json")
	if err != nil {
		tb.Fatal(err)
	}
	var entries [][2]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		tb.Fatal(err)
	}
	pieces := make([]string, len(entries))
	for i, e := range entries {
		if err := json.Unmarshal(e[0], &pieces[i]); err != nil {
			tb.Fatal(err)
		}
	}
	return pieces
}

// TestTrieHoldsThePieces: the trie finds every piece of the real vocabulary (a repeated piece
// under its last id, reserved ones never), and none of the strings that only begin or extend
// one.
func TestTrieHoldsThePieces(t *testing.T) {
	tok := testModel(t).tok
	pieces := vocabPieces(t)
	want := map[string]int32{}
	for i, p := range pieces {
		if i >= reservedPieces {
			want[p] = int32(i)
		}
	}
	for i, p := range pieces {
		id, ok := tok.trie.lookup(p)
		if w, in := want[p]; ok != in || id != w {
			t.Errorf("lookup(%q) (entry %d) = %d, %v; want %d, %v", p, i, id, ok, w, in)
		}
		for _, s := range []string{p[:len(p)-1], p + "q", p + "\u2581", "\u2581" + p} {
			id, ok := tok.trie.lookup(s)
			if w, in := want[s]; ok != in || id != w {
				t.Errorf("lookup(%q) = %d, %v; want %d, %v", s, id, ok, w, in)
			}
		}
	}
	if _, ok := tok.trie.lookup(""); ok {
		t.Error("the empty string is a piece")
	}
}

// searchTexts are texts to compare the tokenizers on: the package's sentences and passages, the
// chunker's units of them, and seeded random strings made of pieces, their parts, spaces, line
// breaks, unknown and astral characters, combining marks and invalid bytes.
func searchTexts(tb testing.TB) []string {
	tb.Helper()
	passages, units := tokenizerTexts(tb)
	texts := append(append(loadSentences(tb), passages...), units...)
	pieces := vocabPieces(tb)
	r := rand.New(rand.NewPCG(27, 1))
	extra := []string{" ", "  ", "\n", "\t", "\n\n", "\u00a0", "\u3000", "\u2028", "•", "😀", "e\u0301", "\xff", "\ufffd", ":30", ":00", "://", "ﬁ", "①"}
	for range 3000 {
		var b strings.Builder
		for range r.IntN(40) {
			switch k := r.IntN(10); {
			case k < 5:
				b.WriteString(strings.ReplaceAll(pieces[r.IntN(len(pieces))], "\u2581", " "))
			case k < 7:
				p := pieces[r.IntN(len(pieces))]
				if n := utf8.RuneCountInString(p); n > 1 {
					b.WriteString(string([]rune(p)[r.IntN(n):]))
				}
			default:
				b.WriteString(extra[r.IntN(len(extra))])
			}
		}
		texts = append(texts, b.String())
	}
	return texts
}

// TestSearchMatchesLattice: encode and count give, on every text, the ids (and their number)
// of the tokenizer as first ported, whose ids TestMatchesReference checks against Node.
func TestSearchMatchesLattice(t *testing.T) {
	tok := testModel(t).tok
	texts := searchTexts(t)
	differ := 0
	for _, s := range texts {
		want := latticeEncode(tok, s)
		got, n := tok.encode(s), tok.count(s)
		if !slices.Equal(got, want) || n != len(want) {
			if differ++; differ <= 10 {
				t.Errorf("%q: encode %v, count %d; want %v", s, got, n, want)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d texts differ", differ, len(texts))
	}
	// The quirks' vocabulary (TestTokenizeQuirks) through the same two paths.
	quirks := `[["\ufffd",0],["<s>",0],["</s>",0],["x1",0],["x2",0],["x3",0],
		["▁",-1],["a",-2],["b",-2],["ab",-3],["▁a",-1.5],["é",-1],["😀",-1],["c",-2],["bc",-4],["zz",0]]`
	small, err := newTokenizer([]byte(quirks))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(27, 2))
	alphabet := []string{"a", "b", "c", "z", "é", "e\u0301", "😀", "🎉", " ", "\t", "x1"}
	for range 5000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		if want, got := latticeEncode(small, s), small.encode(s); !slices.Equal(got, want) || small.count(s) != len(want) {
			t.Fatalf("%q: encode %v, count %d; want %v", s, got, small.count(s), want)
		}
	}
}

// FuzzSearchMatchesLattice: any text tokenizes as the tokenizer as first ported does.
func FuzzSearchMatchesLattice(f *testing.F) {
	for _, s := range []string{"", "Hello world.\nNew line\tTab", "a  b", "😀x", "\xff\xfe", ":30:00", "e\u0301\u00a0"} {
		f.Add(s)
	}
	tok := testModel(f).tok
	f.Fuzz(func(t *testing.T, s string) {
		want := latticeEncode(tok, s)
		if got := tok.encode(s); !slices.Equal(got, want) || tok.count(s) != len(want) {
			t.Errorf("%q: encode %v, count %d; want %v", s, got, tok.count(s), want)
		}
	})
}
