// Package librarytest holds in-memory fakes of the library's ports for the tests of the library
// and of the features built on it. They keep records as JSON (so callers can never share memory
// with what is stored, as with DynamoDB), honour the same conditions as the DynamoDB adapter
// (optimistic concurrency on collections) and count every call by method name. shared/dynamo's
// own tests check the adapter against DynamoDB Local.
package librarytest

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
	"github.com/agentorch/agentorch/shared/library"
)

// Counts counts calls by name.
type Counts struct {
	mu sync.Mutex
	n  map[string]int
}

// Add counts a call of name.
func (c *Counts) Add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

// Get returns the calls of name so far.
func (c *Counts) Get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// Total returns every call so far.
func (c *Counts) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := 0
	for _, v := range c.n {
		t += v
	}
	return t
}

// Reset forgets the counts.
func (c *Counts) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = nil
}

// MemStore is an in-memory library.Store.
type MemStore struct {
	Counts
	mu          sync.Mutex
	read        int // records read by lists and batch reads (under mu), as DynamoDB charges them
	files       map[string][]byte
	collections map[string][]byte
}

var _ library.Store = (*MemStore)(nil)

// Read returns how many records lists and batch reads have read, and starts again from none.
func (m *MemStore) Read() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.read
	m.read = 0
	return n
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{files: map[string][]byte{}, collections: map[string][]byte{}}
}

// Charge counts n records read by a list or batch read of a store built on this one.
func (m *MemStore) Charge(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read += n
}

