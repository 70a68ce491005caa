package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	for attempt, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second} {
		for i := 0; i < 50; i++ {
			if d := Delay(100*time.Millisecond, time.Second, attempt); d < want/2 || d > want {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d, want/2, want)
			}
		}
	}
}

func TestSleepRespectsDeadline(t *testing.T) {
	// An hour's sleep against a minute's deadline: had Sleep begun it, it could only have
	// returned with the deadline passed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if Sleep(ctx, time.Hour) {
		t.Error("slept past the deadline")
	}
	if ctx.Err() != nil {
		t.Error("waited although the deadline was too close")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("a short sleep without deadline refused")
	}
}

func TestWaitUntilContextEnds(t *testing.T) {
	// Unlike Sleep, Wait waits towards a deadline it would pass and stops as the deadline ends ctx.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if Wait(ctx, time.Hour) {
		t.Error("waited out an hour within a deadline")
	}
	if ctx.Err() == nil {
		t.Error("gave up before the deadline ended the context")
	}
	if !Wait(context.Background(), time.Millisecond) {
		t.Error("a short wait refused")
	}
}

func TestRetry(t *testing.T) {
	errBusy := errors.New("busy")
	errBad := errors.New("bad request")
	policy := Policy{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}
	tests := []struct {
		name      string
		outcomes  []error // op's answer per attempt; the last one repeats
		retry     func(error) bool
		wantCalls int
		wantErr   error
	}{
		{name: "success at once", outcomes: []error{nil}, wantCalls: 1},
		{name: "busy twice then success", outcomes: []error{errBusy, errBusy, nil}, wantCalls: 3},
		{name: "busy beyond the retries", outcomes: []error{errBusy}, wantCalls: 4, wantErr: errBusy},
		{name: "a final error is not retried", outcomes: []error{errBusy, errBad, nil}, wantCalls: 2, wantErr: errBad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := Retry(context.Background(), policy, func(attempt int) (time.Duration, bool, error) {
				if attempt != calls {
					t.Errorf("attempt %d on call %d", attempt, calls+1)
				}
				calls++
				err := tt.outcomes[min(attempt, len(tt.outcomes)-1)]
				return 0, errors.Is(err, errBusy), err
			})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) || errors.Is(err, ErrDeadline) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if calls != tt.wantCalls {
				t.Errorf("got %d calls, want %d", calls, tt.wantCalls)
			}
		})
	}
}

func TestRetryWaits(t *testing.T) {
	errBusy := errors.New("busy")
	tests := []struct {
		name        string
		retryAfter  time.Duration
		policy      Policy
		deadline    time.Duration
		cancelAfter time.Duration // 0: never
		wantCalls   int
		wantElapsed time.Duration // at least
		wantGaveUp  bool
		wantEarly   bool // returned with the deadline still ahead
		wantCancel  bool
	}{
		{
			name: "the server's wait is honoured", retryAfter: 100 * time.Millisecond,
			policy: Policy{MaxRetries: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}, deadline: 5 * time.Second,
			wantCalls: 2, wantElapsed: 100 * time.Millisecond,
		},
		{
			name:   "the backoff delay is waited for without one",
			policy: Policy{MaxRetries: 1, BaseDelay: 80 * time.Millisecond, MaxDelay: time.Second}, deadline: 5 * time.Second,
			wantCalls: 2, wantElapsed: 40 * time.Millisecond,
		},
		{
			name: "a wait past the deadline gives up at once", retryAfter: time.Hour,
			policy: Policy{MaxRetries: 5}, deadline: time.Minute, wantCalls: 1, wantGaveUp: true, wantEarly: true,
		},
		{
			name: "backoff bounded by the deadline", policy: Policy{MaxRetries: 100, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Second},
			deadline: 300 * time.Millisecond, wantGaveUp: true,
		},
		{
			name: "cancellation during a wait", retryAfter: 10 * time.Second,
			policy: Policy{MaxRetries: 1}, deadline: time.Minute, cancelAfter: 50 * time.Millisecond, wantCalls: 1, wantCancel: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			defer cancel()
			if tt.cancelAfter > 0 {
				time.AfterFunc(tt.cancelAfter, cancel)
			}
			calls := 0
			start := time.Now()
			err := Retry(ctx, tt.policy, func(int) (time.Duration, bool, error) {
				calls++
				if calls > 1 && !tt.wantGaveUp {
					return 0, false, nil
				}
				return tt.retryAfter, true, errBusy
			})
			elapsed := time.Since(start)
			switch {
			case tt.wantCancel:
				if !errors.Is(err, context.Canceled) || errors.Is(err, errBusy) || errors.Is(err, ErrDeadline) {
					t.Errorf("err = %v, want the cancellation alone", err)
				}
			case tt.wantGaveUp:
				if !errors.Is(err, errBusy) || !errors.Is(err, ErrDeadline) {
					t.Errorf("err = %v, want the last busy answer marked ErrDeadline", err)
				}
				if tt.wantEarly && ctx.Err() != nil {
					t.Errorf("returned after the deadline (%v)", ctx.Err())
				}
			case err != nil:
				t.Errorf("err = %v, want success", err)
			}
			if tt.wantCalls > 0 && calls != tt.wantCalls {
				t.Errorf("got %d calls, want %d", calls, tt.wantCalls)
			}
			if tt.wantCalls == 0 && (calls < 2 || calls >= 100) {
				t.Errorf("got %d calls, want a few bounded by the deadline", calls)
			}
			if elapsed < tt.wantElapsed {
				t.Errorf("returned after %v, want at least %v", elapsed, tt.wantElapsed)
			}
		})
	}
}
