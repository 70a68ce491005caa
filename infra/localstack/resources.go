package localstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/agentorch/agentorch/infra/sam"
)

// waitTimeout bounds the wait for a new table to turn ACTIVE (immediate in DynamoDB Local).
const waitTimeout = 30 * time.Second

// Resources are the physical names of what CreateResources made, by logical id.
type Resources struct {
	Tables  map[string]string // table name
	Queues  map[string]string // queue URL
	Buckets map[string]string // bucket name
}

// CreateResources creates in the stand-ins every table, queue and bucket tmpl declares, named by
// logical id plus suffix (buckets lower-cased, as S3 demands). It is idempotent: what already
// exists is reused and brought in line with the template where the stand-ins allow.
//
// Not reproduced locally: bucket lifecycle rules (gofakes3 has none), encryption settings and
// point-in-time recovery, none of which the code can observe.
func CreateResources(ctx context.Context, awsCfg aws.Config, ep Endpoints, tmpl *sam.Template, suffix string) (*Resources, error) {
	res := &Resources{Tables: map[string]string{}, Queues: map[string]string{}, Buckets: map[string]string{}}
	db := dynamoClient(awsCfg, ep.DynamoDB, false)
	for _, t := range tmpl.Tables() {
		name := t.LogicalID + suffix
		if err := createTable(ctx, db, name, t); err != nil {
			return nil, fmt.Errorf("create table %s: %w", name, err)
		}
		res.Tables[t.LogicalID] = name
	}
	q := sqsClient(awsCfg, ep.SQS, false)
	queues, err := queueOrder(tmpl.Queues())
	if err != nil {
		return nil, err
	}
	arns := map[string]string{}
	for _, qu := range queues {
		name := qu.LogicalID + suffix
		if qu.FIFO {
			name += ".fifo"
		}
		url, arn, err := createQueue(ctx, q, name, qu, arns)
		if err != nil {
			return nil, fmt.Errorf("create queue %s: %w", name, err)
		}
		res.Queues[qu.LogicalID], arns[qu.LogicalID] = url, arn
	}
	s3c := s3Client(awsCfg, ep.S3)
	for _, b := range tmpl.Buckets() {
		name := strings.ToLower(b.LogicalID + suffix)
		if err := createBucket(ctx, s3c, name); err != nil {
			return nil, fmt.Errorf("create bucket %s: %w", name, err)
		}
		res.Buckets[b.LogicalID] = name
	}
	return res, nil
}

func createTable(ctx context.Context, db *dynamodb.Client, name string, t sam.Table) error {
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: dbtypes.BillingModePayPerRequest,
		KeySchema:   keySchema(t.HashKey, t.RangeKey),
	}
	attrs := make([]string, 0, len(t.Attributes))
	for a := range t.Attributes {
		attrs = append(attrs, a)
	}
	slices.Sort(attrs)
	for _, a := range attrs {
		in.AttributeDefinitions = append(in.AttributeDefinitions, dbtypes.AttributeDefinition{
			AttributeName: aws.String(a), AttributeType: dbtypes.ScalarAttributeType(t.Attributes[a]),
		})
	}
	for _, g := range t.GSIs {
		p := dbtypes.ProjectionType(g.Projection)
		if p == "" {
			p = dbtypes.ProjectionTypeAll
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, dbtypes.GlobalSecondaryIndex{
			IndexName:  aws.String(g.Name),
			KeySchema:  keySchema(g.HashKey, g.RangeKey),
			Projection: &dbtypes.Projection{ProjectionType: p},
		})
	}
	_, err := db.CreateTable(ctx, in)
	var inUse *dbtypes.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return err
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, waitTimeout); err != nil {
		return err
	}
	if t.TTLAttribute == "" {
		return nil
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		return fmt.Errorf("describe ttl: %w", err)
	}
	if d := ttl.TimeToLiveDescription; d != nil && d.TimeToLiveStatus == dbtypes.TimeToLiveStatusEnabled && aws.ToString(d.AttributeName) == t.TTLAttribute {
		return nil
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(name),
		TimeToLiveSpecification: &dbtypes.TimeToLiveSpecification{AttributeName: aws.String(t.TTLAttribute), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("enable ttl on %s: %w", t.TTLAttribute, err)
	}
	return nil
}

func keySchema(hash, rng string) []dbtypes.KeySchemaElement {
	ks := []dbtypes.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: dbtypes.KeyTypeHash}}
	if rng != "" {
		ks = append(ks, dbtypes.KeySchemaElement{AttributeName: aws.String(rng), KeyType: dbtypes.KeyTypeRange})
	}
	return ks
}

// queueOrder puts every dead-letter queue before the queues that redrive to it.
func queueOrder(qs []sam.Queue) ([]sam.Queue, error) {
	byID := map[string]sam.Queue{}
	for _, q := range qs {
		byID[q.LogicalID] = q
	}
	var out []sam.Queue
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(q sam.Queue) error
	visit = func(q sam.Queue) error {
		switch state[q.LogicalID] {
		case 1:
			return fmt.Errorf("queue %s: dead-letter targets form a cycle", q.LogicalID)
		case 2:
			return nil
		}
		state[q.LogicalID] = 1
		if q.DeadLetterTarget != "" {
			dlq, ok := byID[q.DeadLetterTarget]
			if !ok {
				return fmt.Errorf("queue %s: dead-letter target %s is not a queue of the template", q.LogicalID, q.DeadLetterTarget)
			}
			if err := visit(dlq); err != nil {
				return err
			}
		}
		state[q.LogicalID] = 2
		out = append(out, q)
		return nil
	}
	for _, q := range qs {
		if err := visit(q); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// createQueue creates (or updates) a queue and returns its URL and ARN; arns holds the ARNs of
// the queues created so far, by logical id.
func createQueue(ctx context.Context, q *sqs.Client, name string, qu sam.Queue, arns map[string]string) (string, string, error) {
	attrs := map[string]string{}
	if qu.VisibilityTimeout > 0 {
		attrs[string(sqstypes.QueueAttributeNameVisibilityTimeout)] = strconv.Itoa(qu.VisibilityTimeout)
	}
	if qu.FIFO {
		attrs[string(sqstypes.QueueAttributeNameFifoQueue)] = "true"
	}
	if qu.DeadLetterTarget != "" {
		policy, err := json.Marshal(map[string]any{"deadLetterTargetArn": arns[qu.DeadLetterTarget], "maxReceiveCount": qu.MaxReceiveCount})
		if err != nil {
			return "", "", err
		}
		attrs[string(sqstypes.QueueAttributeNameRedrivePolicy)] = string(policy)
	}
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	var url string
	var exists *sqstypes.QueueNameExists
	switch {
	case err == nil:
		url = aws.ToString(out.QueueUrl)
	case errors.As(err, &exists):
		// Created before with other attributes: bring them in line with the template.
		got, gerr := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if gerr != nil {
			return "", "", gerr
		}
		url = aws.ToString(got.QueueUrl)
		delete(attrs, string(sqstypes.QueueAttributeNameFifoQueue)) // immutable
		if _, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: attrs}); err != nil {
			return "", "", err
		}
	default:
		return "", "", err
	}
	a, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", "", fmt.Errorf("queue arn: %w", err)
	}
	return url, a.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

func createBucket(ctx context.Context, c *s3.Client, name string) error {
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	var owned *s3types.BucketAlreadyOwnedByYou
	var taken *s3types.BucketAlreadyExists
	if err != nil && !errors.As(err, &owned) && !errors.As(err, &taken) {
		return err
	}
	return nil
}
