package vectors_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/vectors"
)

// corpus is one file of four chunks whose texts and vectors point different ways.
var corpus = []struct {
	text string
	vec  []float32
}{
	{"the cat sat on the mat", unit(1, 0, 0, 0)},
	{"dogs chase cars in the street", unit(0, 1, 0, 0)},
	{"quarterly revenue grew by ten percent", unit(0, 0, 1, 0)},
	{"the weather today is sunny and warm", unit(0, 0, 0, 1)},
}

func putCorpus(t *testing.T, s *stand, index, company, kbID, fileID string) []vectors.Chunk {
	t.Helper()
	var chunks []vectors.Chunk
	for i, c := range corpus {
		chunks = append(chunks, vectors.Chunk{KBID: kbID, Company: company, FileID: fileID, FileName: "doc.txt",
			ChunkIndex: i, Text: c.text, Tags: []string{"manual"}, Vector: c.vec})
	}
	s.put(t, index, chunks)
	return chunks
}

func TestSearchStrategies(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	putCorpus(t, s, ix, "acme", "kb1", "f1")
	s.refresh(t, ix)
	if err := s.store.EnsurePipelines(ctx(t)); err != nil {
		t.Fatal(err)
	}
	base := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 4}

	// dense: the chunk nearest to the vector first, scored (1 + cos)/2.
	qv := unit(0.2, 0.9, 0.1, 0)
	q := base
	q.Vector = qv
	hits := s.search(t, ix, q)
	if len(hits) != 4 || hits[0].ChunkIndex != 1 {
		t.Fatalf("dense hits %v, want chunk 1 first of 4", ids(hits))
	}
	for _, h := range hits {
		want := (1 + cosine(qv, corpus[h.ChunkIndex].vec)) / 2
		if math.Abs(h.Score-want) > 1e-4 {
			t.Errorf("dense score of chunk %d = %v, want (1+cos)/2 = %v", h.ChunkIndex, h.Score, want)
		}
	}
	if h := hits[0]; h.Text != corpus[1].text || h.FileName != "doc.txt" || h.KBID != "kb1" || h.FileID != "f1" ||
		!cmp.Equal(h.Tags, []string{"manual"}) || h.ID != vectors.ChunkID("kb1", "f1", 1) {
		t.Errorf("hit = %+v", h)
	}

	// dense with a threshold between the best and the second score: only the best remains.
	q.MinScore = ptr((hits[0].Score + hits[1].Score) / 2)
	if got := s.search(t, ix, q); len(got) != 1 || got[0].ChunkIndex != 1 {
		t.Errorf("dense with min score %v: %v", *q.MinScore, ids(got))
	}

	// bm25: the chunk with the words, whatever the vector.
	q = base
	q.Strategy, q.Text = vectors.BM25, "revenue percent"
	hits = s.search(t, ix, q)
	if len(hits) != 1 || hits[0].ChunkIndex != 2 || hits[0].Score <= 0 {
		t.Errorf("bm25 hits %v %v, want chunk 2 alone", ids(hits), hits)
	}
	q.MinScore = ptr(1.0) // ignored: BM25 scores are not on a 0..1 scale
	if got := s.search(t, ix, q); len(got) != 1 {
		t.Errorf("bm25 with a threshold: %v", ids(got))
	}

	// hybrid and hybrid_rrf: reciprocal rank fusion of the two lists (each sub-query's list goes
	// half as deep again as top_k). BM25 ranks chunk 3 ("sunny weather") first and chunk 0
	// ("cat") second; k-NN ranks chunk 3 first and chunk 0 second too: chunk 3 scores
	// 1/61 + 1/61, chunk 0 1/62 + 1/62; hybrid scales them by 61/2 (1 for first in both).
	text := "sunny weather cat"
	q = base
	q.Strategy, q.Text, q.Vector = vectors.HybridRRF, text, unit(0.2, 0, 0, 1)
	hits = s.search(t, ix, q)
	if len(hits) < 2 || hits[0].ChunkIndex != 3 || math.Abs(hits[0].Score-2.0/61) > 1e-6 {
		t.Fatalf("rrf hits %v %v, want chunk 3 first with 2/61", ids(hits), hits)
	}
	for _, h := range hits {
		if h.ChunkIndex == 0 && math.Abs(h.Score-2.0/62) > 1e-6 {
			t.Errorf("rrf score of chunk 0 = %v, want 2/62", h.Score)
		}
	}
	q.MinScore = ptr(0.5) // ignored: RRF scores are not on a 0..1 scale
	if got := s.search(t, ix, q); len(got) != len(hits) {
		t.Errorf("rrf with a threshold: %v, want %v", ids(got), ids(hits))
	}
	q.Strategy, q.MinScore = vectors.Hybrid, nil
	scaled := s.search(t, ix, q)
	if !cmp.Equal(ids(scaled), ids(hits)) || math.Abs(scaled[0].Score-1) > 1e-6 {
		t.Fatalf("hybrid hits %v %v, want the rrf ranking with chunk 3 at 1", ids(scaled), scaled)
	}
	for i, h := range scaled {
		if want := hits[i].Score * 61 / 2; math.Abs(h.Score-want) > 1e-6 {
			t.Errorf("hybrid score of chunk %d = %v, want rrf × 61/2 = %v", h.ChunkIndex, h.Score, want)
		}
	}
	q.MinScore = ptr((scaled[0].Score + scaled[1].Score) / 2)
	if got := s.search(t, ix, q); len(got) != 1 || got[0].ChunkIndex != 3 {
		t.Errorf("hybrid with min score %v: %v", *q.MinScore, ids(got))
	}
}

