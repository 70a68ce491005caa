package knowledge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// The in-memory fakes of the feature's ports: the library's (librarytest) with knowledge bases,
// and the ingestion queue.

// memStore is an in-memory knowledge.Store: the library's fake with knowledge bases.
type memStore struct {
	*librarytest.MemStore
	kbMu sync.Mutex
	kbs  map[string][]byte
}

var _ knowledge.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{MemStore: librarytest.NewMemStore(), kbs: map[string][]byte{}}
}

func (m *memStore) PutKB(_ context.Context, kb *domain.KnowledgeBase) error {
	m.Add("PutKB")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	m.kbs[kb.ID] = librarytest.Enc(kb)
	return nil
}

func (m *memStore) GetKB(_ context.Context, id string) (*domain.KnowledgeBase, error) {
	m.Add("GetKB")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	b, ok := m.kbs[id]
	if !ok {
		return nil, librarytest.Missing("Knowledge base", id)
	}
	return librarytest.Dec[domain.KnowledgeBase](b), nil
}

func (m *memStore) ListKBs(_ context.Context, company, after string, limit int) ([]*domain.KnowledgeBase, string, error) {
	m.Add("ListKBs")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	order := func(kb *domain.KnowledgeBase) (string, time.Time, string) { return kb.Company, kb.CreatedAt, kb.ID }
	out, next, err := librarytest.PageAfter(librarytest.NewestFirst(m.kbs, company, order), order, after, limit)
	m.Charge(len(out))
	return out, next, err
}

func (m *memStore) DeleteKB(_ context.Context, id string) error {
	m.Add("DeleteKB")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	delete(m.kbs, id)
	return nil
}

func (m *memStore) UpdateKB(_ context.Context, kb *domain.KnowledgeBase, runID string) error {
	m.Add("UpdateKB")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	b, ok := m.kbs[kb.ID]
	if !ok {
		return librarytest.Missing("Knowledge base", kb.ID)
	}
	if librarytest.Dec[domain.KnowledgeBase](b).RunID != runID {
		return &domain.Error{Kind: domain.KindConflict, Message: "The knowledge base's run was superseded"}
	}
	m.kbs[kb.ID] = librarytest.Enc(kb)
	return nil
}

func (m *memStore) UpdateSource(_ context.Context, kbID, runID string, d *domain.Datasource) (*domain.KnowledgeBase, error) {
	m.Add("UpdateSource")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	b, ok := m.kbs[kbID]
	if !ok {
		return nil, librarytest.Missing("Knowledge base", kbID)
	}
	kb := librarytest.Dec[domain.KnowledgeBase](b)
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
	m.kbs[kbID] = librarytest.Enc(kb)
	return librarytest.Dec[domain.KnowledgeBase](m.kbs[kbID]), nil
}

// memQueue is an in-memory knowledge.Queue that a test drains into the service, playing SQS and
// its event source mapping: a retryable error redelivers the message (up to MaxReceives
// deliveries), then it goes to the dead-letter handler.
type memQueue struct {
	librarytest.Counts
	mu   sync.Mutex
	msgs []string
	// SendErr, when set, is returned by Send.
	SendErr error
}

var _ knowledge.Queue = (*memQueue)(nil)

func (q *memQueue) Send(_ context.Context, body, group string) error {
	q.Add("Send")
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

// harness is a service over the fakes.
type harness struct {
	Svc   *knowledge.Service
	Store *memStore
	Blobs *librarytest.MemBlobs
	Queue *memQueue
	Clock *librarytest.Clock
	Deps  knowledge.Deps
}

// newTestService builds the service over fresh fakes; opt (if any) changes the dependencies and
// limits before it is built (e.g. to plug in an index and embedders).
func newTestService(t testing.TB, opt ...func(*knowledge.Deps, *knowledge.Limits)) *harness {
	t.Helper()
	h := &harness{Store: newMemStore(), Blobs: librarytest.NewMemBlobs(), Queue: &memQueue{},
		Clock: librarytest.NewClock(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))}
	h.Deps = knowledge.Deps{Store: h.Store, Blobs: h.Blobs, Queue: h.Queue, Now: h.Clock.Now}
	var l knowledge.Limits
	for _, o := range opt {
		o(&h.Deps, &l)
	}
	h.Svc = knowledge.New(h.Deps, l)
	return h
}

// Principals of two companies: alice and bob of acme, eve of globex.
var alice, bob, eve = librarytest.Alice, librarytest.Bob, librarytest.Eve

var ctx = context.Background()

// input decodes a request body into a feature's input as the API does (librarytest.Input).
func input[T any, P interface {
	*T
	json.Unmarshaler
}](m map[string]any) T {
	return librarytest.Input[T, P](m)
}

// unknownID is a well-formed id that names nothing.
const unknownID = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
