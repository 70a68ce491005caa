package memory_test

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
	"github.com/agentorch/agentorch/shared/memory/memorytest"
	"github.com/agentorch/agentorch/shared/vectors"
)

// The feature's tests run the service over the in-memory store of memorytest, the real
// shared/vectors adapter over the in-process OpenSearch stand-in (so the tenant filters, the
// k-NN ranking, refreshes and deletes are OpenSearch's), and an embedder: a deterministic bag of
// words for the logic, the local default model (use-lite-glove) where meaning matters.

// bowDims is the bag-of-words embedder's dimension.
const bowDims = 256

// bowEmbedder embeds a hashed bag of lower-cased words, unit-normalised: equal texts score 1.
type bowEmbedder struct {
	mu    sync.Mutex
	calls int
}

func (e *bowEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, bowDims)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%bowDims]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

func (e *bowEmbedder) Dimensions() int        { return bowDims }
func (e *bowEmbedder) MaxTokens() int         { return 512 }
func (e *bowEmbedder) Tokens(text string) int { return len(strings.Fields(text)) }
func (e *bowEmbedder) Name() string           { return "test-bow" }

// oneEmbedder gives the same embedder for every configuration.
type oneEmbedder struct{ emb domain.Embedder }

func (o oneEmbedder) Embedder(context.Context, domain.Embedding) (domain.Embedder, error) {
	return o.emb, nil
}

// countingIndex counts the vector index's requests by method.
type countingIndex struct {
	*vectors.Store
	mu    sync.Mutex
	calls map[string]int
	fail  error // returned by Put and Search when set
}

func (c *countingIndex) count(m string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[m]++
	return c.fail
}

func (c *countingIndex) Put(ctx context.Context, index string, chunks []domain.Chunk) error {
	if err := c.count("Put"); err != nil {
		return err
	}
	return c.Store.Put(ctx, index, chunks)
}

func (c *countingIndex) Search(ctx context.Context, index string, q domain.VectorQuery) ([]domain.Hit, error) {
	if err := c.count("Search"); err != nil {
		return nil, err
	}
	return c.Store.Search(ctx, index, q)
}

func (c *countingIndex) Refresh(ctx context.Context, index string) error {
	_ = c.count("Refresh")
	return c.Store.Refresh(ctx, index)
}

func (c *countingIndex) DeleteFile(ctx context.Context, index, company, kbID, fileID string) (int, error) {
	_ = c.count("DeleteFile")
	return c.Store.DeleteFile(ctx, index, company, kbID, fileID)
}

func (c *countingIndex) DeleteKB(ctx context.Context, index, company, kbID string) (int, error) {
	_ = c.count("DeleteKB")
	return c.Store.DeleteKB(ctx, index, company, kbID)
}

// take returns the counts and starts again.
func (c *countingIndex) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

func (c *countingIndex) setFail(err error) { c.mu.Lock(); c.fail = err; c.mu.Unlock() }

// sentJob is one message the fake queue was sent.
type sentJob struct{ body, group string }

// fakeQueue records what is sent.
type fakeQueue struct {
	mu   sync.Mutex
	sent []sentJob
	fail error
}

func (q *fakeQueue) Send(_ context.Context, body, group string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return q.fail
	}
	q.sent = append(q.sent, sentJob{body, group})
	return nil
}

// scriptedModel answers every request with answer (or fails with err) and keeps the requests.
type scriptedModel struct {
	mu     sync.Mutex
	answer string
	err    error
	reqs   []domain.ModelRequest
}

func (m *scriptedModel) Converse(_ context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, req)
	if m.err != nil {
		return nil, m.err
	}
	return &domain.ModelResponse{Parts: []domain.Part{{Type: domain.PartText, Text: m.answer}}, StopReason: domain.StopEndTurn}, nil
}

// models resolves provider names to models; "" is "default".
type models map[string]domain.Model

func (m models) Model(provider string) (domain.Model, error) {
	if provider == "" {
		provider = "default"
	}
	if mm, ok := m[provider]; ok {
		return mm, nil
	}
	return nil, errors.New("unknown model provider " + provider)
}

// harness is the service over the fakes, the OpenSearch stand-in and an embedder.
type harness struct {
	svc   *memory.Service
	store *memorytest.Store
	index *countingIndex
	queue *fakeQueue
	model *scriptedModel
	clock *clock
}

// clock is a clock that moves a millisecond each time it is read.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

// newHarness builds the service with emb (nil: the bag of words).
func newHarness(t testing.TB, emb domain.Embedder) *harness {
	t.Helper()
	url := opensearchlocal.Serve(t, opensearchlocal.Options{RefreshTick: time.Hour}) // only Refresh makes writes visible
	client, err := vectors.NewClient(url, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	vs, err := vectors.New(client, vectors.Options{Prefix: "test-mem"})
	if err != nil {
		t.Fatal(err)
	}
	if emb == nil {
		emb = &bowEmbedder{}
	}
	h := &harness{store: memorytest.NewStore(), index: &countingIndex{Store: vs, calls: map[string]int{}}, queue: &fakeQueue{},
		model: &scriptedModel{}, clock: &clock{now: time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)}}
	h.svc = memory.New(memory.Deps{Store: h.store, Index: h.index, Embedders: oneEmbedder{emb}, Models: models{"default": h.model},
		Queue: h.queue, Now: h.clock.Now})
	return h
}

func ctxOf(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func ptr[T any](v T) *T { return &v }

// keyOf is a principal of company holding scopes.
func keyOf(company string, scopes ...string) domain.Principal {
	return domain.Principal{KeyID: "key-" + company, Owner: "owner", Company: company, Scopes: scopes}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fieldsOf is the fields a 400 names ("" when err is no 400).
func fieldsOf(err error) []string {
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
		return nil
	}
	out := []string{}
	for _, f := range de.Fields {
		out = append(out, f.Field)
	}
	return out
}

// texts are the texts of hits, best first.
func texts(hits []domain.MemoryHit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.Record.Text)
	}
	return out
}
