package eventsource_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/agentorch/agentorch/infra/eventsource"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
)

func TestMain(m *testing.M) { localstack.RunTests(m) }

// queues creates a queue with a one-second visibility timeout and a dead-letter queue after
// maxReceive receives, both deleted when the test ends.
func queues(t *testing.T, maxReceive int) (client *sqs.Client, url, dlq string) {
	t.Helper()
	ep, ok := localstack.TestEndpoints()
	if !ok {
		t.Fatal("no stack")
	}
	client = ep.SQSClient(localstack.AWSConfig())
	ctx := context.Background()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := "esm-" + hex.EncodeToString(rnd[:])
	d, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: d.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": attrs.Attributes["QueueArn"], "maxReceiveCount": maxReceive})
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		"VisibilityTimeout": "1", "RedrivePolicy": string(policy),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl})
		_, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: d.QueueUrl})
	})
	return client, aws.ToString(q.QueueUrl), aws.ToString(d.QueueUrl)
}

func send(t *testing.T, c *sqs.Client, url string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(b),
			MessageAttributes: map[string]sqstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("test")}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// recorder is a handler that records what it was invoked with.
type recorder struct {
	mu      sync.Mutex
	batches [][]events.SQSMessage
	counts  map[string]int // body → deliveries
	respond func(ev events.SQSEvent) (events.SQSEventResponse, error)
}

func (r *recorder) handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	r.mu.Lock()
	r.batches = append(r.batches, ev.Records)
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	for _, rec := range ev.Records {
		r.counts[rec.Body]++
	}
	r.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		return events.SQSEventResponse{}, errors.New("no deadline")
	}
	if _, ok := lambdacontext.FromContext(ctx); !ok {
		return events.SQSEventResponse{}, errors.New("no lambda context")
	}
	if r.respond == nil {
		return events.SQSEventResponse{}, nil
	}
	return r.respond(ev)
}

func (r *recorder) count(body string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[body]
}

// run starts the mapping and stops it when the test ends.
func run(t *testing.T, c *sqs.Client, url string, ev sam.SQSEvent, h eventsource.Handler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- eventsource.Run(ctx, c, eventsource.Mapping{Function: "TestFunction", Event: ev, Timeout: 5 * time.Second, QueueURL: url, Handler: h},
			eventsource.Options{WaitTime: time.Second})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
}

// eventually polls cond for up to ten seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting: %s", what)
}

// depth is the number of messages in a queue, visible or in flight.
func depth(t *testing.T, c *sqs.Client, url string) int {
	t.Helper()
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	}})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, k := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"} {
		var v int
		_, _ = fmt.Sscan(out.Attributes[k], &v)
		n += v
	}
	return n
}

// TestDeliversRealEvents: every message reaches the handler once as an SQS event record with
// Lambda's fields, in batches of at most BatchSize, and succeeded messages are deleted.
func TestDeliversRealEvents(t *testing.T) {
	c, url, _ := queues(t, 3)
	rec := &recorder{}
	send(t, c, url, "a", "b", "c", "d", "e")
	run(t, c, url, sam.SQSEvent{Name: "Jobs", BatchSize: 2, ReportBatchItemFailures: true}, rec.handle)
	eventually(t, "all five delivered", func() bool {
		return rec.count("a")+rec.count("b")+rec.count("c")+rec.count("d")+rec.count("e") >= 5
	})
	eventually(t, "queue drained", func() bool { return depth(t, c, url) == 0 })
	time.Sleep(1500 * time.Millisecond) // past the visibility timeout: nothing may come back
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for body, n := range rec.counts {
		if n != 1 {
			t.Errorf("%q delivered %d times, want 1", body, n)
		}
	}
	for _, b := range rec.batches {
		if len(b) > 2 {
			t.Errorf("batch of %d records, BatchSize is 2", len(b))
		}
		for _, r := range b {
			if r.MessageId == "" || r.ReceiptHandle == "" || r.EventSource != "aws:sqs" || r.AWSRegion != "us-east-1" ||
				r.Md5OfBody == "" || r.Attributes["ApproximateReceiveCount"] != "1" || r.MessageAttributes["kind"].DataType != "String" {
				t.Errorf("record lacks Lambda's fields: %+v", r)
			}
			if want := "arn:aws:sqs:"; len(r.EventSourceARN) < len(want) || r.EventSourceARN[:len(want)] != want {
				t.Errorf("eventSourceARN = %q, want a queue ARN", r.EventSourceARN)
			}
		}
	}
}

