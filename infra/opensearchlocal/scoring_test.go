package opensearchlocal_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
)

// The expected scores here are computed from the formulas in OpenSearch's documentation
// (k-NN spaces; BM25; hybrid normalisation and combination), in float64, independently of the
// stand-in's float32 code paths.

func l2sq(a, b []float64) (d float64) {
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
	}
	return d
}

func dotp(a, b []float64) (d float64) {
	for i := range a {
		d += a[i] * b[i]
	}
	return d
}

var knnExpected = map[string]func(q, v []float64) float64{
	"l2": func(q, v []float64) float64 { return 1 / (1 + l2sq(q, v)) },
	"l1": func(q, v []float64) float64 {
		var d float64
		for i := range q {
			d += math.Abs(q[i] - v[i])
		}
		return 1 / (1 + d)
	},
	"linf": func(q, v []float64) float64 {
		var d float64
		for i := range q {
			d = math.Max(d, math.Abs(q[i]-v[i]))
		}
		return 1 / (1 + d)
	},
	"cosinesimil": func(q, v []float64) float64 {
		cos := dotp(q, v) / math.Sqrt(dotp(q, q)*dotp(v, v))
		return (1 + cos) / 2
	},
	"innerproduct": func(q, v []float64) float64 {
		if d := dotp(q, v); d > 0 {
			return d + 1
		} else {
			return 1 / (1 - d)
		}
	},
}

func TestKNNSpaceScores(t *testing.T) {
	vectors := [][]float64{{1, 0, 0}, {0.5, 0.5, 0}, {-1, 0.2, 0.3}, {0.1, -0.9, 0.4}, {2, 2, 2}}
	query := []float64{0.6, 0.3, -0.2}
	cases := []struct{ engine, space string }{
		{"faiss", "l2"}, {"faiss", "innerproduct"}, {"faiss", "cosinesimil"},
		{"lucene", "l2"}, {"lucene", "innerproduct"}, {"lucene", "cosinesimil"},
		{"nmslib", "l2"}, {"nmslib", "l1"}, {"nmslib", "linf"}, {"nmslib", "cosinesimil"}, {"nmslib", "innerproduct"},
	}
	s := newStand(t)
	for _, c := range cases {
		t.Run(c.engine+"/"+c.space, func(t *testing.T) {
			name := c.engine + "-" + c.space
			s.createIndex(t, name, fmt.Sprintf(`{"settings":{"index":{"knn":true}},"mappings":{"properties":{"v":{"type":"knn_vector","dimension":3,
				"method":{"name":"hnsw","engine":%q,"space_type":%q}}}}}`, c.engine, c.space))
			var b strings.Builder
			for i, v := range vectors {
				fmt.Fprintf(&b, "{\"index\":{\"_index\":%q,\"_id\":\"%d\"}}\n{\"v\":[%g,%g,%g]}\n", name, i, v[0], v[1], v[2])
			}
			s.bulk(t, b.String(), opensearchapi.BulkParams{Refresh: "true"})
			res := s.search(t, name, fmt.Sprintf(`{"query":{"knn":{"v":{"vector":[%g,%g,%g],"k":%d}}}}`, query[0], query[1], query[2], len(vectors)))

			type hit struct {
				id    string
				score float64
			}
			var want []hit
			for i, v := range vectors {
				want = append(want, hit{fmt.Sprint(i), knnExpected[c.space](query, v)})
			}
			sort.SliceStable(want, func(i, j int) bool { return want[i].score > want[j].score })
			if len(res.Hits.Hits) != len(want) {
				t.Fatalf("%d hits, want %d", len(res.Hits.Hits), len(want))
			}
			for i, h := range res.Hits.Hits {
				if h.ID != want[i].id || math.Abs(float64(h.Score)-want[i].score) > 1e-5*math.Max(1, want[i].score) {
					t.Errorf("rank %d: %s %.7f, want %s %.7f", i, h.ID, h.Score, want[i].id, want[i].score)
				}
			}
		})
	}
	// Engines reject spaces they do not have.
	_, err := s.client.Indices.Create(ctx(t), opensearchapi.IndicesCreateReq{Index: "bad", Body: strings.NewReader(
		`{"mappings":{"properties":{"v":{"type":"knn_vector","dimension":3,"method":{"name":"hnsw","engine":"faiss","space_type":"l1"}}}}}`)})
	_ = osErr(t, err, 400, "mapper_parsing_exception")
}

