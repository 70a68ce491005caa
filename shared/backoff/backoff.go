// Package backoff holds the one retry loop every outbound client shares (the Bedrock and
// OpenAI-compatible chat and embedding adapters, DynamoDB's unprocessed batch items, OpenSearch's
// rejected bulk items and delete-by-query conflicts): exponential delays with jitter or the
// server's own Retry-After, and sleeping only while the context's deadline allows another attempt.
package backoff

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// ErrDeadline marks the error of a Retry that stopped because the context's deadline left no
// room for the next wait.
var ErrDeadline = errors.New("gave up within the deadline")

// Policy bounds the retries of one call.
type Policy struct {
	// MaxRetries is the number of retries after the first attempt; 0 or less means none.
	MaxRetries int
	// BaseDelay is the first backoff delay, doubled on each retry.
	BaseDelay time.Duration
	// MaxDelay caps a backoff delay; a wait the server asks for is not capped, only refused
	// when it would pass the deadline.
	MaxDelay time.Duration
}

// Retry calls op(attempt), attempt counting from 0, until op succeeds, returns an error that
// retry does not mark as worth another attempt, or MaxRetries retries have failed; it returns
// op's last error (nil on success). Between attempts it waits retryAfter when op reports one
// (a server's Retry-After), otherwise Delay(BaseDelay, MaxDelay, attempt).
//
// A wait that the context's deadline would not leave room for is not begun: Retry returns op's
// last error, wrapped with ErrDeadline and the attempts made, so that the caller can still answer (as busy)
// before the deadline. When ctx is cancelled, Retry returns ctx.Err().
func Retry(ctx context.Context, p Policy, op func(attempt int) (retryAfter time.Duration, retry bool, err error)) error {
	for attempt := 0; ; attempt++ {
		wait, retry, err := op(attempt)
		if err == nil || !retry || attempt >= p.MaxRetries {
			return err
		}
		if wait <= 0 {
			wait = Delay(p.BaseDelay, p.MaxDelay, attempt)
		}
		if !Sleep(ctx, wait) {
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			return fmt.Errorf("%w after attempt %d: %w", ErrDeadline, attempt+1, err)
		}
	}
}

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
	return Wait(ctx, d)
}

// Wait waits d unless ctx ends first (false): unlike Sleep, it waits towards a deadline it
// would pass, until the deadline ends ctx, for a caller that polls until then.
func Wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
