package api

import "sync"

// Queue hands values from goroutines that must never wait (a run's observers: a slow or gone
// client does not hold the run up) to the one goroutine that writes them to the client, in the
// order they were pushed. The execute's event stream and each protocol served beside it (MCP
// progress, the OpenAI and A2A streams) use it.
type Queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	ready  chan struct{} // holds a token while values wait
}

// NewQueue is an empty queue.
func NewQueue[T any]() *Queue[T] { return &Queue[T]{ready: make(chan struct{}, 1)} }

// Push queues v; it never blocks. After Close it drops v.
func (q *Queue[T]) Push(v T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.items = append(q.items, v)
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Ready receives when values may wait: Take them.
func (q *Queue[T]) Ready() <-chan struct{} { return q.ready }

// Take returns the waiting values, oldest first, and empties the queue.
func (q *Queue[T]) Take() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}

// Close drops whatever is pushed later.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
}