func TestSearchTenantIsolation(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	putCorpus(t, s, ix, "acme", "kb1", "f1")
	putCorpus(t, s, ix, "acme", "kb2", "f2")
	putCorpus(t, s, ix, "globex", "kb3", "f3")
	// The same knowledge base id under another company (ids are unique, but the company
	// filter must hold even if one leaked).
	putCorpus(t, s, ix, "globex", "kb1", "f4")
	s.refresh(t, ix)

	for _, st := range vectors.Strategies {
		q := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 100, Strategy: st,
			Vector: unit(1, 1, 1, 1), Text: "the cat dogs revenue weather"}
		hits := s.search(t, ix, q)
		if len(hits) != 4 {
			t.Errorf("%s: %d hits %v, want kb1's 4 chunks", st, len(hits), ids(hits))
		}
		for _, h := range hits {
			if h.KBID != "kb1" || h.FileID != "f1" {
				t.Errorf("%s: hit %s leaked from another tenant", st, ids([]vectors.Hit{h}))
			}
		}

		// Two knowledge bases of one company in one request.
		q.KBIDs = []string{"kb1", "kb2"}
		hits = s.search(t, ix, q)
		files := map[string]int{}
		for _, h := range hits {
			files[h.FileID]++
		}
		if !cmp.Equal(files, map[string]int{"f1": 4, "f2": 4}) {
			t.Errorf("%s over kb1+kb2: files %v", st, files)
		}
	}

	// The nearest chunks belong to others: k-NN still returns k of the tenant's own
	// (efficient filtering, not a post-filter over everyone's top k).
	q := vectors.Query{KBIDs: []string{"kb2"}, Company: "acme", TopK: 2, Vector: unit(1, 0, 0, 0)}
	if hits := s.search(t, ix, q); len(hits) != 2 || hits[0].FileID != "f2" || hits[0].ChunkIndex != 0 {
		t.Errorf("kb2 top 2: %v", ids(hits))
	}
}