// bm25 is Lucene's BM25 for one term in one document, from its documented formula.
func bm25(docCount, docFreq, freq, dl int, avgdl float64) float64 {
	idf := math.Log(1 + (float64(docCount)-float64(docFreq)+0.5)/(float64(docFreq)+0.5))
	return idf * float64(freq) / (float64(freq) + 1.2*(1-0.75+0.75*float64(dl)/avgdl))
}

func TestMatchScoresWithBM25(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "docs", `{"mappings":{"properties":{"text":{"type":"text"},"tag":{"type":"keyword"}}}}`)
	docs := []string{
		"The quick brown fox jumps over the lazy dog",
		"Quick! Quick, the fox is QUICK.",
		"A slow brown bear",
		"Nothing to see here",
	}
	var b strings.Builder
	for i, d := range docs {
		fmt.Fprintf(&b, "{\"index\":{\"_index\":\"docs\",\"_id\":\"%d\"}}\n{\"text\":%q,\"tag\":\"t%d\"}\n", i, d, i%2)
	}
	s.bulk(t, b.String(), opensearchapi.BulkParams{Refresh: "true"})

	// Token counts per document after the standard analyzer: 9, 6, 4, 4 (avgdl 23/4).
	lengths := []int{9, 6, 4, 4}
	avgdl := 23.0 / 4
	tf := map[string][]int{"quick": {1, 3, 0, 0}, "brown": {1, 0, 1, 0}}
	df := map[string]int{"quick": 2, "brown": 2}
	want := map[string]float64{}
	for i := range docs {
		var sum float64
		for term, freqs := range tf {
			if freqs[i] > 0 {
				sum += bm25(4, df[term], freqs[i], lengths[i], avgdl)
			}
		}
		if sum > 0 {
			want[fmt.Sprint(i)] = sum
		}
	}
	res := s.search(t, "docs", `{"query":{"match":{"text":"QUICK brown"}}}`)
	if len(res.Hits.Hits) != len(want) {
		t.Fatalf("%d hits %v, want %d", len(res.Hits.Hits), hitIDs(res), len(want))
	}
	prev := math.Inf(1)
	for _, h := range res.Hits.Hits {
		w, ok := want[h.ID]
		if !ok || math.Abs(float64(h.Score)-w) > 1e-6 {
			t.Errorf("doc %s score %.8f, want %.8f", h.ID, h.Score, w)
		}
		if float64(h.Score) > prev {
			t.Errorf("hits not sorted by score")
		}
		prev = float64(h.Score)
	}
	// operator and: only documents with both terms.
	if ids := hitIDs(s.search(t, "docs", `{"query":{"match":{"text":{"query":"quick brown","operator":"and"}}}}`)); len(ids) != 1 || ids[0] != "0" {
		t.Errorf("operator and: %v, want [0]", ids)
	}
	// A term query on a keyword field is BM25 too: one term per document, no length norms.
	res = s.search(t, "docs", `{"query":{"term":{"tag":"t1"}}}`)
	kw := bm25(4, 2, 1, 1, 1)
	for _, h := range res.Hits.Hits {
		if math.Abs(float64(h.Score)-kw) > 1e-6 {
			t.Errorf("keyword term score %.8f, want %.8f", h.Score, kw)
		}
	}
	// Filters do not score; match_all scores 1.
	for _, q := range []struct {
		body  string
		score float32
	}{{`{"query":{"bool":{"filter":{"term":{"tag":"t1"}}}}}`, 0}, {`{"query":{"match_all":{}}}`, 1}} {
		for _, h := range s.search(t, "docs", q.body).Hits.Hits {
			if h.Score != q.score {
				t.Errorf("%s: score %v, want %v", q.body, h.Score, q.score)
			}
		}
	}
}

