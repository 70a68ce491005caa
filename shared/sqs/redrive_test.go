package sqs_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sqs"
)

// receiveOne long-polls url for up to within; it returns the message (not deleted) and whether
// one came.
func receiveOne(t *testing.T, c *awssqs.Client, url string, within time.Duration) (types.Message, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	for ctx.Err() == nil {
		out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 1, WaitTimeSeconds: 1})
		if err != nil {
			break
		}
		if len(out.Messages) == 1 {
			return out.Messages[0], true
		}
	}
	return types.Message{}, false
}

// On the execution queue of template.yaml (visibility timeout 960 s), a message given back with
// After(2 s) is received again about two seconds later; one given back without it is not
// received again within that time.
func TestRedriveAfter(t *testing.T) {
	env := localstack.NewTestEnv(t)
	url := executionQueue(t, env)
	c := env.SQS()
	r := sqs.NewRedrive(c, url)
	if r.QueueURL() != url {
		t.Errorf("QueueURL = %s, want %s", r.QueueURL(), url)
	}
	q := sqs.NewQueue(c, url)
	if err := q.Send(t.Context(), jobBody(uuid.NewString(), uuid.NewString()), "g"); err != nil {
		t.Fatal(err)
	}
	m, ok := receiveOne(t, c, url, 5*time.Second)
	if !ok {
		t.Fatal("nothing received")
	}
	given := time.Now()
	if err := r.After(t.Context(), aws.ToString(m.ReceiptHandle), 1500*time.Millisecond); err != nil { // rounded up to 2 s
		t.Fatal(err)
	}
	// It comes back within a generous 30 s (the queue's own timeout is 960 s), and not before the
	// delay given.
	again, ok := receiveOne(t, c, url, 30*time.Second)
	took := time.Since(given)
	if !ok || aws.ToString(again.MessageId) != aws.ToString(m.MessageId) {
		t.Fatalf("the message did not come back within %v", took)
	}
	if took < 1500*time.Millisecond {
		t.Errorf("the message came back after %v, before the 1.5 s given", took)
	}

	// Not given back: it stays hidden for the queue's own timeout.
	if _, ok := receiveOne(t, c, url, 4*time.Second); ok {
		t.Error("a message received without After came back within 4 s; the queue's visibility timeout is 960 s")
	}
}

// A receipt handle the queue does not know is an internal error naming the queue.
func TestRedriveUnknownHandle(t *testing.T) {
	env := localstack.NewTestEnv(t)
	url := executionQueue(t, env)
	err := sqs.NewRedrive(env.SQS(), url).After(t.Context(), "not-a-handle", time.Second)
	if err == nil {
		t.Fatal("After accepted an unknown receipt handle")
	}
	if k := domain.KindOf(err); k != domain.KindInternal {
		t.Errorf("kind = %v, want internal (err %v)", k, err)
	}
}

// The visibility asked for is whole seconds within what SQS takes (0 to 12 hours).
func TestRedriveSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int32
	}{
		{0, 0}, {-time.Second, 0}, {time.Millisecond, 1}, {2 * time.Second, 2}, {2500 * time.Millisecond, 3},
		{24 * time.Hour, 43200},
	}
	for _, tt := range tests {
		var got int32 = -1
		c := changerFunc(func(in *awssqs.ChangeMessageVisibilityInput) { got = in.VisibilityTimeout })
		if err := sqs.NewRedrive(c, "u").After(t.Context(), "h", tt.d); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("After(%v) asked %d s, want %d", tt.d, got, tt.want)
		}
	}
}

type changerFunc func(*awssqs.ChangeMessageVisibilityInput)

func (f changerFunc) ChangeMessageVisibility(_ context.Context, in *awssqs.ChangeMessageVisibilityInput, _ ...func(*awssqs.Options)) (*awssqs.ChangeMessageVisibilityOutput, error) {
	f(in)
	return &awssqs.ChangeMessageVisibilityOutput{}, nil
}