func TestSearchFilters(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	a := fileChunks("acme", "kb1", "fa", 3, 4)
	b := fileChunks("acme", "kb1", "fb", 3, 4)
	for i := range b {
		b[i].Tags = []string{"legal", "2024"}
	}
	s.put(t, ix, append(a, b...))
	s.refresh(t, ix)
	for _, st := range vectors.Strategies {
		base := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 10, Strategy: st, Vector: unit(1, 1, 0, 0), Text: "part"}
		for _, tc := range []struct {
			name         string
			files, tags  []string
			wantA, wantB int
		}{
			{"none", nil, nil, 3, 3},
			{"file", []string{"fa"}, nil, 3, 0},
			{"files", []string{"fa", "fb"}, nil, 3, 3},
			{"tag", nil, []string{"2024"}, 0, 3},
			{"any tag", nil, []string{"t", "nope"}, 3, 0},
			{"file and tag", []string{"fa"}, []string{"legal"}, 0, 0},
		} {
			q := base
			q.FileIDs, q.Tags = tc.files, tc.tags
			got := map[string]int{}
			for _, h := range s.search(t, ix, q) {
				got[h.FileID]++
			}
			if got["fa"] != tc.wantA || got["fb"] != tc.wantB {
				t.Errorf("%s, filter %s: %v, want fa %d fb %d", st, tc.name, got, tc.wantA, tc.wantB)
			}
		}
	}
}

func TestSearchOneRequest(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	putCorpus(t, s, ix, "acme", "kb1", "f1")
	s.refresh(t, ix)
	s.count.take()

	// A fresh domain has no pipelines: the first hybrid search puts them and asks again.
	q := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 3, Strategy: vectors.Hybrid, Vector: unit(1, 0, 0, 0), Text: "cat"}
	if hits := s.search(t, ix, q); len(hits) == 0 || hits[0].ChunkIndex != 0 {
		t.Fatalf("first hybrid search: %v", ids(hits))
	}
	want := []string{"POST /" + ix + "/_search", "PUT /_search/pipeline/" + s.store.RRFPipeline(), "POST /" + ix + "/_search"}
	if got := s.count.take(); !cmp.Equal(got, want) {
		t.Errorf("first hybrid search sent %v, want %v", got, want)
	}

	for _, st := range vectors.Strategies {
		q.Strategy = st
		s.search(t, ix, q)
		if got := s.count.take(); !cmp.Equal(got, []string{"POST /" + ix + "/_search"}) {
			t.Errorf("%s search sent %v, want one request", st, got)
		}
	}
}

func TestSearchMissingIndexFindsNothing(t *testing.T) {
	s := newStand(t)
	for _, st := range vectors.Strategies {
		q := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 3, Strategy: st, Vector: unit(1, 0, 0, 0), Text: "cat"}
		if hits := s.search(t, "test-kb-never-4", q); len(hits) != 0 {
			t.Errorf("%s: %v", st, ids(hits))
		}
	}
}

func TestSearchRejectsInvalidQueries(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	ok := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 3, Vector: unit(1, 0, 0, 0), Text: "cat"}
	for _, tc := range []struct {
		name  string
		edit  func(*vectors.Query)
		field string
	}{
		{"top_k 0", func(q *vectors.Query) { q.TopK = 0 }, "top_k"},
		{"top_k too big", func(q *vectors.Query) { q.TopK = vectors.MaxTopK + 1 }, "top_k"},
		{"threshold", func(q *vectors.Query) { q.MinScore = ptr(1.5) }, "score_threshold"},
		{"strategy", func(q *vectors.Query) { q.Strategy = "sparse" }, "strategy"},
		{"no kb", func(q *vectors.Query) { q.KBIDs = nil }, "knowledge_base_id"},
		{"empty kb", func(q *vectors.Query) { q.KBIDs = []string{""} }, "knowledge_base_id"},
		{"no company", func(q *vectors.Query) { q.Company = "" }, "company"},
		{"dense without vector", func(q *vectors.Query) { q.Vector = nil }, "vector"},
		{"bm25 without text", func(q *vectors.Query) { q.Strategy, q.Text = vectors.BM25, " " }, "query"},
		{"hybrid without text", func(q *vectors.Query) { q.Strategy, q.Text = vectors.Hybrid, "" }, "query"},
	} {
		q := ok
		tc.edit(&q)
		s.count.take()
		_, err := s.store.Search(ctx(t), ix, q)
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) == 0 || de.Fields[0].Field != tc.field {
			t.Errorf("%s: error %v, want invalid %s", tc.name, err, tc.field)
		}
		if got := s.count.take(); len(got) != 0 {
			t.Errorf("%s: sent %v", tc.name, got)
		}
	}
}

