package platform

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// SQSBuilder builds a queue function's message processor from its configuration.
type SQSBuilder func(ctx context.Context, cfg Config, log *slog.Logger) (func(ctx context.Context, body string) error, error)

// deadlineReserve is kept back from the Lambda deadline so that the handler can still report the
// batch: an invocation killed at its deadline fails every record, including those that succeeded.
const deadlineReserve = 2 * time.Second

// SQSHandler adapts a message processor to SQS events with partial batch responses (the event
// source mapping must set ReportBatchItemFailures). Each record whose processing fails with a
// retryable error (domain.Kind.Retryable: internal, overloaded, rate limited; a panic or a plain
// error is internal), or cannot start before the deadline, is reported by its message id; the
// others are deleted, an error of another kind logged as a warning. It never
// returns an error, which would retry the whole batch: a poison message is retried alone and then
// moved to the dead-letter queue by the queue's redrive policy.
func SQSHandler(process func(ctx context.Context, body string) error, log *slog.Logger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		work, cancel := withReserve(ctx)
		defer cancel()
		requestID := ""
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			requestID = lc.AwsRequestID
		}
		for _, rec := range ev.Records {
			err := work.Err()
			if err == nil {
				err = processRecord(context.WithValue(work, recordKey{}, rec), process, rec.Body)
			}
			if err != nil && !domain.KindOf(err).Retryable() {
				// An outcome the feature recorded (or a job that can never succeed): a
				// redelivery could only repeat it, so the message is done.
				log.WarnContext(ctx, "sqs message not retried", "request_id", requestID, "message_id", rec.MessageId, "err", err)
				continue
			}
			if err != nil {
				log.ErrorContext(ctx, "sqs message failed", "request_id", requestID, "message_id", rec.MessageId,
					"receive_count", rec.Attributes["ApproximateReceiveCount"], "err", err)
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			}
		}
		return resp, nil
	}
}

// processRecord runs process on one body; a panic fails that record only.
func processRecord(ctx context.Context, process func(context.Context, string) error, body string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	return process(ctx, body)
}

// withReserve returns ctx ending deadlineReserve (at most a tenth of the time left) before its
// deadline.
func withReserve(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, dl.Add(-min(deadlineReserve, time.Until(dl)/10)))
}

// StartSQS runs process as a Lambda function behind an SQS event source. It does not return.
func StartSQS(process func(ctx context.Context, body string) error, log *slog.Logger) {
	lambda.Start(SQSHandler(process, log))
}

// MainSQS is the whole main of a queue function: load config, build the processor once, serve
// SQS events. A configuration error is logged and exits 1.
func MainSQS(build SQSBuilder) { run(build, StartSQS) }
