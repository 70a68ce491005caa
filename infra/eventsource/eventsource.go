// Package eventsource is a stand-in of Lambda's SQS event source mapping for the local stack: it
// long-polls a queue of the SQS stand-in and invokes a function's handler with real SQS events, as
// the mapping in template.yaml would on AWS.
//
// What it keeps of Lambda's behaviour (docs.aws.amazon.com/lambda/latest/dg/with-sqs.html):
//   - batches of at most BatchSize records (default 10), gathered for up to
//     MaximumBatchingWindowInSeconds; each record carries the message id, receipt handle, body,
//     system and message attributes, MD5 of the body, eventSource aws:sqs, the queue ARN and region;
//   - the invocation's deadline is the function's Timeout;
//   - a handler error (or panic) fails the whole batch: nothing is deleted and every record comes
//     back after the queue's visibility timeout;
//   - with ReportBatchItemFailures, the records named in batchItemFailures come back and the others
//     are deleted; a failure entry with an empty or unknown id fails the whole batch;
//   - redrive to the dead-letter queue after maxReceiveCount is the queue's own (the SQS stand-in
//     applies the RedrivePolicy the template sets);
//   - ScalingConfig.MaximumConcurrency bounds the concurrent batches (Lambda starts with five).
//
// It is a test double of the AWS service, not of our code: the handler it invokes is the
// function's real one.
package eventsource

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/sam"
)

// Handler is a function's SQS handler, as aws-lambda-go would invoke it.
type Handler func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// Lambda's defaults for what the template leaves unset.
const (
	defaultBatchSize   = 10
	defaultTimeout     = 3 * time.Second
	defaultConcurrency = 5
	maxReceive         = 10 // SQS returns at most ten messages per ReceiveMessage
	longPoll           = 20 // seconds, the longest SQS long poll
)

// Mapping is one event source mapping: a queue, its function's handler, and the settings the
// template gives them.
type Mapping struct {
	Function string       // logical id, for logs and the invoked function ARN
	Event    sam.SQSEvent // BatchSize, window, ReportBatchItemFailures, MaximumConcurrency
	Timeout  time.Duration
	QueueURL string
	Handler  Handler
}

// Options tune the poller for tests; zero values are Lambda's.
type Options struct {
	Region string
	Log    *slog.Logger
	// WaitTime is the long-poll wait of each ReceiveMessage; 20 s when zero. Tests shorten it so
	// that Run returns soon after its context ends.
	WaitTime time.Duration
}

// Run polls the mapping's queue and invokes its handler until ctx ends. It returns ctx's error,
// or the error that made the queue unusable (it does not exist, say).
func Run(ctx context.Context, client *sqs.Client, m Mapping, opts Options) error {
	if m.Event.Disabled {
		<-ctx.Done()
		return ctx.Err()
	}
	p, err := newPoller(ctx, client, m, opts)
	if err != nil {
		return err
	}
	n := defaultConcurrency
	if c := m.Event.MaximumConcurrency; c > 0 {
		n = c
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- p.loop(ctx) })
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		if e != nil && !errors.Is(e, context.Canceled) && !errors.Is(e, context.DeadlineExceeded) {
			return e
		}
	}
	return ctx.Err()
}

type poller struct {
	client   *sqs.Client
	m        Mapping
	arn      string
	region   string
	log      *slog.Logger
	wait     int32
	batch    int
	window   time.Duration
	timeout  time.Duration
	function string
}

func newPoller(ctx context.Context, client *sqs.Client, m Mapping, opts Options) (*poller, error) {
	if m.Handler == nil {
		return nil, fmt.Errorf("event source %s of %s: no handler", m.Event.Name, m.Function)
	}
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(m.QueueURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return nil, fmt.Errorf("event source %s of %s: queue %s: %w", m.Event.Name, m.Function, m.QueueURL, err)
	}
	p := &poller{client: client, m: m, arn: out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)],
		region: opts.Region, log: opts.Log, wait: longPoll, batch: defaultBatchSize, timeout: defaultTimeout}
	if p.region == "" {
		p.region = "us-east-1"
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if opts.WaitTime > 0 {
		p.wait = int32(max(1, min(longPoll, int(opts.WaitTime/time.Second))))
	}
	if m.Event.BatchSize > 0 {
		p.batch = m.Event.BatchSize
	}
	p.window = time.Duration(m.Event.MaxBatchingWindow) * time.Second
	if m.Timeout > 0 {
		p.timeout = m.Timeout
	}
	p.function = fmt.Sprintf("arn:aws:lambda:%s:000000000000:function:%s", p.region, m.Function)
	return p, nil
}

// loop is one concurrent poller: receive a batch, invoke, settle, until ctx ends.
func (p *poller) loop(ctx context.Context) error {
	for ctx.Err() == nil {
		msgs, err := p.receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var missing *sqstypes.QueueDoesNotExist
			if errors.As(err, &missing) {
				return err
			}
			p.log.Warn("event source: receive failed", "function", p.m.Function, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		if len(msgs) > 0 {
			p.deliver(ctx, msgs)
		}
	}
	return ctx.Err()
}

// receive gathers one batch: a long poll for the first messages, then, within the batching
// window, more until the batch is full.
func (p *poller) receive(ctx context.Context) ([]sqstypes.Message, error) {
	var msgs []sqstypes.Message
	deadline := time.Now().Add(p.window)
	wait := p.wait
	for len(msgs) < p.batch {
		out, err := p.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(p.m.QueueURL),
			MaxNumberOfMessages:         int32(min(maxReceive, p.batch-len(msgs))),
			WaitTimeSeconds:             wait,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if len(msgs) > 0 && ctx.Err() == nil {
				return msgs, nil
			}
			return msgs, err
		}
		msgs = append(msgs, out.Messages...)
		left := time.Until(deadline)
		if len(msgs) == 0 {
			deadline = time.Now().Add(p.window) // the window opens with the first record
			continue
		}
		if left <= 0 {
			break
		}
		wait = int32(min(longPoll, max(0, int(left/time.Second))))
		if len(out.Messages) == 0 && wait == 0 {
			break
		}
	}
	return msgs, nil
}

