package knowledge_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library/librarytest"
	"github.com/agentorch/agentorch/shared/vectors"
)

// The knowledge-base tests run the service over the in-memory store, blobs and queue of
// fakes_test.go, the real shared/vectors adapter over the in-process OpenSearch stand-in (so
// ranking, filtering, near-real-time visibility and deletes are OpenSearch's), shared/chunk as
// the splitter and a deterministic bag-of-words embedder.

// bowDims is the test embedder's dimension.
const bowDims = 256

// bowEmbedder is a deterministic embedder: a hashed bag of lower-cased words, unit-normalised,
// so texts sharing words are near. failFn, when set, decides the error of
// each Embed call (nil: embed).
type bowEmbedder struct {
	max int

	mu     sync.Mutex
	calls  int
	texts  []string
	failFn func(call int, texts []string) error
}

var _ knowledge.Embedder = (*bowEmbedder)(nil)

func bowWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func bowVector(text string) []float32 {
	v := make([]float32, bowDims)
	for _, w := range bowWords(text) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%bowDims]++
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

func (e *bowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls++
	call := e.calls
	fail := e.failFn
	e.texts = append(e.texts, texts...)
	e.mu.Unlock()
	if fail != nil {
		if err := fail(call, texts); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = bowVector(t)
	}
	return out, nil
}

func (e *bowEmbedder) Dimensions() int { return bowDims }
func (e *bowEmbedder) MaxTokens() int  { return e.max }

// Tokens counts a token per 8 characters of each word, as a subword tokenizer would split a
// long word.
func (e *bowEmbedder) Tokens(text string) int {
	n := 0
	for _, w := range strings.Fields(text) {
		n += (utf8.RuneCountInString(w) + 7) / 8
	}
	return n
}
func (e *bowEmbedder) Name() string { return "test-bow" }

// Calls is how many Embed calls were made.
func (e *bowEmbedder) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// Embedded is every text embedded so far.
func (e *bowEmbedder) Embedded() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.texts...)
}

// FailWith sets the error of each call (nil clears it).
func (e *bowEmbedder) FailWith(f func(call int, texts []string) error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failFn = f
}

// testEmbedders offers one provider, "test", with the bag-of-words model of bowDims dimensions.
type testEmbedders struct{ emb *bowEmbedder }

func (p testEmbedders) Resolve(cfg domain.Embedding) (domain.Embedding, []domain.FieldError) {
	switch {
	case cfg.Provider != "" && cfg.Provider != "test":
		return cfg, []domain.FieldError{{Field: "embedding_config.provider", Message: fmt.Sprintf("unknown provider %q; offered here: test", cfg.Provider)}}
	case cfg.Model != "" && cfg.Model != "test-bow":
		return cfg, []domain.FieldError{{Field: "embedding_config.model", Message: "model " + cfg.Model + " is not offered"}}
	case cfg.Dimensions != 0 && cfg.Dimensions != bowDims:
		return cfg, []domain.FieldError{{Field: "embedding_config.dimensions", Message: fmt.Sprintf("model test-bow offers %d dimensions, not %d", bowDims, cfg.Dimensions)}}
	}
	return domain.Embedding{Provider: "test", Model: "test-bow", Dimensions: bowDims}, nil
}

func (p testEmbedders) Embedder(_ context.Context, cfg domain.Embedding) (knowledge.Embedder, error) {
	if _, errs := p.Resolve(cfg); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	return p.emb, nil
}

// countingIndex is a knowledge.Index that counts calls, records what Put stored and may run a
// hook before each Put (to interleave a delete with an ingestion).
type countingIndex struct {
	librarytest.Counts
	next knowledge.Index

	mu        sync.Mutex
	put       []domain.Chunk
	beforePut func(chunks []domain.Chunk)
}

func (c *countingIndex) EnsureIndex(ctx context.Context, model string, dims int) (string, error) {
	c.Add("EnsureIndex")
	return c.next.EnsureIndex(ctx, model, dims)
}

func (c *countingIndex) Legacy(index string) bool { return c.next.Legacy(index) }

