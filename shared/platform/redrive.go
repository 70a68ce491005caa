package platform

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentorch/agentorch/shared/domain"
)

// recordKey is the context key of the SQS record a processor is running (set by SQSHandler).
type recordKey struct{}

// record is the SQS record SQSHandler is processing in ctx.
func record(ctx context.Context) (events.SQSMessage, bool) {
	rec, ok := ctx.Value(recordKey{}).(events.SQSMessage)
	return rec, ok
}

// Redriver sets when a received message of one queue is delivered again (*sqs.Redrive).
type Redriver interface {
	// QueueURL is the queue whose messages it redrives.
	QueueURL() string
	// After makes the in-flight message of receiptHandle visible again after d.
	After(ctx context.Context, receiptHandle string, d time.Duration) error
}

// Backoff is how soon a message given back for another try comes back: Base on its first
// receive, doubling with each receive, at most Max, plus up to a quarter more so that messages
// given back together spread out. It never comes back sooner than that floor, so the floors of
// a queue's receives bound how long a message waits before the dead-letter queue (Floor).
type Backoff struct {
	Base, Max time.Duration
}

// Floor is the delay before the next delivery of a message given back on its receiveCount-th
// receive (1 for the first), without the spread.
func (b Backoff) Floor(receiveCount int) time.Duration {
	d := b.Base << min(max(receiveCount-1, 0), 30)
	if d <= 0 || d > b.Max {
		d = b.Max
	}
	return d
}

// delay is Floor plus up to a quarter of it.
func (b Backoff) delay(receiveCount int) time.Duration {
	d := b.Floor(receiveCount)
	return d + rand.N(d/4+1)
}

// redriveTimeout bounds the visibility change: it runs after the processor, in the deadline
// reserve SQSHandler keeps to answer Lambda.
const redriveTimeout = time.Second

// RedriveSoon wraps a queue function's processor so that a message it gives back (a retryable
// error: the session busy, a throttled or failing dependency) is delivered again after b's
// delay for its receive count rather than the queue's visibility timeout (960 s for the
// execution queue, which must outlast the function's 15 minutes). It must run under SQSHandler
// (it reads the record there); records of another queue than r's, and processors run outside
// SQSHandler, keep the queue's timeout. When the change fails, the message keeps it too, and the
// error says so.
func RedriveSoon(process func(ctx context.Context, body string) error, r Redriver, b Backoff) func(ctx context.Context, body string) error {
	return func(ctx context.Context, body string) error {
		err := process(ctx, body)
		if err == nil || !domain.KindOf(err).Retryable() {
			return err
		}
		rec, ok := record(ctx)
		if !ok || rec.ReceiptHandle == "" || !sameQueue(rec.EventSourceARN, r.QueueURL()) {
			return err
		}
		n, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
		d := (b.delay(n) + time.Second - 1).Truncate(time.Second) // SQS counts whole seconds
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redriveTimeout)
		defer cancel()
		if verr := r.After(cctx, rec.ReceiptHandle, d); verr != nil {
			return fmt.Errorf("%w (its redelivery waits the queue's visibility timeout: %v)", err, verr) //nolint:errorlint // the processor's error decides the retry
		}
		return fmt.Errorf("%w (delivered again in %s)", err, d)
	}
}

// sameQueue reports whether the queue ARN (arn:aws:sqs:region:account:name) names the queue of
// url (…/account/name): SQS takes the URL, Lambda's record carries the ARN.
func sameQueue(arn, url string) bool {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[5] == "" {
		return false
	}
	return strings.HasSuffix(url, "/"+parts[4]+"/"+parts[5])
}
