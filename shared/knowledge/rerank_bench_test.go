package knowledge_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

// BenchmarkSearchRerank is what reranking adds to a search: the same top_k 5 search without
// rerank (off: first stage top 5), the first stage a rerank runs (first-stage-20: top 20) and
// with rerank (top 20, then one Rerank request over HTTP with the real SDK client to the
// in-process stand-in, which scores by word overlap in microseconds). rerank − off is what the
// option costs here, rerank − first-stage-20 the Rerank request's own share (serialisation,
// signing, HTTP, mapping back); on AWS add Bedrock's model time, which no stand-in measures.
// One op is one search.
//
//	go test ./shared/knowledge -run '^$' -bench SearchRerank
func BenchmarkSearchRerank(b *testing.B) {
	f, srv := rerankFixture(b)
	files := []*domain.File{f.returns, f.shipping, f.notes}
	for i := range 40 {
		files = append(files, f.addFile(b, alice, fmt.Sprintf("policy-%02d.txt", i), fmt.Sprintf("Policy %d.\n\nA refund for order type %d is paid within %d business days "+
			"once the returned item reaches the warehouse; the customer is told by email, and the manager reviews requests after thirty days.", i, i, i%9+2)))
	}
	f.kb = f.createKB(b, alice, "Bench", map[string]any{"selected_datasources": idList(files...)})
	if errs := f.drain(b); len(errs) != 0 {
		b.Fatalf("jobs failed: %v", errs)
	}
	query := "how many business days until the refund is paid"
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"off", map[string]any{"query": query, "top_k": json.Number("5")}},
		{"first-stage-20", map[string]any{"query": query, "top_k": json.Number("20")}},
		{"rerank", map[string]any{"query": query, "top_k": json.Number("5"), "rerank": true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			before := srv.Calls()
			for range b.N {
				if hits := f.search(b, alice, f.kb.ID, tc.body); len(hits) < 5 {
					b.Fatalf("%d hits", len(hits))
				}
			}
			b.ReportMetric(float64(srv.Calls()-before)/float64(b.N), "rerank-requests/op")
		})
	}
}
