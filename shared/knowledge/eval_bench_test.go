package knowledge_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
)

// evalStrategies are the retrieval strategies the evaluation compares.
var evalStrategies = []domain.RetrievalStrategy{domain.StrategyDense, domain.StrategyBM25, domain.StrategyHybrid, domain.StrategyHybridRRF}

// evalScore is what one pass over the labelled set measured.
type evalScore struct {
	recall5 float64 // share of questions with a relevant hit among the top 5 (top_k 5)
	mrr10   float64 // mean of 1/rank of the first relevant hit among the top 10 (top_k 10; 0 if none)
	words5  float64 // mean number of words the top_k 5 search returned, all hits together
	recallK float64 // recall at evalTopK (top_k evalTopK), when it is set
	wordsK  float64 // words the top_k evalTopK search returned
}

// evalTopK is a further top_k to measure recall and returned words at (EVAL_TOP_K; 0: none), to
// compare settings at equal returned text (top_k × chunk size): `kb eval --top-k N`.
func evalTopK(b *testing.B) int {
	v := os.Getenv("EVAL_TOP_K")
	if v == "" {
		return 0
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 1 {
		b.Fatalf("EVAL_TOP_K=%q: want a positive integer", v)
	}
	return k
}

// BenchmarkRetrievalQuality is the retrieval evaluation of testdata/eval/README.md: for each
// labelled set of evalSets (Persuasion chapters 1-6, the MPL 2.0, the apt-get manual), its
// corpus is ingested once with the real `local` embedder through the real OpenSearch adapter on
// the in-process stand-in, into a knowledge base of its own, then every question is asked with
// each strategy through Service.Search. It reports, per set and strategy (sub-benchmark
// set/strategy), recall@5 and MRR@10, the size of the set, the words a top-5 search returns
// (top-k × chunk size: bigger chunks should not pass for better ranking), and the time of one
// search. One op is one pass over a set (two searches a question: top_k 5 and top_k 10; a third
// at EVAL_TOP_K if set, reported as recall@K and words@K).
//
//	go test ./shared/knowledge -run '^$' -bench RetrievalQuality -benchtime 1x
//	go run ./scripts/kb eval
func BenchmarkRetrievalQuality(b *testing.B) {
	providers := localProviders(b)
	for _, set := range evalSets() {
		b.Run(set.name, func(b *testing.B) { benchEvalSet(b, providers, set) })
	}
}

// benchEvalSet ingests one set and runs its questions with every strategy.
func benchEvalSet(b *testing.B, providers *embeddings.Providers, set evalSet) {
	files := set.files(b)
	qs := evalQuestions(b, set)

	// Ingest once: the sub-benchmarks share the knowledge base (a benchmark with
	// sub-benchmarks runs its own body once).
	ctx := context.Background()
	k := newKBService(b, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Embedders = providers })
	var ids []any
	for _, f := range files {
		fv, err := k.Svc.Upload(ctx, alice, library.Upload{Name: f.Name, Data: []byte(f.Text)})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, fv.ID)
	}
	body := map[string]any{"selected_datasources": ids, "embedding_config": map[string]any{"provider": "local"}}
	if os.Getenv("EVAL_CONTEXTUAL_HEADERS") == "1" { // kb eval --contextual-headers
		body["chunking_strategy"] = map[string]any{"contextual_headers": true}
	}
	kb := k.createKB(b, alice, set.name, body)
	if errs := k.drain(b); len(errs) > 0 {
		b.Fatalf("ingestion errors: %v", errs)
	}
	if got := k.get(b, alice, kb.ID); got.Status != domain.KBCompleted || got.SuccessRate() != 100 {
		b.Fatalf("status %s, success rate %d: %+v", got.Status, got.SuccessRate(), sourceErrors(got))
	}
	stored := k.Index.Stored()
	chunks := len(stored)
	// answerable: the share of questions whose answer phrase some stored chunk holds whole. The
	// ingestion chunks by the model's own tokens (chunk.DefaultTokens), which TestRetrievalEvalSet
	// cannot run without the model, so a phrase cut by a boundary here is a ceiling on recall,
	// not an error.
	var answerable float64
	for _, q := range qs {
		for _, c := range stored {
			if answers(c.Text, q) {
				answerable++
				break
			}
		}
	}
	answerable /= float64(len(qs))

	topK := evalTopK(b)
	for _, st := range evalStrategies {
		b.Run(string(st), func(b *testing.B) {
			var score evalScore
			b.ResetTimer()
			began := time.Now()
			for i := 0; i < b.N; i++ {
				score = evalPass(b, k, kb.ID, st, qs, topK)
			}
			elapsed := time.Since(began)
			b.ReportMetric(score.recall5, "recall@5")
			b.ReportMetric(score.mrr10, "MRR@10")
			b.ReportMetric(score.words5, "words@5")
			if topK > 0 {
				b.ReportMetric(score.recallK, fmt.Sprintf("recall@%d", topK))
				b.ReportMetric(score.wordsK, fmt.Sprintf("words@%d", topK))
			}
			b.ReportMetric(float64(len(qs)), "questions")
			b.ReportMetric(float64(chunks), "chunks")
			b.ReportMetric(answerable, "answerable")
			searches := 2 // top_k 5 and 10 a question, and evalTopK's if set
			if topK > 0 {
				searches++
			}
			b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(searches*len(qs)*b.N), "ms/search")
		})
	}
}

// evalPass asks every question with one strategy and scores the hits. A failed search ends the
// benchmark with its error as it is: a strategy the stack cannot serve is a finding, not
// something to work around.
func evalPass(b *testing.B, k *kbHarness, kbID string, st domain.RetrievalStrategy, qs []evalQuestion, topK int) evalScore {
	ctx := context.Background()
	search := func(q evalQuestion, topK int) []domain.Hit {
		res, err := k.Svc.Search(ctx, alice, kbID, decoded[knowledge.SearchInput](map[string]any{"query": q.Question, "top_k": topK, "strategy": string(st)}))
		if err != nil {
			b.Fatalf("%s: search %s (top_k %d): %v", st, q.ID, topK, err)
		}
		return res
	}
	var found, rr, words, foundK, wordsK float64
	for _, q := range qs {
		if topK > 0 {
			hits := search(q, topK)
			if firstRelevant(hits, q) > 0 {
				foundK++
			}
			for _, h := range hits {
				wordsK += float64(len(strings.Fields(h.Text)))
			}
		}
		hits := search(q, 5)
		if firstRelevant(hits, q) > 0 {
			found++
		}
		for _, h := range hits {
			words += float64(len(strings.Fields(h.Text)))
		}
		if r := firstRelevant(search(q, 10), q); r > 0 {
			rr += 1 / float64(r)
		}
	}
	n := float64(len(qs))
	return evalScore{recall5: found / n, mrr10: rr / n, words5: words / n, recallK: foundK / n, wordsK: wordsK / n}
}

// firstRelevant is the rank (from 1) of the first hit that answers q, or 0.
func firstRelevant(hits []domain.Hit, q evalQuestion) int {
	for i, h := range hits {
		if answers(h.Text, q) {
			return i + 1
		}
	}
	return 0
}
