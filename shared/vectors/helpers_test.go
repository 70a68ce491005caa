package vectors_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
	"github.com/agentorch/agentorch/shared/vectors"
)

// stand is the OpenSearch stand-in behind a real HTTP server, a client of the official library
// built by vectors.NewClient over a counting transport, and a store on that client.
type stand struct {
	url    string
	client *opensearchapi.Client
	store  *vectors.Store
	count  *counter
}

func newStand(t *testing.T) *stand {
	t.Helper()
	srv := opensearchlocal.New(opensearchlocal.Options{RefreshTick: 10 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	cnt := &counter{next: http.DefaultTransport}
	c, err := vectors.NewClient(ts.URL, nil, cnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	st := &stand{url: ts.URL, client: c, count: cnt}
	st.store = st.newStore(t)
	return st
}

// newStore is another store on the same client, as another process would have: it knows no
// index and no pipeline yet.
func (s *stand) newStore(t *testing.T) *vectors.Store {
	t.Helper()
	st, err := vectors.New(s.client, vectors.Options{Prefix: "test-kb"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// counter is an http.RoundTripper that records the requests the client sends, as "METHOD path".
type counter struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []string
	// before, if set, runs before each request is sent (to interleave another writer).
	before func(r *http.Request)
	// after, if set, may replace each response (to inject a fault of the service).
	after func(r *http.Request, res *http.Response) *http.Response
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r.Method+" "+r.URL.Path)
	before, after := c.before, c.after
	c.mu.Unlock()
	if before != nil {
		before(r)
	}
	res, err := c.next.RoundTrip(r)
	if err == nil && after != nil {
		res = after(r, res)
	}
	return res, err
}

// hook sets before.
func (c *counter) hook(f func(r *http.Request)) {
	c.mu.Lock()
	c.before = f
	c.mu.Unlock()
}

// rewrite sets after.
func (c *counter) rewrite(f func(r *http.Request, res *http.Response) *http.Response) {
	c.mu.Lock()
	c.after = f
	c.mu.Unlock()
}

// take returns the requests since the last take and forgets them.
func (c *counter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.reqs
	c.reqs = nil
	return out
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// unit scales v to length 1, as the embedding models' outputs are.
func unit(v ...float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	n := float32(math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

// cosine of two vectors, in float64.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// fileChunks are n chunks of one file with distinct texts and vectors of dimension dims.
func fileChunks(company, kbID, fileID string, n, dims int) []vectors.Chunk {
	out := make([]vectors.Chunk, n)
	for i := range out {
		v := make([]float32, dims)
		v[i%dims] = 1
		v[(i+1)%dims] = 0.5
		out[i] = vectors.Chunk{KBID: kbID, Company: company, FileID: fileID, FileName: fileID + ".txt", ChunkIndex: i,
			Text: fmt.Sprintf("%s part %d of %s", fileID, i, kbID), Tags: []string{"t"}, ContentHash: "h1", Vector: unit(v...)}
	}
	return out
}

func (s *stand) ensure(t *testing.T, model string, dims int) string {
	t.Helper()
	ix, err := s.store.EnsureIndex(ctx(t), model, dims)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func (s *stand) put(t *testing.T, index string, chunks []vectors.Chunk) {
	t.Helper()
	if err := s.store.Put(ctx(t), index, chunks); err != nil {
		t.Fatal(err)
	}
}

func (s *stand) refresh(t *testing.T, index string) {
	t.Helper()
	if err := s.store.Refresh(ctx(t), index); err != nil {
		t.Fatal(err)
	}
}

func (s *stand) search(t *testing.T, index string, q vectors.Query) []vectors.Hit {
	t.Helper()
	hits, err := s.store.Search(ctx(t), index, q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return hits
}

func (s *stand) countKB(t *testing.T, index, kbID string) int {
	t.Helper()
	n, err := s.store.Count(ctx(t), index, kbID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func ids(hits []vectors.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s/%s#%d", h.KBID, h.FileID, h.ChunkIndex)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