func (c *countingIndex) Put(ctx context.Context, index string, chunks []domain.Chunk) error {
	c.Add("Put")
	c.mu.Lock()
	hook := c.beforePut
	c.put = append(c.put, chunks...)
	c.mu.Unlock()
	if hook != nil {
		hook(chunks)
	}
	return c.next.Put(ctx, index, chunks)
}

func (c *countingIndex) Refresh(ctx context.Context, index string) error {
	c.Add("Refresh")
	return c.next.Refresh(ctx, index)
}

func (c *countingIndex) DeleteFile(ctx context.Context, index, company, kbID, fileID string) (int, error) {
	c.Add("DeleteFile")
	return c.next.DeleteFile(ctx, index, company, kbID, fileID)
}

func (c *countingIndex) DeleteKB(ctx context.Context, index, company, kbID string) (int, error) {
	c.Add("DeleteKB")
	return c.next.DeleteKB(ctx, index, company, kbID)
}

func (c *countingIndex) Search(ctx context.Context, index string, q domain.VectorQuery) ([]domain.Hit, error) {
	c.Add("Search")
	return c.next.Search(ctx, index, q)
}

func (c *countingIndex) Chunks(ctx context.Context, index, company, kbID, fileID string, from, limit int) ([]domain.Chunk, error) {
	c.Add("Chunks")
	return c.next.Chunks(ctx, index, company, kbID, fileID, from, limit)
}

// BeforePut sets the hook (nil clears it).
func (c *countingIndex) BeforePut(f func(chunks []domain.Chunk)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.beforePut = f
}

// Stored returns the chunks Put was given, in order.
func (c *countingIndex) Stored() []domain.Chunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]domain.Chunk(nil), c.put...)
}

// kbHarness is the service over the fakes, the OpenSearch stand-in and the test embedder.
type kbHarness struct {
	*harness
	Index   *countingIndex
	Vectors *vectors.Store
	Emb     *bowEmbedder
	osURL   string // the OpenSearch stand-in's
}

