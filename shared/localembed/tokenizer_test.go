package localembed

import (
	"slices"
	"testing"
)

// TestTokenizeQuirks covers the reference's decisions with a vocabulary small enough to follow
// by hand (the wanted ids are what the reference's Tokenizer answers for this vocabulary);
// TestMatchesReference checks the real vocabulary against Node.
func TestTokenizeQuirks(t *testing.T) {
	vocab := `[["\ufffd",0],["<s>",0],["</s>",0],["x1",0],["x2",0],["x3",0],
		["▁",-1],["a",-2],["b",-2],["ab",-3],["▁a",-1.5],["é",-1],["😀",-1],["c",-2],["bc",-4],["zz",0]]`
	tok, err := newTokenizer([]byte(vocab))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		text string
		want []int
	}{
		{"empty", "", []int{}},
		{"prefix and best path", "ab", []int{10, 8}}, // ▁a + b (−3.5) beats ▁ + ab (−4)
		{"space becomes ▁", "a a", []int{10, 10}},
		{"NFKC composes", "e\u0301", []int{6, 11}},             // é is one code point after NFKC
		{"tie goes to the later start", "bc", []int{6, 8, 13}}, // ▁+b+c ties ▁+bc at −5: the later start (c) wins
		{"unknowns collapse", "a\n\t\n", []int{10, 0}},
		// Only U+0020 becomes ▁, after NFKC has turned the compatibility spaces into it; every
		// other space, line break, control and format character stays itself and is unknown.
		{"no-break space is a space after NFKC", "a\u00a0a", []int{10, 10}},
		{"ideographic space is a space after NFKC", "a\u3000a", []int{10, 10}},
		{"compatibility spaces in a row", "a\u2003\u00a0a", []int{10, 6, 10}},
		{"tab is unknown", "a\ta", []int{10, 0, 7}},
		{"leading tab", "\ta", []int{6, 0, 7}},
		{"trailing tab", "a\t", []int{10, 0}},
		{"tab between spaces", "a \t a", []int{10, 6, 0, 10}},
		{"vertical tab is unknown", "a\va", []int{10, 0, 7}},
		{"NUL is unknown", "a\x00a", []int{10, 0, 7}},
		{"next line (C1) is unknown", "a\u0085a", []int{10, 0, 7}},
		{"ogham space mark is unknown", "a\u1680a", []int{10, 0, 7}},
		{"line separator is unknown", "a\u2028a", []int{10, 0, 7}},
		{"zero-width space is unknown", "a\u200ba", []int{10, 0, 7}},
		{"byte order mark is unknown", "a\ufeffa", []int{10, 0, 7}},
		{"unknown emoji", "a🎉", []int{10, 0}},
		{"reserved pieces never match", "x1", []int{6, 0}},
		// The backtrack steps by UTF-16 length: a piece outside the BMP steps back two code
		// points and swallows its neighbour (the real vocabulary has no such piece).
		{"astral piece steps by UTF-16 length", "😀😀", []int{6, 12}},
		{"astral piece swallows a neighbour", "a😀", []int{6, 12}},
		// A score of exactly 0 counts as "no best yet", and an unreachable position backtracks
		// as an unknown of length one.
		{"zero score and unreachable positions", "zzzz", []int{6, 0, 15, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tok.encode(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

// TestTokenizeExample is the case the design notes checked by hand against Node.
func TestTokenizeExample(t *testing.T) {
	m := testModel(t)
	got := m.Tokenize("Hello world.\nNew line\tTab")
	want := []int{341, 4125, 311, 6, 0, 6275, 579, 0, 205, 1112}
	if !slices.Equal(got, want) {
		t.Errorf("Tokenize = %v, want %v", got, want)
	}
}
