// Package librarytest holds in-memory fakes of the library's ports for the tests of the library
// and of the features built on it, and StoreSuite, the contract of library.Store that the fake
// (MemStore) and the DynamoDB adapter (shared/dynamo's suite tests, on DynamoDB Local) both
// pass, so that the fake cannot drift from DynamoDB's conditions and paging. The fakes keep
// records as JSON (callers never share memory with what is stored, as with DynamoDB) and count
// every call by method name.
package librarytest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// Principals of two companies: Alice and Bob of acme, Eve of globex.
var (
	Alice = domain.Principal{KeyID: "k-alice", Owner: "alice", Company: "acme"}
	Bob   = domain.Principal{KeyID: "k-bob", Owner: "bob", Company: "acme"}
	Eve   = domain.Principal{KeyID: "k-eve", Owner: "eve", Company: "globex"}
)
