package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseEval reads the benchmark's own output format: a row per set/strategy, GOMAXPROCS
// suffix dropped, every value-unit pair kept, other lines ignored.
func TestParseEval(t *testing.T) {
	out := `goos: linux
pkg: github.com/agentorch/agentorch/shared/knowledge
BenchmarkRetrievalQuality/persuasion/dense-2   	       1	1425909843 ns/op	         0.2156 MRR@10	       312.0 chunks	        60.00 questions	         0.2833 recall@5	       291.9 words@5
BenchmarkRetrievalQuality/mpl/hybrid_rrf-2         	       1	 658542003 ns/op	         0.4655 MRR@10	        65.00 chunks	         0.5000 recall@5
BenchmarkRetrievalQuality/apt-get/bm25 	       1	 1 ns/op	         0.75 recall@5
BenchmarkIngest/1MB-2 	 1	 5 ns/op
PASS
`
	got := parseEval(out)
	want := []evalRow{
		{"persuasion", "dense", map[string]float64{"ns/op": 1425909843, "MRR@10": 0.2156, "chunks": 312, "questions": 60, "recall@5": 0.2833, "words@5": 291.9}},
		{"mpl", "hybrid_rrf", map[string]float64{"ns/op": 658542003, "MRR@10": 0.4655, "chunks": 65, "recall@5": 0.5}},
		{"apt-get", "bm25", map[string]float64{"ns/op": 1, "recall@5": 0.75}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("parseEval (-want +got):\n%s", diff)
	}
	var table strings.Builder
	if err := printEval(&table, got, evalColumns); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("table has %d lines, want a header and 3 rows:\n%s", len(lines), table.String())
	}
	for i, want := range [][]string{
		{"set", "strategy", "recall@5", "MRR@10", "words@5", "questions", "answerable", "chunks", "ms/search"},
		{"persuasion", "dense", "0.283", "0.216", "292", "60", "-", "312", "-"},
		{"mpl", "hybrid_rrf", "0.500", "0.466", "-", "-", "-", "65", "-"},
	} {
		if diff := cmp.Diff(want, strings.Fields(lines[i])); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestEvalArgs(t *testing.T) {
	if _, err := kb(t, "", "eval", "file.txt"); err == nil || !strings.Contains(err.Error(), "no FILE") {
		t.Errorf("kb eval file.txt: %v, want an error", err)
	}
	if _, err := kb(t, "", "eval", "--top-k", "-1"); err == nil || !strings.Contains(err.Error(), "--top-k") {
		t.Errorf("kb eval --top-k -1: %v, want an error", err)
	}
	if _, err := kb(t, "", "eval", "--bogus"); err == nil {
		t.Error("kb eval --bogus: no error")
	}
}