// Enc is the JSON a record is kept as.
func Enc(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Dec decodes a kept record.
func Dec[T any](b []byte) *T {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
	return v
}

// Missing is the not-found error of a record.
func Missing(what, id string) error {
	return &domain.Error{Kind: domain.KindNotFound, Message: what + " " + id + " not found"}
}

// NewestFirst decodes every record of company, newest first (ties by id, as a stable order).
func NewestFirst[T any](m map[string][]byte, company string, created func(*T) (string, time.Time, string)) []*T {
	var out []*T
	for _, b := range m {
		v := Dec[T](b)
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

func (m *MemStore) CreateFile(_ context.Context, f *domain.File) error {
	m.Add("CreateFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[f.ID]; ok {
		return &domain.Error{Kind: domain.KindConflict, Message: "file " + f.ID + " exists"}
	}
	m.files[f.ID] = Enc(f)
	return nil
}

func (m *MemStore) UpdateFile(_ context.Context, f *domain.File, prev time.Time) error {
	m.Add("UpdateFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[f.ID]
	if !ok {
		return Missing("File", f.ID)
	}
	if !Dec[domain.File](b).UpdatedAt.Equal(prev) {
		return &domain.Error{Kind: domain.KindConflict, Message: "The file was changed meanwhile; read it again"}
	}
	m.files[f.ID] = Enc(f)
	return nil
}

func (m *MemStore) GetFiles(_ context.Context, ids []string) (map[string]*domain.File, error) {
	m.Add("GetFiles")
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]*domain.File{}
	for _, id := range ids {
		if b, ok := m.files[id]; ok {
			out[id] = Dec[domain.File](b)
			m.read++
		}
	}
	return out, nil
}

func (m *MemStore) GetFile(_ context.Context, id string) (*domain.File, error) {
	m.Add("GetFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[id]
	if !ok {
		return nil, Missing("File", id)
	}
	return Dec[domain.File](b), nil
}

func (m *MemStore) ListFiles(_ context.Context, company, after string, limit int) ([]*domain.File, string, error) {
	m.Add("ListFiles")
	m.mu.Lock()
	defer m.mu.Unlock()
	out, next, err := PageAfter(NewestFirst(m.files, company, fileOrder), fileOrder, after, limit)
	for range out {
		m.read++ // what DynamoDB would charge for
	}
	return out, next, err
}

func fileOrder(f *domain.File) (string, time.Time, string) { return f.Company, f.CreatedAt, f.ID }

// PageAfter cuts a page of a newest-first list as the dynamo adapter does: at most limit records
// after the cursor (the "<created>#<id>" of the last record of the page before) and the next
// cursor, "" at the end.
func PageAfter[T any](all []*T, order func(*T) (string, time.Time, string), after string, limit int) ([]*T, string, error) {
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

func (m *MemStore) DeleteFile(_ context.Context, id string) error {
	m.Add("DeleteFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, id)
	return nil
}

func (m *MemStore) PutCollection(_ context.Context, c *domain.Collection) error {
	m.Add("PutCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	m.collections[c.ID] = Enc(c)
	return nil
}

func (m *MemStore) GetCollection(_ context.Context, id string) (*domain.Collection, error) {
	m.Add("GetCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.collections[id]
	if !ok {
		return nil, Missing("Collection", id)
	}
	return Dec[domain.Collection](b), nil
}

func (m *MemStore) ListCollections(_ context.Context, company, after string, limit int) ([]*domain.Collection, string, error) {
	m.Add("ListCollections")
	m.mu.Lock()
	defer m.mu.Unlock()
	order := func(c *domain.Collection) (string, time.Time, string) { return c.Company, c.CreatedAt, c.ID }
	out, next, err := PageAfter(NewestFirst(m.collections, company, order), order, after, limit)
	for range out {
		m.read++
	}
	return out, next, err
}

func (m *MemStore) DeleteCollection(_ context.Context, id string) error {
	m.Add("DeleteCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.collections, id)
	return nil
}

func (m *MemStore) UpdateCollection(_ context.Context, c *domain.Collection, prev time.Time) error {
	m.Add("UpdateCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.collections[c.ID]
	if !ok {
		return Missing("Collection", c.ID)
	}
	if !Dec[domain.Collection](b).UpdatedAt.Equal(prev) {
		return &domain.Error{Kind: domain.KindConflict, Message: "The collection was changed meanwhile; read it again"}
	}
	m.collections[c.ID] = Enc(c)
	return nil
}

// MemBlobs is an in-memory library.Blobs. A presigned URL is "mem://<key>?size=N&type=T";
// ClientPut plays the client's PUT to it.
type MemBlobs struct {
	Counts
	mu    sync.Mutex
	objs  map[string][]byte
	types map[string]string
	// GetErr, when set, is returned by Get (a failing S3).
	GetErr error
}

var _ library.Blobs = (*MemBlobs)(nil)

// NewMemBlobs returns an empty blob store.
func NewMemBlobs() *MemBlobs { return &MemBlobs{objs: map[string][]byte{}, types: map[string]string{}} }

func (b *MemBlobs) Put(_ context.Context, key string, data []byte, contentType string) error {
	b.Add("Put")
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objs[key] = append([]byte(nil), data...)
	b.types[key] = contentType
	return nil
}

func (b *MemBlobs) Get(_ context.Context, key string, limit int64) ([]byte, string, error) {
	b.Add("Get")
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.GetErr != nil {
		return nil, "", b.GetErr
	}
	d, ok := b.objs[key]
	if !ok {
		return nil, "", Missing("Object", key)
	}
	if int64(len(d)) > limit {
		return nil, "", domain.Errorf(domain.KindTooLarge, "object %s is over %d bytes", key, limit)
	}
	return append([]byte(nil), d...), b.types[key], nil
}

func (b *MemBlobs) object(key string) (domain.Object, error) {
	d, ok := b.objs[key]
	if !ok {
		return domain.Object{}, Missing("Object", key)
	}
	sum := sha256.Sum256(d)
	return domain.Object{Size: int64(len(d)), ContentType: b.types[key], ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

func (b *MemBlobs) Head(_ context.Context, key string) (domain.Object, error) {
	b.Add("Head")
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.object(key)
}

func (b *MemBlobs) Open(_ context.Context, key string) (io.ReadCloser, domain.Object, error) {
	b.Add("Open")
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

func (b *MemBlobs) Copy(_ context.Context, from, to, etag string) error {
	b.Add("Copy")
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

func (b *MemBlobs) Delete(_ context.Context, key string) error {
	b.Add("Delete")
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objs, key)
	delete(b.types, key)
	return nil
}

func (b *MemBlobs) PresignPut(_ context.Context, key string, size int64, contentType string, ttl time.Duration) (string, error) {
	b.Add("PresignPut")
	if ttl <= 0 {
		return "", fmt.Errorf("presign %s: ttl %s", key, ttl)
	}
	return fmt.Sprintf("mem://%s?size=%d&type=%s", key, size, contentType), nil
}

// ClientPut stores data under the key of a presigned URL with the signed Content-Type, as a
// client's PUT would.
func (b *MemBlobs) ClientPut(t testing.TB, url string, data []byte) {
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
func (b *MemBlobs) ClientPutAs(t testing.TB, url string, data []byte, ctype string) {
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
func (b *MemBlobs) Keys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := make([]string, 0, len(b.objs))
	for k := range b.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Clock is a settable time source.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the time, a millisecond later at every reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond) // every reading is later: records have distinct times
	return c.now
}

// Advance moves the clock on.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Input decodes a request body into a feature's input as the API does (the JSON of m read by the
// input's UnmarshalJSON), so that tests of the body's field errors send the JSON a client sends.
func Input[T any, P interface {
	*T
	json.Unmarshaler
}](m map[string]any) T {
	var in T
	b, err := json.Marshal(m)
	if err == nil {
		err = P(&in).UnmarshalJSON(b)
	}
	if err != nil {
		panic(fmt.Sprintf("body %v: %v", m, err))
	}
	return in
}

// Principals of two companies: Alice and Bob of acme, Eve of globex.
var (
	Alice = domain.Principal{KeyID: "k-alice", Owner: "alice", Company: "acme"}
	Bob   = domain.Principal{KeyID: "k-bob", Owner: "bob", Company: "acme"}
	Eve   = domain.Principal{KeyID: "k-eve", Owner: "eve", Company: "globex"}
)
