package sqs_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sqs"
)

// TestMain starts fauxqs and the other stand-ins unless the run already provides them.
func TestMain(m *testing.M) { localstack.RunTests(m) }

// executionQueue is the queue of the worker in template.yaml (the ingestion queue before the
// template had one).
func executionQueue(t *testing.T, env *localstack.TestEnv) string {
	t.Helper()
	if u, ok := env.Resources.Queues["ExecutionQueue"]; ok {
		return u
	}
	if u, ok := env.Resources.Queues["IngestQueue"]; ok {
		return u
	}
	t.Fatalf("template.yaml has neither ExecutionQueue nor IngestQueue: %v", env.Resources.Queues)
	return ""
}

// receive long-polls the queue, deleting what it gets, until want messages arrived or 10 s passed.
func receive(t *testing.T, c *awssqs.Client, url string, want int) []types.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []types.Message
	for len(got) < want && ctx.Err() == nil {
		out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			t.Fatalf("receive: %v", err)
		}
		for _, m := range out.Messages {
			// Deleted at once: a FIFO queue holds back a group's next message until then.
			if _, err := c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			got = append(got, m)
		}
	}
	if len(got) != want {
		t.Fatalf("received %d messages, want %d", len(got), want)
	}
	return got
}

// The dispatcher's message, read back from a queue made from template.yaml, is the job it sent.
func TestDispatchRoundTrip(t *testing.T) {
	env := localstack.NewTestEnv(t)
	url := executionQueue(t, env)
	d := sqs.NewQueue(env.SQS(), url)
	sid, eid := uuid.NewString(), uuid.NewString()
	if err := d.Send(t.Context(), jobBody(sid, eid), sid); err != nil {
		t.Fatal(err)
	}
	msgs := receive(t, env.SQS(), url, 1)
	body := aws.ToString(msgs[0].Body)
	// The body is a contract with events/worker-execution.json and any other producer.
	if want := `{"session_id":"` + sid + `","execution_id":"` + eid + `"}`; body != want {
		t.Errorf("body = %s, want %s", body, want)
	}
}

// jobBody is a message body as the sessions feature writes it; the adapter carries it unread.
func jobBody(sid, eid string) string {
	return `{"session_id":"` + sid + `","execution_id":"` + eid + `"}`
}

// On a FIFO queue a session's executions share a message group and keep their order, and the
// same execution sent twice is delivered once.
func TestDispatchFIFO(t *testing.T) {
	env := localstack.NewTestEnv(t)
	c := env.SQS()
	out, err := c.CreateQueue(t.Context(), &awssqs.CreateQueueInput{
		QueueName:  aws.String("exec-" + uuid.NewString()[:8] + ".fifo"),
		Attributes: map[string]string{string(types.QueueAttributeNameFifoQueue): "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	url := aws.ToString(out.QueueUrl)
	t.Cleanup(func() {
		_, _ = c.DeleteQueue(context.Background(), &awssqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	})

	d := sqs.NewQueue(c, url)
	sid := uuid.NewString()
	execs := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	for _, e := range append(execs, execs[0]) {
		if err := d.Send(t.Context(), jobBody(sid, e), sid); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, m := range receive(t, c, url, len(execs)) {
		if g := m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]; g != sid {
			t.Errorf("message group %q, want the session %s", g, sid)
		}
		var j struct {
			ExecutionID string `json:"execution_id"`
		}
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &j); err != nil {
			t.Fatal(err)
		}
		got = append(got, j.ExecutionID)
	}
	if diff := cmp.Diff(execs, got); diff != "" {
		t.Errorf("executions received (-want +got):\n%s", diff)
	}
	more, err := c.ReceiveMessage(t.Context(), &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(more.Messages) != 0 {
		t.Errorf("the execution sent twice was delivered twice: %s", aws.ToString(more.Messages[0].Body))
	}
}

// A queue that does not exist is a configuration fault: internal, with the SDK's error kept.
func TestDispatchMissingQueue(t *testing.T) {
	env := localstack.NewTestEnv(t)
	url := executionQueue(t, env)
	missing := url[:strings.LastIndex(url, "/")+1] + "no-such-queue-" + uuid.NewString()[:8]
	eid := uuid.NewString()
	err := sqs.NewQueue(env.SQS(), missing).Send(t.Context(), jobBody(uuid.NewString(), eid), uuid.NewString())
	if err == nil {
		t.Fatal("dispatch to a missing queue succeeded")
	}
	if k := domain.KindOf(err); k != domain.KindInternal {
		t.Errorf("kind = %v, want internal (err %v)", k, err)
	}
	var qdne *types.QueueDoesNotExist
	if !errors.As(err, &qdne) {
		t.Errorf("err %v does not carry *types.QueueDoesNotExist", err)
	}
	if !strings.Contains(err.Error(), missing) {
		t.Errorf("err %q does not name the queue", err)
	}
}

// SQS's error responses (AWS JSON 1.0, with the query-compatible code header SQS sends) become
// domain kinds: throttling and over-limit are overloaded, the rest internal.
func TestDispatchErrorKinds(t *testing.T) {
	tests := []struct {
		name, typ, queryCode string
		status               int
		want                 domain.Kind
	}{
		{"request throttled", "RequestThrottled", "RequestThrottled;Sender", 400, domain.KindOverloaded},
		{"throttling exception", "ThrottlingException", "", 400, domain.KindOverloaded},
		{"kms throttled", "KmsThrottled", "KMS.ThrottlingException;Sender", 400, domain.KindOverloaded},
		{"too many in flight", "OverLimit", "AWS.SimpleQueueService.OverLimit;Sender", 403, domain.KindOverloaded},
		{"queue missing", "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue;Sender", 400, domain.KindInternal},
		{"access denied", "AccessDenied", "AccessDenied;Sender", 403, domain.KindInternal},
		{"server error", "InternalError", "", 500, domain.KindInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				if tt.queryCode != "" {
					w.Header().Set("x-amzn-query-error", tt.queryCode)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(`{"__type":"com.amazonaws.sqs#` + tt.typ + `","message":"from the test server"}`))
			}))
			defer srv.Close()
			client := awssqs.NewFromConfig(localstack.AWSConfig(), func(o *awssqs.Options) {
				o.BaseEndpoint = aws.String(srv.URL)
				o.Retryer = aws.NopRetryer{}
			})
			err := sqs.NewQueue(client, srv.URL+"/000000000000/q").Send(t.Context(), jobBody(uuid.NewString(), uuid.NewString()), uuid.NewString())
			if err == nil {
				t.Fatal("dispatch succeeded against an error response")
			}
			if got := domain.KindOf(err); got != tt.want {
				t.Errorf("kind = %v, want %v (err %v)", got, tt.want, err)
			}
		})
	}
}

// The SDK's own retry quota running out is overloaded too; it never reaches the wire.
func TestDispatchRetryQuota(t *testing.T) {
	err := sqs.NewQueue(senderFunc(func() error {
		return ratelimit.QuotaExceededError{Available: 0, Requested: 5}
	}), "https://sqs.example/000000000000/q").Send(t.Context(), jobBody(uuid.NewString(), uuid.NewString()), uuid.NewString())
	if k := domain.KindOf(err); k != domain.KindOverloaded {
		t.Errorf("kind = %v, want overloaded (err %v)", k, err)
	}
}

type senderFunc func() error

func (f senderFunc) SendMessage(context.Context, *awssqs.SendMessageInput, ...func(*awssqs.Options)) (*awssqs.SendMessageOutput, error) {
	return nil, f()
}
