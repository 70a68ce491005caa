package webhookstest

import (
	"context"
	"sync"
)

// Queue keeps what is sent to the delivery queue, for a test to process as the queue would.
type Queue struct {
	mu   sync.Mutex
	msgs []string
}

// Send keeps body.
func (q *Queue) Send(_ context.Context, body, _ string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.msgs = append(q.msgs, body)
	return nil
}

// Take returns what was sent since the last Take, oldest first.
func (q *Queue) Take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.msgs
	q.msgs = nil
	return out
}
