package platform_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
)

// The floors double from Base with each receive and stop at Max.
func TestBackoffFloor(t *testing.T) {
	b := platform.Backoff{Base: 2 * time.Second, Max: 5 * time.Minute}
	tests := []struct {
		receive int
		want    time.Duration
	}{
		{0, 2 * time.Second}, // no count: as the first receive
		{1, 2 * time.Second},
		{2, 4 * time.Second},
		{5, 32 * time.Second},
		{8, 256 * time.Second},
		{9, 5 * time.Minute},
		{12, 5 * time.Minute},
		{1000, 5 * time.Minute}, // no overflow
	}
	for _, tt := range tests {
		if got := b.Floor(tt.receive); got != tt.want {
			t.Errorf("Floor(%d) = %v, want %v", tt.receive, got, tt.want)
		}
	}
}

// redriver records the visibility changes asked of it.
type redriver struct {
	url  string
	err  error
	mu   sync.Mutex
	got  []change
	ctxs []bool // whether each call's context had time left
}

type change struct {
	Handle string
	Delay  time.Duration
}

func (r *redriver) QueueURL() string { return r.url }

func (r *redriver) After(ctx context.Context, handle string, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, change{handle, d})
	r.ctxs = append(r.ctxs, ctx.Err() == nil)
	return r.err
}

// TestRedriveSoon: a message the processor gives back (a retryable error) is made visible again
// after the backoff of its receive count, in whole seconds, and still reported as failed; an
// outcome that is not retried, a record of another queue and one without a receipt handle keep
// the queue's visibility timeout; a failed change leaves the message failed and says so in the
// log.
func TestRedriveSoon(t *testing.T) {
	const (
		url = "https://sqs.us-east-1.amazonaws.com/123456789012/app-ExecutionQueue-X"
		arn = "arn:aws:sqs:us-east-1:123456789012:app-ExecutionQueue-X"
	)
	busy := &domain.Error{Kind: domain.KindOverloaded, Message: "session busy; retry later"}
	tests := []struct {
		name       string
		err        error
		arn        string
		handle     string
		receive    string
		afterErr   error
		wantDelay  [2]time.Duration // inclusive range; zero: no change asked
		wantFailed bool
		wantLog    string
	}{
		{name: "busy on the first receive", err: busy, arn: arn, handle: "h1", receive: "1",
			wantDelay: [2]time.Duration{2 * time.Second, 3 * time.Second}, wantFailed: true, wantLog: "delivered again in"},
		{name: "busy on the fifth receive", err: busy, arn: arn, handle: "h5", receive: "5",
			wantDelay: [2]time.Duration{32 * time.Second, 40 * time.Second}, wantFailed: true},
		{name: "capped", err: busy, arn: arn, handle: "h11", receive: "11",
			wantDelay: [2]time.Duration{300 * time.Second, 375 * time.Second}, wantFailed: true},
		{name: "internal failure", err: errors.New("table unreachable"), arn: arn, handle: "h", receive: "2",
			wantDelay: [2]time.Duration{4 * time.Second, 5 * time.Second}, wantFailed: true},
		{name: "rate limited", err: &domain.Error{Kind: domain.KindRateLimited, Message: "slow down"}, arn: arn, handle: "h", receive: "1",
			wantDelay: [2]time.Duration{2 * time.Second, 3 * time.Second}, wantFailed: true},
		{name: "success", arn: arn, handle: "h", receive: "1"},
		{name: "recorded outcome is not retried", err: domain.Errorf(domain.KindInvalid, "bad"), arn: arn, handle: "h", receive: "1"},
		{name: "another queue", err: busy, arn: "arn:aws:sqs:us-east-1:123456789012:app-IngestQueue-Y", handle: "h", receive: "1", wantFailed: true},
		{name: "another account", err: busy, arn: "arn:aws:sqs:us-east-1:999999999999:app-ExecutionQueue-X", handle: "h", receive: "1", wantFailed: true},
		{name: "no receipt handle", err: busy, arn: arn, receive: "1", wantFailed: true},
		{name: "change refused", err: busy, arn: arn, handle: "h", receive: "1", afterErr: errors.New("AccessDenied"),
			wantDelay: [2]time.Duration{2 * time.Second, 3 * time.Second}, wantFailed: true, wantLog: "waits the queue's visibility timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &redriver{url: url, err: tt.afterErr}
			process := platform.RedriveSoon(func(context.Context, string) error { return tt.err }, r,
				platform.Backoff{Base: 2 * time.Second, Max: 5 * time.Minute})
			var logs bytes.Buffer
			h := platform.SQSHandler(process, slog.New(slog.NewJSONHandler(&logs, nil)))
			ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m0", ReceiptHandle: tt.handle, Body: "{}",
				EventSourceARN: tt.arn, Attributes: map[string]string{"ApproximateReceiveCount": tt.receive}}}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := h(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			if failed := len(resp.BatchItemFailures) == 1; failed != tt.wantFailed {
				t.Errorf("reported failed: %v, want %v", failed, tt.wantFailed)
			}
			if tt.wantDelay == [2]time.Duration{} {
				if len(r.got) != 0 {
					t.Errorf("visibility changed %+v, want the queue's timeout kept", r.got)
				}
				return
			}
			if len(r.got) != 1 {
				t.Fatalf("visibility changes %+v, want one", r.got)
			}
			c := r.got[0]
			if c.Handle != tt.handle || c.Delay < tt.wantDelay[0] || c.Delay > tt.wantDelay[1] || c.Delay%time.Second != 0 {
				t.Errorf("change %+v, want handle %s and whole seconds in %v", c, tt.handle, tt.wantDelay)
			}
			if !r.ctxs[0] {
				t.Error("the change ran with an ended context")
			}
			if tt.wantLog != "" && !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log %s lacks %q", logs.String(), tt.wantLog)
			}
		})
	}
}

// Outside SQSHandler there is no record: the processor's error is returned as it is.
func TestRedriveSoonOutsideHandler(t *testing.T) {
	r := &redriver{url: "u"}
	want := &domain.Error{Kind: domain.KindOverloaded, Message: "busy"}
	err := platform.RedriveSoon(func(context.Context, string) error { return want }, r, platform.Backoff{Base: time.Second, Max: time.Minute})(t.Context(), "{}")
	if !errors.Is(err, want) || len(r.got) != 0 {
		t.Errorf("err %v, changes %+v; want the processor's error and none", err, r.got)
	}
}

// A processor that ran until its deadline still gets its message back soon: the change has
// time of its own.
func TestRedriveSoonAfterTheDeadline(t *testing.T) {
	const url = "http://127.0.0.1:4576/000000000000/q"
	r := &redriver{url: url}
	process := platform.RedriveSoon(func(ctx context.Context, _ string) error {
		<-ctx.Done()
		return ctx.Err()
	}, r, platform.Backoff{Base: 2 * time.Second, Max: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	resp, err := platform.SQSHandler(process, slog.New(slog.DiscardHandler))(ctx, events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: "m0", ReceiptHandle: "h", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:q",
		Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []events.SQSBatchItemFailure{{ItemIdentifier: "m0"}}
	if diff := cmp.Diff(want, resp.BatchItemFailures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if len(r.got) != 1 || !r.ctxs[0] {
		t.Errorf("changes %+v with live contexts %v; want one, with time left", r.got, r.ctxs)
	}
}
