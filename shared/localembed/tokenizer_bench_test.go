package localembed

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// tokenizerTexts are the passages of testdata/spec-and-licence.json (the Go specification and
// the Apache licence as files hold them: line breaks, indentation) and the units chunk.Words
// tokenizes to cost their words: "x" and each word with the whitespace before it.
func tokenizerTexts(tb testing.TB) (passages, units []string) {
	tb.Helper()
	raw, err := os.ReadFile("testdata/spec-and-licence.json")
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(raw, &passages); err != nil {
		tb.Fatal(err)
	}
	for _, p := range passages {
		prev := 0
		for _, w := range strings.Fields(p) {
			at := prev + strings.Index(p[prev:], w)
			units = append(units, "x"+p[prev:at+len(w)])
			prev = at + len(w)
		}
	}
	return passages, units
}

// BenchmarkTokenize tokenizes chunk-length passages ("passage") and the short units ingestion's
// chunker costs words with ("unit"), building the ids (Tokenize) and counting them only (Count).
//
//	go test ./shared/localembed -run '^$' -bench Tokenize -benchmem
func BenchmarkTokenize(b *testing.B) {
	m := testModel(b)
	passages, units := tokenizerTexts(b)
	for _, c := range []struct {
		name  string
		texts []string
		run   func(string) int
	}{
		{"passage/ids", passages, func(s string) int { return len(m.Tokenize(s)) }},
		{"passage/count", passages, m.Count},
		{"unit/ids", units, func(s string) int { return len(m.Tokenize(s)) }},
		{"unit/count", units, m.Count},
	} {
		b.Run(c.name, func(b *testing.B) {
			bytes := 0
			for _, t := range c.texts {
				bytes += len(t)
			}
			b.SetBytes(int64(bytes))
			for b.Loop() {
				for _, t := range c.texts {
					c.run(t)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(c.texts)), "µs/text")
		})
	}
}
