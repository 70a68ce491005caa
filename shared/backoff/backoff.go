// Package backoff holds the retry timing the model adapters share: exponential delays with
// jitter, and sleeping only while the context's deadline allows another attempt.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Delay is the wait before retry number attempt (0-based): base·2^attempt capped at limit, with
// "equal jitter" (half fixed, half random) so concurrent callers spread out.
func Delay(base, limit time.Duration, attempt int) time.Duration {
	d := base << min(attempt, 20)
	if d <= 0 || d > limit {
		d = limit
	}
	return d/2 + rand.N(d/2+1)
}

// Sleep waits d unless that would pass ctx's deadline or ctx ends first; it reports whether the
// caller may try again.
func Sleep(ctx context.Context, d time.Duration) bool {
	if deadline, ok := ctx.Deadline(); ok && time.Now().Add(d).After(deadline) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
