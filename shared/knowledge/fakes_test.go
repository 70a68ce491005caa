package knowledge_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// The in-memory fakes of the feature's storage ports. They keep records as JSON (so callers can
// never share memory with what is stored, as with DynamoDB), honour the same conditions as the
// DynamoDB adapter (optimistic concurrency on collections, run ids on knowledge bases) and count
// every call by method name. shared/dynamo's own tests check the adapter against DynamoDB Local.

// counts counts calls by name.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

// Get returns the calls of name so far.
func (c *counts) Get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// Total returns every call so far.
func (c *counts) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := 0
	for _, v := range c.n {
		t += v
	}
	return t
}

// Reset forgets the counts.
func (c *counts) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = nil
}

// memStore is an in-memory knowledge.Store.
type memStore struct {
	counts
	mu          sync.Mutex
	read        int // records read by lists and batch reads (under mu), as DynamoDB charges them
	files       map[string][]byte
	collections map[string][]byte
	kbs         map[string][]byte
}

var _ knowledge.Store = (*memStore)(nil)

// Read returns how many records lists and batch reads have read, and starts again from none.
func (m *memStore) Read() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.read
	m.read = 0
	return n
}

func newMemStore() *memStore {
	return &memStore{files: map[string][]byte{}, collections: map[string][]byte{}, kbs: map[string][]byte{}}
}

