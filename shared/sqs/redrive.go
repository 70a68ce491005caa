package sqs

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
)

// maxVisibility is the longest visibility SQS accepts: 12 hours.
const maxVisibility = 12 * time.Hour

// VisibilityChanger is the part of *sqs.Client that sets when a received message comes back.
type VisibilityChanger interface {
	ChangeMessageVisibility(ctx context.Context, in *awssqs.ChangeMessageVisibilityInput, optFns ...func(*awssqs.Options)) (*awssqs.ChangeMessageVisibilityOutput, error)
}

// Redrive sets when the received messages of one queue are delivered again: a consumer that
// gives a message back for a transient reason brings it back after a short delay instead of the
// queue's whole visibility timeout.
type Redrive struct {
	client   VisibilityChanger
	queueURL string
}

// NewRedrive returns the redrive of the queue at queueURL.
func NewRedrive(client VisibilityChanger, queueURL string) *Redrive {
	return &Redrive{client: client, queueURL: queueURL}
}

// QueueURL is the queue whose messages r redrives.
func (r *Redrive) QueueURL() string { return r.queueURL }

// After makes the in-flight message of receiptHandle visible again after d, rounded up to whole
// seconds and held to what SQS accepts (0 to 12 hours).
func (r *Redrive) After(ctx context.Context, receiptHandle string, d time.Duration) error {
	d = min(max(d, 0), maxVisibility)
	secs := int32((d + time.Second - 1) / time.Second)
	_, err := r.client.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(r.queueURL), ReceiptHandle: aws.String(receiptHandle), VisibilityTimeout: secs,
	})
	if err != nil {
		return translate(fmt.Errorf("change visibility on queue %s: %w", r.queueURL, err))
	}
	return nil
}
