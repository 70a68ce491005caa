package knowledge_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/knowledge/knowledgetest"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// The in-memory fakes of the feature's ports: the store (knowledgetest.Store, the one fake of
// knowledge.Store, held to DynamoDB's behaviour by its suite) and the ingestion queue.

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
	Store *knowledgetest.Store
	Blobs *librarytest.MemBlobs
	Queue *memQueue
	Clock *librarytest.Clock
	Deps  knowledge.Deps
}

// newTestService builds the service over fresh fakes; opt (if any) changes the dependencies and
// limits before it is built (e.g. to plug in an index and embedders).
func newTestService(t testing.TB, opt ...func(*knowledge.Deps, *knowledge.Limits)) *harness {
	t.Helper()
	h := &harness{Store: knowledgetest.NewStore(), Blobs: librarytest.NewMemBlobs(), Queue: &memQueue{},
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

// unknownID is a well-formed id that names nothing.
const unknownID = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
