package library_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// hookStore is the in-memory store with a hook before UpdateCollection, to interleave a
// concurrent writer or make the write fail.
type hookStore struct {
	*librarytest.MemStore
	mu sync.Mutex
	// beforeUpdate runs before each UpdateCollection (n counts them from 1); a non-nil error is
	// returned instead of writing.
	beforeUpdate func(n int, c *domain.Collection) error
	n            int
}

func (h *hookStore) UpdateCollection(ctx context.Context, c *domain.Collection, prev time.Time) error {
	h.mu.Lock()
	h.n++
	n, hook := h.n, h.beforeUpdate
	h.mu.Unlock()
	if hook != nil {
		if err := hook(n, c); err != nil {
			h.Add("UpdateCollection")
			return err
		}
	}
	return h.MemStore.UpdateCollection(ctx, c, prev)
}

// failBlobs is the in-memory blob store whose Delete fails while DeleteErr is set.
type failBlobs struct {
	*librarytest.MemBlobs
	DeleteErr error
}

func (b *failBlobs) Delete(ctx context.Context, key string) error {
	if b.DeleteErr != nil {
		b.Add("Delete")
		return b.DeleteErr
	}
	return b.MemBlobs.Delete(ctx, key)
}

// withHooks builds a service whose store is a hookStore and whose blobs are failBlobs.
func withHooks(t *testing.T, opt ...func(*library.Deps, *library.Limits)) (*harness, *hookStore, *failBlobs) {
	t.Helper()
	var hs *hookStore
	var fb *failBlobs
	h := newTestService(t, append([]func(*library.Deps, *library.Limits){func(d *library.Deps, _ *library.Limits) {
		hs = &hookStore{MemStore: d.Store.(*librarytest.MemStore)}
		fb = &failBlobs{MemBlobs: d.Blobs.(*librarytest.MemBlobs)}
		d.Store, d.Blobs = hs, fb
	}}, opt...)...)
	return h, hs, fb
}

// upload stores a file for p and fails the test on an error.
func upload(t *testing.T, h *harness, p domain.Principal, name, data string, tags ...string) *domain.File {
	t.Helper()
	f, err := h.Svc.Upload(context.Background(), p, library.Upload{Name: name, Data: []byte(data), Tags: tags})
	if err != nil {
		t.Fatalf("Upload(%s): %v", name, err)
	}
	return f
}

// collection creates a collection for p and fails the test on an error.
func collection(t *testing.T, h *harness, p domain.Principal, name string) *library.Collection {
	t.Helper()
	c, err := h.Svc.CreateCollection(context.Background(), p, input[library.CollectionInput](map[string]any{"name": name}))
	if err != nil {
		t.Fatalf("CreateCollection(%s): %v", name, err)
	}
	return c
}

// wantErr checks that err is a domain error of kind whose first field error names field (when
// field is not "") and whose message contains each of msg.
func wantErr(t *testing.T, err error, kind domain.Kind, field string, msg ...string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("error = %v, want a domain error of kind %d", err, kind)
	}
	if de.Kind != kind {
		t.Fatalf("error kind = %d (%v), want %d", de.Kind, err, kind)
	}
	if field != "" && (len(de.Fields) == 0 || de.Fields[0].Field != field) {
		t.Errorf("field errors = %+v, want %s first", de.Fields, field)
	}
	for _, m := range msg {
		if !strings.Contains(de.Message, m) {
			t.Errorf("message %q does not contain %q", de.Message, m)
		}
	}
}

// anyIDs makes a JSON array of strings.
func anyIDs(ids ...string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// unknownID is a well-formed id that names nothing.
const unknownID = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"

// input decodes a well-shaped request body into a feature's input (the errors of a body's
// shape are the edge's decoder's, tested in api).
func input[T any](m map[string]any) T {
	var in T
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		panic(fmt.Sprintf("body %v: %v", m, err))
	}
	return in
}

// harness is a service over the fakes.
type harness struct {
	Svc   *library.Service
	Store *librarytest.MemStore
	Blobs *librarytest.MemBlobs
	Clock *librarytest.Clock
	Deps  library.Deps
}

// newTestService builds the service over fresh fakes; opt (if any) changes the dependencies and
// limits before it is built.
func newTestService(t testing.TB, opt ...func(*library.Deps, *library.Limits)) *harness {
	t.Helper()
	h := &harness{Store: librarytest.NewMemStore(), Blobs: librarytest.NewMemBlobs(),
		Clock: librarytest.NewClock(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))}
	h.Deps = library.Deps{Store: h.Store, Blobs: h.Blobs, Now: h.Clock.Now}
	var l library.Limits
	for _, o := range opt {
		o(&h.Deps, &l)
	}
	h.Svc = library.New(h.Deps, l)
	return h
}

// Principals of two companies: alice and bob of acme, eve of globex.
var alice, bob, eve = librarytest.Alice, librarytest.Bob, librarytest.Eve

// summary is what a collection's files make of it (status, progress, counts).
func summary(c *library.Collection) domain.CollectionSummary {
	return domain.SummarizeCollection(c.Files)
}

// tally counts the items of a bulk or add-files result that succeeded and that failed.
func tally(items []library.BulkItem) (ok, failed int) {
	for _, it := range items {
		if it.Status == library.ItemSucceeded {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

// allDone reports whether every item of a bulk or add-files result succeeded.
func allDone(items []library.BulkItem) bool {
	_, failed := tally(items)
	return failed == 0
}