// TestSearchExcludesFiles: archived or deleting files are out of every strategy's answer.
func TestSearchExcludesFiles(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	putCorpus(t, s, ix, "acme", "kb1", "f1")
	putCorpus(t, s, ix, "acme", "kb1", "f2")
	s.refresh(t, ix)
	if err := s.store.EnsurePipelines(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for _, strat := range vectors.Strategies {
		q := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 8, Strategy: strat,
			Vector: unit(1, 0, 0, 0), Text: "cat mat", ExcludeFileIDs: []string{"f1"}}
		hits := s.search(t, ix, q)
		if len(hits) == 0 {
			t.Errorf("%s: no hits", strat)
		}
		for _, h := range hits {
			if h.FileID != "f2" {
				t.Errorf("%s: hit of excluded file %s", strat, h.FileID)
			}
		}
	}
}

// TestSearchEnglishAnalysis: BM25 reads the chunk text through the english sub-field too, so a
// query finds other forms of its words ("chasing cats" finds "dogs chase cars", "the cat sat");
// a legacy index, made before the sub-field, still answers BM25 on the standard field alone
// (exact forms) and hybrid alike, with no error.
func TestSearchEnglishAnalysis(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	putCorpus(t, s, ix, "acme", "kb1", "f1")
	s.refresh(t, ix)
	q := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 4, Strategy: vectors.BM25, Text: "chasing cats"}
	if got := ids(s.search(t, ix, q)); !cmp.Equal(got, []string{"kb1/f1#1", "kb1/f1#0"}) && !cmp.Equal(got, []string{"kb1/f1#0", "kb1/f1#1"}) {
		t.Errorf("bm25 %q on today's index = %v, want chunks 1 and 0 (stems)", q.Text, got)
	}

	// The mapping of the index before the english sub-field.
	legacy := "test-kb-m-4"
	old := `{"settings":{"index":{"knn":true,"number_of_shards":1,"number_of_replicas":0}},"mappings":{"dynamic":"strict","properties":{
		"kb_id":{"type":"keyword"},"company":{"type":"keyword"},"file_id":{"type":"keyword"},"file_name":{"type":"keyword"},
		"chunk_index":{"type":"integer"},"text":{"type":"text","analyzer":"standard"},"tags":{"type":"keyword"},"content_hash":{"type":"keyword"},
		"embedding":{"type":"knn_vector","dimension":4,"method":{"name":"hnsw","engine":"faiss","space_type":"cosinesimil"}}}}}`
	if _, err := s.client.Indices.Create(ctx(t), opensearchapi.IndicesCreateReq{Index: legacy, Body: strings.NewReader(old)}); err != nil {
		t.Fatal(err)
	}
	if !s.store.Legacy(legacy) || s.store.Legacy(ix) {
		t.Fatalf("Legacy(%q), Legacy(%q): want true, false", legacy, ix)
	}
	putCorpus(t, s, legacy, "acme", "kb1", "f1")
	s.refresh(t, legacy)
	if got := ids(s.search(t, legacy, q)); len(got) != 0 {
		t.Errorf("bm25 %q on a legacy index = %v, want nothing (no stems there)", q.Text, got)
	}
	q.Text = "dogs chase cars"
	if got := ids(s.search(t, legacy, q)); !cmp.Equal(got, []string{"kb1/f1#1"}) {
		t.Errorf("bm25 %q on a legacy index = %v, want chunk 1", q.Text, got)
	}
	q.Strategy, q.Vector = vectors.Hybrid, unit(0, 1, 0, 0)
	if got := ids(s.search(t, legacy, q)); len(got) == 0 || got[0] != "kb1/f1#1" {
		t.Errorf("hybrid on a legacy index = %v, want chunk 1 first", got)
	}
}