// newKBService builds the harness; opts change the dependencies and limits before the service is
// built. The embedder reads 8,192 tokens unless an option says otherwise.
func newKBService(t testing.TB, opts ...func(*knowledge.Deps, *knowledge.Limits)) *kbHarness {
	t.Helper()
	osURL := opensearchlocal.Serve(t, opensearchlocal.Options{RefreshTick: 10 * time.Millisecond})
	client, err := vectors.NewClient(osURL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	store, err := vectors.New(client, vectors.Options{Prefix: "test-kb"})
	if err != nil {
		t.Fatal(err)
	}
	k := &kbHarness{Index: &countingIndex{next: store}, Vectors: store, Emb: &bowEmbedder{max: 8192}, osURL: osURL}
	k.harness = newTestService(t, append([]func(*knowledge.Deps, *knowledge.Limits){func(d *knowledge.Deps, _ *knowledge.Limits) {
		d.Index = k.Index
		d.Embedders = testEmbedders{emb: k.Emb}
		d.NewSplitter = testSplitter
	}}, opts...)...)
	return k
}

// testSplitter is shared/chunk's splitter, as the composition root plugs it in.
func testSplitter(c domain.Chunking) (knowledge.Splitter, error) {
	s, err := chunk.New(c)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func kbCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// addFile stores an active file of p's company (record and bytes), as an upload would.
func (k *kbHarness) addFile(t testing.TB, p domain.Principal, name, content string, tags ...string) *domain.File {
	t.Helper()
	now := k.Clock.Now()
	sum := sha256.Sum256([]byte(content))
	f := &domain.File{ID: uuid.NewString(), Company: p.Company, Owner: p.Owner, Name: name, FileType: "document",
		MediaType: "text/plain", Size: int64(len(content)), Status: domain.FileActive, Tags: tags,
		ContentHash: hex.EncodeToString(sum[:]), ObjectKey: "files/" + p.Company + "/" + name + "-" + now.Format("150405.000000"),
		CreatedAt: now, UpdatedAt: now}
	if err := k.Blobs.Put(kbCtx(t), f.ObjectKey, []byte(content), f.MediaType); err != nil {
		t.Fatal(err)
	}
	if err := k.Store.CreateFile(kbCtx(t), f); err != nil {
		t.Fatal(err)
	}
	return f
}

// rewrite replaces a file's content (a new content hash), as a new version would.
func (k *kbHarness) rewrite(t testing.TB, f *domain.File, content string) {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	prev := f.UpdatedAt
	f.ContentHash, f.Size, f.UpdatedAt = hex.EncodeToString(sum[:]), int64(len(content)), k.Clock.Now()
	if err := k.Blobs.Put(kbCtx(t), f.ObjectKey, []byte(content), f.MediaType); err != nil {
		t.Fatal(err)
	}
	if err := k.Store.UpdateFile(kbCtx(t), f, prev); err != nil {
		t.Fatal(err)
	}
}

// setStatus changes a file's status in the store.
func (k *kbHarness) setStatus(t testing.TB, f *domain.File, status string) {
	t.Helper()
	f.Status = status
	if err := k.Store.UpdateFile(kbCtx(t), f, f.UpdatedAt); err != nil {
		t.Fatal(err)
	}
}

// addCollection stores a collection of p's company holding files.
func (k *kbHarness) addCollection(t testing.TB, p domain.Principal, name string, files ...*domain.File) *domain.Collection {
	t.Helper()
	now := k.Clock.Now()
	c := &domain.Collection{ID: uuid.NewString(), Company: p.Company, Owner: p.Owner, Name: name, FileIDs: []string{}, CreatedAt: now, UpdatedAt: now}
	for _, f := range files {
		c.FileIDs = append(c.FileIDs, f.ID)
	}
	if err := k.Store.PutCollection(kbCtx(t), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// setFiles replaces a collection's files.
func (k *kbHarness) setFiles(t testing.TB, c *domain.Collection, files ...*domain.File) {
	t.Helper()
	c.FileIDs = []string{}
	for _, f := range files {
		c.FileIDs = append(c.FileIDs, f.ID)
	}
	if err := k.Store.PutCollection(kbCtx(t), c); err != nil {
		t.Fatal(err)
	}
}

// createKB creates a knowledge base over collections (and files), failing the test on error.
func (k *kbHarness) createKB(t testing.TB, p domain.Principal, name string, body map[string]any) *knowledge.KB {
	t.Helper()
	b := map[string]any{"name": name, "processing_engine": "opensearch"}
	for key, v := range body {
		b[key] = v
	}
	kb, err := k.Svc.CreateKB(kbCtx(t), p, decoded[knowledge.KBInput](b))
	if err != nil {
		t.Fatalf("CreateKB(%v): %v", b, err)
	}
	return kb
}

// idList lists the ids of collections or files as a JSON array would.
func idList[T interface {
	*domain.File | *domain.Collection
}](items ...T) []any {
	out := make([]any, len(items))
	for i, it := range items {
		switch v := any(it).(type) {
		case *domain.File:
			out[i] = v.ID
		case *domain.Collection:
			out[i] = v.ID
		}
	}
	return out
}

// drain runs every queued job (with redeliveries and the dead-letter queue) and returns the
// errors ProcessJob returned.
func (k *kbHarness) drain(t testing.TB) []error {
	t.Helper()
	return k.Queue.Drain(t, k.Svc)
}

// step runs the queued jobs one delivery each, without draining what they queue, and returns
// how many ran.
func (k *kbHarness) step(t testing.TB) int {
	t.Helper()
	msgs := k.Queue.Take()
	for _, m := range msgs {
		if err := k.Svc.ProcessJob(kbCtx(t), m); err != nil {
			t.Fatalf("ProcessJob(%s): %v", m, err)
		}
	}
	return len(msgs)
}

// get reads a knowledge base's detail view.
func (k *kbHarness) get(t testing.TB, p domain.Principal, id string) *knowledge.KB {
	t.Helper()
	kb, err := k.Svc.GetKB(kbCtx(t), p, id)
	if err != nil {
		t.Fatalf("GetKB(%s): %v", id, err)
	}
	return kb
}

// record reads a knowledge base's stored record.
func (k *kbHarness) record(t testing.TB, id string) *domain.KnowledgeBase {
	t.Helper()
	kb, err := k.Store.GetKB(kbCtx(t), id)
	if err != nil {
		t.Fatalf("Store.GetKB(%s): %v", id, err)
	}
	return kb
}

// search runs a search and returns its hits.
func (k *kbHarness) search(t testing.TB, p domain.Principal, id string, body map[string]any) []domain.Hit {
	t.Helper()
	res, err := k.Svc.Search(kbCtx(t), p, id, decoded[knowledge.SearchInput](body))
	if err != nil {
		t.Fatalf("Search(%v): %v", body, err)
	}
	return res
}

// indexed returns what the index holds of a knowledge base (of one file if fileID is set),
// straight from OpenSearch (refreshed first): the chunk indexes by file id, sorted.
func (k *kbHarness) indexed(t testing.TB, company, kbID, fileID string) map[string][]int {
	t.Helper()
	index := k.Vectors.IndexName("test-bow", bowDims)
	if err := k.Vectors.Refresh(kbCtx(t), index); err != nil {
		t.Fatal(err)
	}
	q := domain.VectorQuery{KBIDs: []string{kbID}, Company: company, Vector: bowVector("x"), TopK: 10000}
	if fileID != "" {
		q.FileIDs = []string{fileID}
	}
	hits, err := k.Vectors.Search(kbCtx(t), index, q)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, h := range hits {
		out[h.FileID] = append(out[h.FileID], h.ChunkIndex)
	}
	for _, v := range out {
		sort.Ints(v)
	}
	return out
}

// kbWantErr checks an error's kind and, when fields are given, that its field errors name
// exactly those fields in order.
func kbWantErr(t testing.TB, err error, kind domain.Kind, fields ...string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T), want a domain error of kind %d", err, err, kind)
	}
	if de.Kind != kind {
		t.Fatalf("error kind %d (%v), want %d", de.Kind, err, kind)
	}
	if len(fields) == 0 {
		return
	}
	var got []string
	for _, f := range de.Fields {
		got = append(got, f.Field)
	}
	if strings.Join(got, ",") != strings.Join(fields, ",") {
		t.Errorf("field errors %v, want fields %v: %v", de.Fields, fields, err)
	}
}

// sourceIDs lists the live datasources of a knowledge base that keep accepts (nil: all), sorted.
func sourceIDs(kb *knowledge.KB, keep func(*domain.Datasource) bool) []string {
	out := []string{}
	for _, id := range kb.LiveSources() {
		if keep == nil || keep(kb.Sources[id]) {
			out = append(out, id)
		}
	}
	return out
}

// failedSource accepts a failed datasource.
func failedSource(d *domain.Datasource) bool { return d.Status == domain.IngestFailed }

// sourceErrors maps the failed datasources of a knowledge base to their errors.
func sourceErrors(kb *knowledge.KB) map[string]string {
	out := map[string]string{}
	for _, id := range sourceIDs(kb, failedSource) {
		out[id] = kb.Sources[id].Error
	}
	return out
}

// snapshot is a live datasource of a knowledge base (the zero value if it has none by that id).
func snapshot(kb *knowledge.KB, id string) domain.Datasource {
	if d := kb.Sources[id]; d != nil && d.Status != domain.IngestRemoved {
		return *d
	}
	return domain.Datasource{}
}

// snapshots are the live datasources of a knowledge base, by id.
func snapshots(kb *knowledge.KB) map[string]domain.Datasource {
	out := map[string]domain.Datasource{}
	for _, id := range kb.LiveSources() {
		out[id] = *kb.Sources[id]
	}
	return out
}

func sortedStrs(ids ...string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}

// errBusy is a retryable error as an embedding provider's throttling would be.
var errBusy = &domain.Error{Kind: domain.KindOverloaded, Message: "The embedding service is busy; retry shortly"}
