// Package sqs is the SQS adapter: it hands queued executions to the worker function through a
// queue, and reads them back from a message body. SDK errors leave it as domain kinds.
package sqs

import (
	"context"
	"encoding/json"
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

// Sender is the part of *sqs.Client the dispatcher uses.
type Sender interface {
	SendMessage(ctx context.Context, in *awssqs.SendMessageInput, optFns ...func(*awssqs.Options)) (*awssqs.SendMessageOutput, error)
}

// Dispatcher sends each queued execution to the execution queue as one message; it implements
// sessions.Dispatcher.
type Dispatcher struct {
	client   Sender
	queueURL string
}

// NewDispatcher returns a dispatcher sending to the queue at queueURL.
func NewDispatcher(client Sender, queueURL string) *Dispatcher {
	return &Dispatcher{client: client, queueURL: queueURL}
}

// Dispatch sends the job {"session_id","execution_id"}. On a FIFO queue the session is the
// message group, so one session's executions run in order, and the execution id deduplicates.
func (d *Dispatcher) Dispatch(ctx context.Context, sessionID, executionID string) error {
	body, err := json.Marshal(job{SessionID: sessionID, ExecutionID: executionID})
	if err != nil {
		return fmt.Errorf("encode job: %w", err)
	}
	in := &awssqs.SendMessageInput{QueueUrl: aws.String(d.queueURL), MessageBody: aws.String(string(body))}
	if strings.HasSuffix(d.queueURL, ".fifo") {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(sessionID), aws.String(executionID)
	}
	if _, err := d.client.SendMessage(ctx, in); err != nil {
		return translate(fmt.Errorf("send execution %s to queue: %w", executionID, err))
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