// TestPartialBatchFailure: with ReportBatchItemFailures only the reported record comes back; it
// reaches the dead-letter queue after maxReceiveCount receives.
func TestPartialBatchFailure(t *testing.T) {
	c, url, dlq := queues(t, 2)
	rec := &recorder{respond: func(ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			if r.Body == "poison" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		return resp, nil
	}}
	send(t, c, url, "ok1", "poison", "ok2")
	run(t, c, url, sam.SQSEvent{Name: "Jobs", BatchSize: 10, MaxBatchingWindow: 1, ReportBatchItemFailures: true}, rec.handle)
	eventually(t, "poison in the dead-letter queue", func() bool { return depth(t, c, dlq) == 1 })
	if got := rec.count("poison"); got != 2 {
		t.Errorf("poison delivered %d times, want maxReceiveCount 2", got)
	}
	for _, b := range []string{"ok1", "ok2"} {
		if got := rec.count(b); got != 1 {
			t.Errorf("%s delivered %d times, want 1", b, got)
		}
	}
	if n := depth(t, c, url); n != 0 {
		t.Errorf("queue holds %d messages, want 0", n)
	}
}

// TestWholeBatchFailures: a handler error, a panic, or an invalid failure entry fails the whole
// batch, which is delivered again; without ReportBatchItemFailures the response is ignored.
func TestWholeBatchFailures(t *testing.T) {
	cases := []struct {
		name    string
		report  bool
		respond func(n int, ev events.SQSEvent) (events.SQSEventResponse, error)
		want    int // deliveries of each message
	}{
		{"error", true, func(int, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errors.New("boom")
		}, 2},
		{"panic", true, func(int, events.SQSEvent) (events.SQSEventResponse, error) { panic("boom") }, 2},
		{"unknown item identifier", true, func(int, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "nope"}}}, nil
		}, 2},
		{"failures ignored without ReportBatchItemFailures", false, func(_ int, ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ev.Records[0].MessageId}}}, nil
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, url, dlq := queues(t, 2)
			var mu sync.Mutex
			calls := 0
			rec := &recorder{}
			rec.respond = func(ev events.SQSEvent) (events.SQSEventResponse, error) {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				if n > 1 && tc.want > 1 {
					return events.SQSEventResponse{}, nil // the retry succeeds
				}
				return tc.respond(n, ev)
			}
			send(t, c, url, "x", "y")
			run(t, c, url, sam.SQSEvent{Name: "Jobs", BatchSize: 10, MaxBatchingWindow: 1, ReportBatchItemFailures: tc.report}, rec.handle)
			eventually(t, "queue drained", func() bool { return depth(t, c, url) == 0 && rec.count("x") >= tc.want })
			time.Sleep(1500 * time.Millisecond)
			for _, b := range []string{"x", "y"} {
				if got := rec.count(b); got != tc.want {
					t.Errorf("%s delivered %d times, want %d", b, got, tc.want)
				}
			}
			if n := depth(t, c, dlq); n != 0 {
				t.Errorf("dead-letter queue holds %d, want 0", n)
			}
		})
	}
}

// TestFromTemplate: the repository's template maps the worker to the execution queue with its
// batch size and timeout; a function without a handler is an error, not a silent gap.
func TestFromTemplate(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := sam.Load(root + "/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var consumers []string
	handlers := map[string]eventsource.Handler{}
	for _, f := range tmpl.Functions() {
		if len(f.SQSEvents) > 0 {
			consumers = append(consumers, f.Dir)
			handlers[f.Dir] = (&recorder{}).handle
		}
	}
	queueURLs := map[string]string{}
	for _, q := range tmpl.Queues() {
		queueURLs[q.LogicalID] = "http://queue/" + q.LogicalID
	}
	ms, err := eventsource.FromTemplate(tmpl, queueURLs, handlers)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(consumers, "worker") {
		t.Fatalf("template.yaml has no SQS consumer named worker: %v", consumers)
	}
	for _, m := range ms {
		if m.Function == "WorkerFunction" && (m.Event.BatchSize != 1 || m.Timeout != 900*time.Second || !m.Event.ReportBatchItemFailures || m.QueueURL != "http://queue/ExecutionQueue") {
			t.Errorf("worker mapping = %+v", m)
		}
	}
	delete(handlers, "worker")
	if _, err := eventsource.FromTemplate(tmpl, queueURLs, handlers); err == nil {
		t.Error("a consumer without a handler was accepted")
	}
}