// Lucene stores a document's length in one byte: lengths 97 and 103 share a norm (both decode
// to 96), 104 does not. Equal term frequencies then score equally only for the first two.
func TestBM25LengthNormsAreOneByte(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "norms", `{"mappings":{"properties":{"text":{"type":"text"}}}}`)
	var b strings.Builder
	for _, n := range []int{97, 103, 104} {
		words := append([]string{"needle"}, strings.Fields(strings.Repeat("hay ", n-1))...)
		fmt.Fprintf(&b, "{\"index\":{\"_index\":\"norms\",\"_id\":\"%d\"}}\n{\"text\":%q}\n", n, strings.Join(words, " "))
	}
	s.bulk(t, b.String(), opensearchapi.BulkParams{Refresh: "true"})
	scores := map[string]float32{}
	for _, h := range s.search(t, "norms", `{"query":{"match":{"text":"needle"}}}`).Hits.Hits {
		scores[h.ID] = h.Score
	}
	if scores["97"] != scores["103"] || scores["103"] == scores["104"] {
		t.Errorf("scores by length = %v: want 97 and 103 equal, 104 lower", scores)
	}
}

func TestHybridSearchPipelines(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "h", `{"settings":{"index":{"knn":true}},"mappings":{"properties":{"text":{"type":"text"},
		"v":{"type":"knn_vector","dimension":2,"method":{"name":"hnsw","engine":"faiss","space_type":"l2"}}}}}`)
	s.bulk(t, `{"index":{"_index":"h","_id":"a"}}
{"text":"refund policy for orders","v":[1,0]}
{"index":{"_index":"h","_id":"b"}}
{"text":"refund refund refund","v":[0,1]}
{"index":{"_index":"h","_id":"c"}}
{"text":"shipping times","v":[0.9,0.1]}
{"index":{"_index":"h","_id":"d"}}
{"text":"unrelated","v":[-1,-1]}
`, opensearchapi.BulkParams{Refresh: "true"})

	lexical := `{"match":{"text":"refund"}}`
	vector := `{"knn":{"v":{"vector":[1,0],"k":3}}}`
	raw := func(q string) map[string]float64 {
		out := map[string]float64{}
		for _, h := range s.search(t, "h", `{"query":`+q+`}`).Hits.Hits {
			out[h.ID] = float64(h.Score)
		}
		return out
	}
	sub := []map[string]float64{raw(lexical), raw(vector)}
	if len(sub[0]) != 2 || len(sub[1]) != 3 {
		t.Fatalf("sub-query results %v", sub)
	}

	minmax := func(m map[string]float64) map[string]float64 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range m {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		out := map[string]float64{}
		for k, v := range m {
			n := (v - lo) / (hi - lo)
			if n == 0 {
				n = 0.001
			}
			out[k] = n
		}
		return out
	}
	weights := []float64{0.3, 0.7}
	norm := []map[string]float64{minmax(sub[0]), minmax(sub[1])}
	wantMean := map[string]float64{}
	for _, id := range []string{"a", "b", "c", "d"} {
		var sum, ws float64
		for i := range norm {
			if v, ok := norm[i][id]; ok {
				sum += weights[i] * v
				ws += weights[i]
			}
		}
		if ws > 0 {
			wantMean[id] = sum / ws
		}
	}
	rrf := map[string]float64{}
	for i := range sub {
		ids := make([]string, 0, len(sub[i]))
		for id := range sub[i] {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(a, b int) bool { return sub[i][ids[a]] > sub[i][ids[b]] })
		for rank, id := range ids {
			rrf[id] += 1 / float64(40+rank+1)
		}
	}

	for _, p := range []struct {
		name, body string
		want       map[string]float64
	}{
		{"norm", `{"phase_results_processors":[{"normalization-processor":{"normalization":{"technique":"min_max"},"combination":{"technique":"arithmetic_mean","parameters":{"weights":[0.3,0.7]}}}}]}`, wantMean},
		{"rrf", `{"phase_results_processors":[{"score-ranker-processor":{"combination":{"technique":"rrf","rank_constant":40}}}]}`, rrf},
	} {
		t.Run(p.name, func(t *testing.T) {
			if code, body := s.json(t, "PUT", "/_search/pipeline/"+p.name, p.body); code != 200 {
				t.Fatalf("put pipeline = %d %v", code, body)
			}
			res, err := s.client.Search(ctx(t), &opensearchapi.SearchReq{Indices: []string{"h"},
				Body:   strings.NewReader(`{"query":{"hybrid":{"queries":[` + lexical + `,` + vector + `]}}}`),
				Params: opensearchapi.SearchParams{SearchPipeline: p.name}})
			if err != nil {
				t.Fatal(err)
			}
			// The combined list is cut to the longest sub-query list (3).
			if len(res.Hits.Hits) != 3 || res.Hits.Total.Value != 3 {
				t.Fatalf("hits %v total %d, want 3", hitIDs(res), res.Hits.Total.Value)
			}
			type hit struct {
				id string
				s  float64
			}
			var want []hit
			for id, sc := range p.want {
				want = append(want, hit{id, sc})
			}
			sort.Slice(want, func(i, j int) bool { return want[i].s > want[j].s })
			for i, h := range res.Hits.Hits {
				if h.ID != want[i].id || math.Abs(float64(h.Score)-want[i].s) > 1e-6 {
					t.Errorf("rank %d: %s %.7f, want %s %.7f", i, h.ID, h.Score, want[i].id, want[i].s)
				}
			}
		})
	}

	// A sub-query with one hit (or only ties) normalises it to 1 under min_max, as neural-search
	// does, not to (s-lo)/(hi-lo) = NaN.
	single := `{"match":{"text":"shipping"}}`
	if got := raw(single); len(got) != 1 {
		t.Fatalf("%s matched %v, want c alone", single, got)
	}
	res, err := s.client.Search(ctx(t), &opensearchapi.SearchReq{Indices: []string{"h"},
		Body:   strings.NewReader(`{"query":{"hybrid":{"queries":[` + single + `,` + vector + `]}}}`),
		Params: opensearchapi.SearchParams{SearchPipeline: "norm"}})
	if err != nil {
		t.Fatal(err)
	}
	wantC := 0.3*1 + 0.7*norm[1]["c"]
	var gotC float64 = -1
	for _, h := range res.Hits.Hits {
		if h.ID == "c" {
			gotC = float64(h.Score)
		}
	}
	if math.Abs(gotC-wantC) > 1e-6 {
		t.Errorf("c with one lexical hit scored %.7f, want %.7f (the lone hit normalised to 1)", gotC, wantC)
	}

	// Hybrid without a pipeline, and wrapped in bool, are rejected.
	code, body := s.json(t, "POST", "/h/_search", `{"query":{"hybrid":{"queries":[`+lexical+`]}}}`)
	if code != 400 || !strings.HasPrefix(fmt.Sprint(errorOf(t, body)["reason"]), "opensearchlocal:") {
		t.Errorf("hybrid without pipeline = %d %v", code, body)
	}
	code, body = s.json(t, "POST", "/h/_search?search_pipeline=norm", `{"query":{"bool":{"must":{"hybrid":{"queries":[`+lexical+`]}}}}}`)
	if code != 400 || errorOf(t, body)["reason"] != "hybrid query must be a top level query and cannot be wrapped into other queries" {
		t.Errorf("wrapped hybrid = %d %v", code, body)
	}
	code, body = s.json(t, "PUT", "/_search/pipeline/w", `{"phase_results_processors":[{"normalization-processor":{"combination":{"technique":"arithmetic_mean","parameters":{"weights":[0.5,0.6]}}}}]}`)
	if code != 400 || !strings.HasPrefix(fmt.Sprint(errorOf(t, body)["reason"]), "sum of weights for combination must be equal to 1.0") {
		t.Errorf("bad weights = %d %v", code, body)
	}
}
