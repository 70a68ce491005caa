package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/extract"
)

// kb runs the command and returns its standard output.
func kb(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out strings.Builder
	err := run(context.Background(), args, strings.NewReader(stdin), &out)
	return out.String(), err
}

type line struct {
	Index  int    `json:"index"`
	Text   string `json:"text"`
	Length int    `json:"length"`
}

// lines decodes chunk's output, strictly: one object a line, no other fields.
func lines(t *testing.T, out string) []line {
	t.Helper()
	var got []line
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		var l line
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, l)
	}
	return got
}

// extracted is what ingestion would extract from a testdata file.
func extracted(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := extract.Text(context.Background(), name, b, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Text
}

// TestExtract prints the text of the page, not its markup, script or style.
func TestExtract(t *testing.T) {
	out, err := kb(t, "", "extract", "testdata/sample.html")
	if err != nil {
		t.Fatal(err)
	}
	if want := extracted(t, "testdata/sample.html") + "\n"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	if !strings.Contains(out, "Sir Walter Elliot, of Kellynch Hall") || strings.Contains(out, "<p>") || strings.Contains(out, "not text") {
		t.Fatalf("extract printed %q", out)
	}
}

// TestChunk: the flags (before or after FILE) reach the splitter, and each chunk is one JSON line.
func TestChunk(t *testing.T) {
	text := extracted(t, "testdata/sample.txt")
	tests := []struct {
		name string
		args []string
		want domain.Chunking
	}{
		{"defaults", []string{"chunk", "testdata/sample.txt"}, chunk.Default()},
		{"flags after FILE", []string{"chunk", "testdata/sample.txt", "--chunk-size", "300", "--chunk-overlap", "40", "--split-by", "char"},
			domain.Chunking{Strategy: "recursive", ChunkSize: 300, ChunkOverlap: 40, SplitBy: "char", RecursiveSeparators: chunk.AttheneSeparators()}},
		{"flags around FILE", []string{"chunk", "--split-by", "word", "testdata/sample.txt", "--chunk-size=40", "--chunk-overlap", "5", "--separators", `["\n", " "]`},
			domain.Chunking{Strategy: "recursive", ChunkSize: 40, ChunkOverlap: 5, SplitBy: "word", RecursiveSeparators: []string{"\n", " "}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := kb(t, "", tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			s, err := chunk.New(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			var want []line
			for _, c := range s.Chunks(text) {
				want = append(want, line{c.Index, c.Text, c.Length})
			}
			if len(want) < 3 {
				t.Fatalf("only %d chunks: the case tests nothing", len(want))
			}
			if d := cmp.Diff(want, lines(t, out)); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestChunkStdin reads FILE "-" from standard input.
func TestChunkStdin(t *testing.T) {
	out, err := kb(t, "alpha beta gamma delta epsilon", "chunk", "-", "--chunk-size", "2", "--chunk-overlap", "0")
	if err != nil {
		t.Fatal(err)
	}
	want := []line{{0, "alpha beta", 2}, {1, "gamma delta", 2}, {2, "epsilon", 1}}
	if d := cmp.Diff(want, lines(t, out)); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

// TestErrors name the flag or the problem.
func TestErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "usage"},
		{[]string{"embedd", "x"}, `unknown command "embedd"`},
		{[]string{"chunk"}, "want one FILE"},
		{[]string{"chunk", "a", "b"}, "want one FILE"},
		{[]string{"chunk", "testdata/sample.txt", "--chunk-size", "10", "--chunk-overlap", "10"}, "--chunk-overlap: must be less than chunk_size"},
		{[]string{"chunk", "testdata/sample.txt", "--chunk-size", "0"}, "--chunk-size: must be a positive integer"},
		{[]string{"chunk", "testdata/sample.txt", "--split-by", "sentence"}, "--split-by:"},
		{[]string{"chunk", "testdata/sample.txt", "--separators", `"\n"`}, "JSON array"},
		{[]string{"chunk", "testdata/sample.txt", "--separators", `[]`}, "--separators: must list at least one"},
		{[]string{"chunk", "testdata/sample.txt", "--size", "3"}, "flag provided but not defined: -size"},
		{[]string{"extract", "testdata/missing.txt"}, "no such file"},
		// Flags are checked before the file is read.
		{[]string{"chunk", "testdata/missing.txt", "--chunk-size", "-1"}, "--chunk-size: must be a positive integer"},
	}
	for _, tt := range tests {
		_, err := kb(t, "", tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("kb %q: %v, want an error saying %q", tt.args, err, tt.want)
		}
	}
}

// TestEmbed embeds one text a line with the local model: one unit vector of 612 (use-lite-glove) per line, in
// order, and a paraphrase nearer its match than unrelated text.
func TestEmbed(t *testing.T) {
	in := "how long do I have to return an item\n\npurchases may be sent back within thirty days\nthe weather in Lisbon is mild in winter\n"
	out, err := kb(t, in, "embed", "-", "--provider", "local")
	if err != nil {
		t.Fatal(err)
	}
	type emb struct {
		Index     int       `json:"index"`
		Text      string    `json:"text"`
		Tokens    int       `json:"tokens"`
		Embedding []float64 `json:"embedding"`
	}
	var got []emb
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e emb
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, e)
	}
	if len(got) != 3 || got[1].Text != "purchases may be sent back within thirty days" || got[2].Index != 2 {
		t.Fatalf("want 3 lines in order without the empty one, got %+v", got)
	}
	dot := func(a, b []float64) (s float64) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	for _, e := range got {
		if len(e.Embedding) != 612 || e.Tokens <= 0 { // use-lite-glove, the local default
			t.Fatalf("line %d: %d dimensions, %d tokens", e.Index, len(e.Embedding), e.Tokens)
		}
		if n := dot(e.Embedding, e.Embedding); n < 0.999 || n > 1.001 {
			t.Fatalf("line %d: squared norm %f, want 1", e.Index, n)
		}
	}
	if near, far := dot(got[0].Embedding, got[1].Embedding), dot(got[0].Embedding, got[2].Embedding); near <= far {
		t.Fatalf("paraphrase %.3f not nearer than unrelated %.3f", near, far)
	}
	if _, err := kb(t, "x\n", "embed", "-", "--provider", "local", "--dimensions", "7"); err == nil || !strings.Contains(err.Error(), "dimensions") {
		t.Fatalf("--dimensions 7: want an error naming dimensions, got %v", err)
	}
	if _, err := kb(t, "x\n", "embed", "-", "--provider", "nope"); err == nil {
		t.Fatal("--provider nope: want an error")
	}
}