func enc(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func dec[T any](b []byte) *T {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
	return v
}

func missing(what, id string) error {
	return &domain.Error{Kind: domain.KindNotFound, Message: what + " " + id + " not found"}
}

// newestFirst decodes every record of company, newest first (ties by id, as a stable order).
func newestFirst[T any](m map[string][]byte, company string, created func(*T) (string, time.Time, string)) []*T {
	var out []*T
	for _, b := range m {
		v := dec[T](b)
		if c, _, _ := created(v); c == company {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		_, ti, ii := created(out[i])
		_, tj, ij := created(out[j])
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return ii > ij
	})
	return out
}

func (m *memStore) CreateFile(_ context.Context, f *domain.File) error {
	m.add("CreateFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[f.ID]; ok {
		return &domain.Error{Kind: domain.KindConflict, Message: "file " + f.ID + " exists"}
	}
	m.files[f.ID] = enc(f)
	return nil
}

func (m *memStore) UpdateFile(_ context.Context, f *domain.File, prev time.Time) error {
	m.add("UpdateFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[f.ID]
	if !ok {
		return missing("File", f.ID)
	}
	if !dec[domain.File](b).UpdatedAt.Equal(prev) {
		return &domain.Error{Kind: domain.KindConflict, Message: "The file was changed meanwhile; read it again"}
	}
	m.files[f.ID] = enc(f)
	return nil
}

func (m *memStore) GetFiles(_ context.Context, ids []string) (map[string]*domain.File, error) {
	m.add("GetFiles")
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]*domain.File{}
	for _, id := range ids {
		if b, ok := m.files[id]; ok {
			out[id] = dec[domain.File](b)
			m.read++
		}
	}
	return out, nil
}

func (m *memStore) GetFile(_ context.Context, id string) (*domain.File, error) {
	m.add("GetFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[id]
	if !ok {
		return nil, missing("File", id)
	}
	return dec[domain.File](b), nil
}

func (m *memStore) ListFiles(_ context.Context, company, after string, limit int) ([]*domain.File, string, error) {
	m.add("ListFiles")
	m.mu.Lock()
	defer m.mu.Unlock()
	out, next, err := pageAfter(newestFirst(m.files, company, fileOrder), fileOrder, after, limit)
	for range out {
		m.read++ // what DynamoDB would charge for
	}
	return out, next, err
}

func fileOrder(f *domain.File) (string, time.Time, string) { return f.Company, f.CreatedAt, f.ID }

// pageAfter cuts a page of a newest-first list as the dynamo adapter does: at most limit records
// after the cursor (the "<created>#<id>" of the last record of the page before) and the next
// cursor, "" at the end.
func pageAfter[T any](all []*T, order func(*T) (string, time.Time, string), after string, limit int) ([]*T, string, error) {
	cursor := func(v *T) string {
		_, t, id := order(v)
		return t.UTC().Format(time.RFC3339Nano) + "#" + id
	}
	start := 0
	if after != "" {
		start = len(all)
		for i, v := range all {
			if cursor(v) == after {
				start = i + 1
				break
			}
		}
	}
	all = all[start:]
	if limit < 1 || len(all) <= limit {
		return all, "", nil
	}
	return all[:limit], cursor(all[limit-1]), nil
}

func (m *memStore) DeleteFile(_ context.Context, id string) error {
	m.add("DeleteFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, id)
	return nil
}

func (m *memStore) PutCollection(_ context.Context, c *domain.Collection) error {
	m.add("PutCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	m.collections[c.ID] = enc(c)
	return nil
}

func (m *memStore) GetCollection(_ context.Context, id string) (*domain.Collection, error) {
	m.add("GetCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.collections[id]
	if !ok {
		return nil, missing("Collection", id)
	}
	return dec[domain.Collection](b), nil
}

func (m *memStore) ListCollections(_ context.Context, company, after string, limit int) ([]*domain.Collection, string, error) {
	m.add("ListCollections")
	m.mu.Lock()
	defer m.mu.Unlock()
	order := func(c *domain.Collection) (string, time.Time, string) { return c.Company, c.CreatedAt, c.ID }
	out, next, err := pageAfter(newestFirst(m.collections, company, order), order, after, limit)
	for range out {
		m.read++
	}
	return out, next, err
}

func (m *memStore) DeleteCollection(_ context.Context, id string) error {
	m.add("DeleteCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.collections, id)
	return nil
}

func (m *memStore) UpdateCollection(_ context.Context, c *domain.Collection, prev time.Time) error {
	m.add("UpdateCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.collections[c.ID]
	if !ok {
		return missing("Collection", c.ID)
	}
	if !dec[domain.Collection](b).UpdatedAt.Equal(prev) {
		return &domain.Error{Kind: domain.KindConflict, Message: "The collection was changed meanwhile; read it again"}
	}
	m.collections[c.ID] = enc(c)
	return nil
}

func (m *memStore) PutKB(_ context.Context, kb *domain.KnowledgeBase) error {
	m.add("PutKB")
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kbs[kb.ID] = enc(kb)
	return nil
}

func (m *memStore) GetKB(_ context.Context, id string) (*domain.KnowledgeBase, error) {
	m.add("GetKB")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.kbs[id]
	if !ok {
		return nil, missing("Knowledge base", id)
	}
	return dec[domain.KnowledgeBase](b), nil
}

func (m *memStore) ListKBs(_ context.Context, company, after string, limit int) ([]*domain.KnowledgeBase, string, error) {
	m.add("ListKBs")
	m.mu.Lock()
	defer m.mu.Unlock()
	order := func(kb *domain.KnowledgeBase) (string, time.Time, string) { return kb.Company, kb.CreatedAt, kb.ID }
	out, next, err := pageAfter(newestFirst(m.kbs, company, order), order, after, limit)
	for range out {
		m.read++
	}
	return out, next, err
}

func (m *memStore) DeleteKB(_ context.Context, id string) error {
	m.add("DeleteKB")
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.kbs, id)
	return nil
}

func (m *memStore) UpdateKB(_ context.Context, kb *domain.KnowledgeBase, runID string) error {
	m.add("UpdateKB")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.kbs[kb.ID]
	if !ok {
		return missing("Knowledge base", kb.ID)
	}
	if dec[domain.KnowledgeBase](b).RunID != runID {
		return &domain.Error{Kind: domain.KindConflict, Message: "The knowledge base's run was superseded"}
	}
	m.kbs[kb.ID] = enc(kb)
	return nil
}

func (m *memStore) UpdateSource(_ context.Context, kbID, runID string, d *domain.Datasource) (*domain.KnowledgeBase, error) {
	m.add("UpdateSource")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.kbs[kbID]
	if !ok {
		return nil, missing("Knowledge base", kbID)
	}
	kb := dec[domain.KnowledgeBase](b)
	if kb.RunID != runID {
		return nil, &domain.Error{Kind: domain.KindConflict, Message: "The knowledge base's run was superseded"}
	}
	if kb.Sources == nil {
		kb.Sources = map[string]*domain.Datasource{}
	}
	cp := *d
	kb.Sources[d.FileID] = &cp
	if d.UpdatedAt != nil {
		kb.UpdatedAt = *d.UpdatedAt
	}
	m.kbs[kbID] = enc(kb)
	return dec[domain.KnowledgeBase](m.kbs[kbID]), nil
}

// memBlobs is an in-memory knowledge.Blobs. A presigned URL is "mem://<key>?size=N&type=T";
// ClientPut plays the client's PUT to it.
type memBlobs struct {
	counts
	mu    sync.Mutex
	objs  map[string][]byte
	types map[string]string
	// GetErr, when set, is returned by Get (a failing S3).
	GetErr error
}

var _ knowledge.Blobs = (*memBlobs)(nil)

func newMemBlobs() *memBlobs { return &memBlobs{objs: map[string][]byte{}, types: map[string]string{}} }

func (b *memBlobs) Put(_ context.Context, key string, data []byte, contentType string) error {
	b.add("Put")
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objs[key] = append([]byte(nil), data...)
	b.types[key] = contentType
	return nil
}

func (b *memBlobs) Get(_ context.Context, key string, limit int64) ([]byte, string, error) {
	b.add("Get")
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.GetErr != nil {
		return nil, "", b.GetErr
	}
	d, ok := b.objs[key]
	if !ok {
		return nil, "", missing("Object", key)
	}
	if int64(len(d)) > limit {
		return nil, "", domain.Errorf(domain.KindTooLarge, "object %s is over %d bytes", key, limit)
	}
	return append([]byte(nil), d...), b.types[key], nil
}

func (b *memBlobs) object(key string) (domain.Object, error) {
	d, ok := b.objs[key]
	if !ok {
		return domain.Object{}, missing("Object", key)
	}
	sum := sha256.Sum256(d)
	return domain.Object{Size: int64(len(d)), ContentType: b.types[key], ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

func (b *memBlobs) Head(_ context.Context, key string) (domain.Object, error) {
	b.add("Head")
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.object(key)
}

func (b *memBlobs) Open(_ context.Context, key string) (io.ReadCloser, domain.Object, error) {
	b.add("Open")
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.GetErr != nil {
		return nil, domain.Object{}, b.GetErr
	}
	o, err := b.object(key)
	if err != nil {
		return nil, o, err
	}
	return io.NopCloser(bytes.NewReader(b.objs[key])), o, nil
}

func (b *memBlobs) Copy(_ context.Context, from, to, etag string) error {
	b.add("Copy")
	b.mu.Lock()
	defer b.mu.Unlock()
	o, err := b.object(from)
	if err != nil {
		return err
	}
	if o.ETag != etag {
		return &domain.Error{Kind: domain.KindConflict, Message: "The object changed meanwhile"}
	}
	b.objs[to], b.types[to] = append([]byte(nil), b.objs[from]...), b.types[from]
	return nil
}

func (b *memBlobs) Delete(_ context.Context, key string) error {
	b.add("Delete")
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objs, key)
	delete(b.types, key)
	return nil
}

func (b *memBlobs) PresignPut(_ context.Context, key string, size int64, contentType string, ttl time.Duration) (string, error) {
	b.add("PresignPut")
	if ttl <= 0 {
		return "", fmt.Errorf("presign %s: ttl %s", key, ttl)
	}
	return fmt.Sprintf("mem://%s?size=%d&type=%s", key, size, contentType), nil
}

// ClientPut stores data under the key of a presigned URL with the signed Content-Type, as a
// client's PUT would.
func (b *memBlobs) ClientPut(t testing.TB, url string, data []byte) {
	t.Helper()
	rest, ok := strings.CutPrefix(url, "mem://")
	if !ok {
		t.Fatalf("not a presigned URL of memBlobs: %q", url)
	}
	_, query, _ := strings.Cut(rest, "?")
	_, ctype, _ := strings.Cut(query, "&type=")
	b.ClientPutAs(t, url, data, ctype)
}

// ClientPutAs stores data under the key of a presigned URL with the Content-Type ctype (a
// client ignoring the signed headers, as a lax S3 stand-in lets it).
func (b *memBlobs) ClientPutAs(t testing.TB, url string, data []byte, ctype string) {
	t.Helper()
	rest, ok := strings.CutPrefix(url, "mem://")
	if !ok {
		t.Fatalf("not a presigned URL of memBlobs: %q", url)
	}
	key, _, _ := strings.Cut(rest, "?")
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objs[key] = append([]byte(nil), data...)
	b.types[key] = ctype
}

// Keys lists the stored keys, sorted.
func (b *memBlobs) Keys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := make([]string, 0, len(b.objs))
	for k := range b.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// memQueue is an in-memory knowledge.Queue that a test drains into the service, playing SQS and
// its event source mapping: a retryable error redelivers the message (up to MaxReceives
// deliveries), then it goes to the dead-letter handler.
type memQueue struct {
	counts
	mu   sync.Mutex
	msgs []string
	// SendErr, when set, is returned by Send.
	SendErr error
}

var _ knowledge.Queue = (*memQueue)(nil)

func (q *memQueue) Send(_ context.Context, body, group string) error {
	q.add("Send")
	if q.SendErr != nil {
		return q.SendErr
	}
	if group != "" {
		return fmt.Errorf("memQueue: the ingestion queue is a standard queue, got group %q", group)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.msgs = append(q.msgs, body)
	return nil
}

// Len is how many messages wait.
func (q *memQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// Take removes and returns the waiting messages.
func (q *memQueue) Take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	m := q.msgs
	q.msgs = nil
	return m
}

// MaxReceives is the redrive policy's maxReceiveCount of the template's ingestion queue.
const MaxReceives = 3

// Drain delivers messages to svc until none is left: each message is processed up to
// MaxReceives times while ProcessJob fails, then handed to HandleDeadLetter. It returns the
// errors ProcessJob returned, in order.
func (q *memQueue) Drain(t testing.TB, svc *knowledge.Service) []error {
	t.Helper()
	var errs []error
	for round := 0; q.Len() > 0; round++ {
		if round > 10000 {
			t.Fatal("memQueue.Drain: jobs keep coming")
		}
		for _, body := range q.Take() {
			var err error
			for i := 0; i < MaxReceives; i++ {
				if err = svc.ProcessJob(context.Background(), body); err == nil {
					break
				}
				errs = append(errs, err)
			}
			if err != nil {
				if dl := svc.HandleDeadLetter(context.Background(), body); dl != nil {
					t.Fatalf("HandleDeadLetter(%s): %v", body, dl)
				}
			}
		}
	}
	return errs
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond) // every reading is later: records have distinct times
	return c.now
}

// Advance moves the clock on.
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// harness is a service over the fakes.
type harness struct {
	Svc   *knowledge.Service
	Store *memStore
	Blobs *memBlobs
	Queue *memQueue
	Clock *clock
	Deps  knowledge.Deps
}

// newTestService builds the service over fresh fakes; opt (if any) changes the dependencies and
// limits before it is built (e.g. to plug in an index and embedders).
func newTestService(t testing.TB, opt ...func(*knowledge.Deps, *knowledge.Limits)) *harness {
	t.Helper()
	h := &harness{Store: newMemStore(), Blobs: newMemBlobs(), Queue: &memQueue{},
		Clock: &clock{now: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}}
	h.Deps = knowledge.Deps{Store: h.Store, Blobs: h.Blobs, Queue: h.Queue, Now: h.Clock.Now}
	var l knowledge.Limits
	for _, o := range opt {
		o(&h.Deps, &l)
	}
	h.Svc = knowledge.New(h.Deps, l)
	return h
}

// Principals of two companies.
var (
	alice = domain.Principal{KeyID: "k-alice", Owner: "alice", Company: "acme"}
	bob   = domain.Principal{KeyID: "k-bob", Owner: "bob", Company: "acme"}
	eve   = domain.Principal{KeyID: "k-eve", Owner: "eve", Company: "globex"}
)
