// Package childproc holds what the local tooling needs to run child processes: their own
// process group (stopped with everything they spawn) and the tail of their output for errors.
package childproc

import "sync"

// Tail keeps the last Max bytes written to it: a child's output, for error messages.
type Tail struct {
	mu  sync.Mutex
	Max int
	buf []byte
}

// Write keeps p, dropping the oldest bytes beyond Max.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is the kept output.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
