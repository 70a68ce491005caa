package opensearchlocal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
)

// The corpus of BenchmarkCorpus has the shape of the knowledge feature's index (shared/vectors'
// mapping): the local model's 512-dimension unit vectors in a faiss cosinesimil knn_vector, a
// ~60-word text, keyword ids. Documents and queries go through the official client, as
// shared/vectors sends them (vectors marshalled from []float32 by encoding/json).
const (
	benchDims      = 512
	benchTextWords = 60
	benchKBs       = 20
	benchBatch     = 500
)

const benchIndexBody = `{"settings":{"index":{"knn":true,"number_of_shards":1,"number_of_replicas":0}},
 "mappings":{"dynamic":"strict","properties":{
  "kb_id":{"type":"keyword"},"company":{"type":"keyword"},"file_id":{"type":"keyword"},"file_name":{"type":"keyword"},
  "chunk_index":{"type":"integer"},"text":{"type":"text","analyzer":"standard"},"tags":{"type":"keyword"},
  "content_hash":{"type":"keyword"},
  "embedding":{"type":"knn_vector","dimension":512,"method":{"name":"hnsw","engine":"faiss","space_type":"cosinesimil","parameters":{"m":16,"ef_construction":128}}}}}}`

type benchDoc struct {
	KBID       string    `json:"kb_id"`
	Company    string    `json:"company"`
	FileID     string    `json:"file_id"`
	FileName   string    `json:"file_name"`
	ChunkIndex int       `json:"chunk_index"`
	Text       string    `json:"text"`
	Tags       []string  `json:"tags"`
	Embedding  []float32 `json:"embedding"`
}

// benchCorpus is one stand-in holding n documents, built once per size.
type benchCorpus struct {
	n         int
	srv       *opensearchlocal.Server
	ts        *httptest.Server
	client    *opensearchapi.Client
	heapInuse uint64
	rss       uint64
	indexSecs float64
}

func (c *benchCorpus) close() {
	c.ts.Close()
	c.srv.Close()
	_ = c.client.Close()
}

func unitVector(r *rand.Rand) []float32 {
	v := make([]float32, benchDims)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// benchWords is a vocabulary drawn with a Zipf law, as prose is.
func benchText(r *rand.Rand, z *rand.Zipf) string {
	var b strings.Builder
	for i := 0; i < benchTextWords; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%x", z.Uint64())
	}
	b.WriteByte('.')
	return b.String()
}

func buildCorpus(b *testing.B, n int) *benchCorpus {
	b.Helper()
	srv := opensearchlocal.New(opensearchlocal.Options{})
	ts := httptest.NewServer(srv)
	client, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{Addresses: []string{ts.URL}, DisableRetry: true}})
	if err != nil {
		b.Fatal(err)
	}
	c := &benchCorpus{n: n, srv: srv, ts: ts, client: client}
	ctx := context.Background()
	if _, err := client.Indices.Create(ctx, opensearchapi.IndicesCreateReq{Index: "kb", Body: strings.NewReader(benchIndexBody)}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 2, 20000)
	start := time.Now()
	var body bytes.Buffer
	for i := 0; i < n; i += benchBatch {
		body.Reset()
		for j := i; j < min(i+benchBatch, n); j++ {
			kb := j % benchKBs
			fmt.Fprintf(&body, `{"index":{"_index":"kb","_id":"kb%d-f%d-%d"}}`+"\n", kb, j/100, j)
			d, _ := json.Marshal(benchDoc{KBID: "kb" + strconv.Itoa(kb), Company: "acme", FileID: "f" + strconv.Itoa(j/100),
				FileName: "file" + strconv.Itoa(j/100) + ".txt", ChunkIndex: j % 100, Text: benchText(r, z), Tags: []string{"t" + strconv.Itoa(j%3)},
				Embedding: unitVector(r)})
			body.Write(d)
			body.WriteByte('\n')
		}
		res, err := client.Bulk(ctx, opensearchapi.BulkReq{Body: bytes.NewReader(body.Bytes())})
		if err != nil {
			b.Fatal(err)
		}
		if res.Errors {
			b.Fatalf("bulk item errors: %+v", res.Items[0])
		}
	}
	if _, err := client.Indices.Refresh(ctx, &opensearchapi.IndicesRefreshReq{Index: []string{"kb"}}); err != nil {
		b.Fatal(err)
	}
	c.indexSecs = time.Since(start).Seconds()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.heapInuse = ms.HeapInuse
	c.rss = vmRSS()
	return c
}

// vmRSS is the process's resident set (VmRSS of /proc/self/status), 0 where there is none.
func vmRSS() uint64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// processCPU is the CPU time the process has used (user and system): per query, it is the
// stand-in's cost whatever else the machine runs, where p50-ms also counts waiting for a core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCorpus indexes a corpus of the local model's chunks (N documents: the sizes below,
// or OPENSEARCHLOCAL_BENCH_DOCS) and measures what a dev server holds and how fast it answers
// the knowledge feature's queries. Metrics: heap-MB (HeapInuse after indexing and GC), rss-MB
// (VmRSS, the whole test process), index-s, and per query kind p50-ms and cpu-ms/op (the
// process's CPU time per query, client included). Run one size at a time
// for a clean RSS: go test -run '^$' -bench 'Corpus/docs=50000' -benchtime 100x.
func BenchmarkCorpus(b *testing.B) {
	sizes := []int{5000, 50000}
	if v := os.Getenv("OPENSEARCHLOCAL_BENCH_DOCS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		sizes = []int{n}
	}
	for _, n := range sizes {
		var c *benchCorpus
		queries := func(r *rand.Rand, z *rand.Zipf) map[string]string {
			vec, _ := json.Marshal(unitVector(r))
			filter := fmt.Sprintf(`{"bool":{"filter":[{"terms":{"kb_id":["kb%d","kb%d"]}},{"term":{"company":"acme"}}]}}`, r.IntN(benchKBs), r.IntN(benchKBs))
			src := `"_source":{"includes":["kb_id","file_id","file_name","chunk_index","text","tags"]}`
			text := strings.Join(strings.Fields(benchText(r, z))[:5], " ")
			return map[string]string{
				"knn":  fmt.Sprintf(`{"size":10,%s,"query":{"knn":{"embedding":{"vector":%s,"k":10,"filter":%s}}}}`, src, vec, filter),
				"bm25": fmt.Sprintf(`{"size":10,%s,"query":{"bool":{"must":[{"match":{"text":{"query":%q}}}],"filter":[%s]}}}`, src, text, filter),
			}
		}
		for _, kind := range []string{"knn", "bm25"} {
			b.Run(fmt.Sprintf("docs=%d/%s", n, kind), func(b *testing.B) {
				if c == nil {
					c = buildCorpus(b, n)
				}
				r := rand.New(rand.NewPCG(3, 4))
				z := rand.NewZipf(r, 1.1, 2, 20000)
				lat := make([]time.Duration, 0, b.N)
				ctx := context.Background()
				cpu0 := processCPU()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					body := queries(r, z)[kind]
					t0 := time.Now()
					res, err := c.client.Search(ctx, &opensearchapi.SearchReq{Indices: []string{"kb"}, Body: strings.NewReader(body)})
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Hits.Hits) == 0 {
						b.Fatalf("%s query found nothing", kind)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(c.heapInuse)/(1<<20), "heap-MB")
				b.ReportMetric(float64(c.rss)/(1<<20), "rss-MB")
				b.ReportMetric(c.indexSecs, "index-s")
			})
		}
		if c != nil {
			c.close()
			c = nil
			runtime.GC()
		}
	}
}
