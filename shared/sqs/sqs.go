// Package sqs is the SQS adapter: it sends the features' jobs (opaque message bodies) to their
// queues, and sets when a received message is delivered again (Redrive). SDK errors leave it as
// domain kinds.
package sqs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// NewClient builds the SQS client, pointed at endpoint (the local stand-in) when it is set. It
// lives here rather than in platform, which every function links, so that only the functions
// that send to a queue link the SQS client.
func NewClient(cfg aws.Config, endpoint string) *awssqs.Client {
	return awssqs.NewFromConfig(cfg, func(o *awssqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// Sender is the part of *sqs.Client the dispatcher uses.
type Sender interface {
	SendMessage(ctx context.Context, in *awssqs.SendMessageInput, optFns ...func(*awssqs.Options)) (*awssqs.SendMessageOutput, error)
}

// Queue sends message bodies to one queue. It knows nothing of what they mean: the features that
// own the jobs encode and parse them (it implements sessions.Queue and knowledge.Queue).
type Queue struct {
	client   Sender
	queueURL string
}

// NewQueue returns a queue sending to queueURL.
func NewQueue(client Sender, queueURL string) *Queue {
	return &Queue{client: client, queueURL: queueURL}
}

// Send sends one message. On a FIFO queue group is the message group (so one group's messages
// run in order) and the body's hash deduplicates; a standard queue ignores both.
func (q *Queue) Send(ctx context.Context, body, group string) error {
	in := &awssqs.SendMessageInput{QueueUrl: aws.String(q.queueURL), MessageBody: aws.String(body)}
	if strings.HasSuffix(q.queueURL, ".fifo") {
		sum := sha256.Sum256([]byte(body))
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(hex.EncodeToString(sum[:]))
	}
	if _, err := q.client.SendMessage(ctx, in); err != nil {
		return translate(fmt.Errorf("send to queue %s: %w", q.queueURL, err))
	}
	return nil
}

// translate turns SDK errors into domain kinds: throttling (by the service, by KMS, by the SDK's
// own retry quota) and too many in-flight messages are overloaded; the rest stays internal.
func translate(err error) error {
	var (
		throttled *types.RequestThrottled
		kms       *types.KmsThrottled
		overLimit *types.OverLimit
		quota     ratelimit.QuotaExceededError
	)
	switch {
	case errors.As(err, &throttled), errors.As(err, &kms), errors.As(err, &overLimit), errors.As(err, &quota),
		retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) == aws.TrueTernary:
		return &domain.Error{Kind: domain.KindOverloaded, Message: domain.ErrOverloaded.Message, Err: err}
	}
	return err
}