// deliver invokes the handler with one batch and deletes what succeeded.
func (p *poller) deliver(ctx context.Context, msgs []sqstypes.Message) {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	byID := make(map[string]sqstypes.Message, len(msgs))
	for i, m := range msgs {
		ev.Records[i] = p.record(m)
		byID[aws.ToString(m.MessageId)] = m
	}
	resp, err := p.invoke(ctx, ev)
	if err != nil {
		p.log.Warn("event source: the function failed; the batch returns after the visibility timeout",
			"function", p.m.Function, "records", len(msgs), "err", err)
		return
	}
	failed := map[string]bool{}
	if p.m.Event.ReportBatchItemFailures {
		for _, f := range resp.BatchItemFailures {
			if _, ok := byID[f.ItemIdentifier]; !ok {
				// Lambda treats an empty or unknown identifier as a failure of the whole batch.
				p.log.Warn("event source: invalid batchItemFailures entry; the whole batch fails",
					"function", p.m.Function, "item_identifier", f.ItemIdentifier)
				return
			}
			failed[f.ItemIdentifier] = true
		}
	}
	var done []sqstypes.DeleteMessageBatchRequestEntry
	for id, m := range byID {
		if !failed[id] {
			done = append(done, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(len(done))), ReceiptHandle: m.ReceiptHandle})
		}
	}
	// Deleting is not cancelled with the poller: a processed message must not come back.
	del, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for len(done) > 0 {
		n := min(maxReceive, len(done))
		out, err := p.client.DeleteMessageBatch(del, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.m.QueueURL), Entries: done[:n]})
		if err != nil {
			p.log.Warn("event source: delete failed", "function", p.m.Function, "err", err)
		} else if len(out.Failed) > 0 {
			p.log.Warn("event source: delete failed", "function", p.m.Function, "failed", len(out.Failed))
		}
		done = done[n:]
	}
}

// invoke runs the handler as Lambda would: a deadline of the function's timeout, a Lambda
// context, and a panic reported as a function error.
func (p *poller) invoke(ctx context.Context, ev events.SQSEvent) (resp events.SQSEventResponse, err error) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
	defer cancel()
	ictx = lambdacontext.NewContext(ictx, &lambdacontext.LambdaContext{AwsRequestID: uuid.NewString(), InvokedFunctionArn: p.function})
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	return p.m.Handler(ictx, ev)
}

// record converts a received message into the event record Lambda builds.
func (p *poller) record(m sqstypes.Message) events.SQSMessage {
	body := aws.ToString(m.Body)
	md5Body := aws.ToString(m.MD5OfBody)
	if md5Body == "" {
		sum := md5.Sum([]byte(body))
		md5Body = hex.EncodeToString(sum[:])
	}
	r := events.SQSMessage{
		MessageId:              aws.ToString(m.MessageId),
		ReceiptHandle:          aws.ToString(m.ReceiptHandle),
		Body:                   body,
		Md5OfBody:              md5Body,
		Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
		Attributes:             m.Attributes,
		MessageAttributes:      map[string]events.SQSMessageAttribute{},
		EventSource:            "aws:sqs",
		EventSourceARN:         p.arn,
		AWSRegion:              p.region,
	}
	if r.Attributes == nil {
		r.Attributes = map[string]string{}
	}
	for k, v := range m.MessageAttributes {
		r.MessageAttributes[k] = events.SQSMessageAttribute{
			StringValue: v.StringValue, BinaryValue: v.BinaryValue,
			StringListValues: v.StringListValues, BinaryListValues: v.BinaryListValues,
			DataType: aws.ToString(v.DataType),
		}
	}
	return r
}

// FromTemplate builds the mappings of every SQS event source in the template whose function has
// a handler in handlers (keyed by the function's directory, e.g. "worker"); queues maps queue
// logical ids to URLs.
func FromTemplate(tmpl *sam.Template, queues map[string]string, handlers map[string]Handler) ([]Mapping, error) {
	var out []Mapping
	for _, f := range tmpl.Functions() {
		for _, ev := range f.SQSEvents {
			h, ok := handlers[f.Dir]
			if !ok {
				return nil, fmt.Errorf("template.yaml: %s consumes %s but no handler is registered for functions/%s", f.LogicalID, ev.Queue, f.Dir)
			}
			url, ok := queues[ev.Queue]
			if !ok {
				return nil, fmt.Errorf("template.yaml: %s consumes %s, which was not created", f.LogicalID, ev.Queue)
			}
			out = append(out, Mapping{Function: f.LogicalID, Event: ev, Timeout: time.Duration(f.Timeout) * time.Second, QueueURL: url, Handler: h})
		}
	}
	return out, nil
}
