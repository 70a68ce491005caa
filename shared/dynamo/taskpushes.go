package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// The push configs of one A2A task share a partition under its company, so that an execution's
// end finds them with one Query (in the delivery function, off the execute's path):
//
//	task push: pk CO#<company>#TP#<session id>.<execution id>  sk P#<config id>  data, ttl
//
// A config expires TaskPushTTL after it was set (DynamoDB's TTL removes it), so that the configs
// of tasks long ended do not pile up.

// TaskPushTTL is how long a push config is kept.
const TaskPushTTL = 30 * 24 * time.Hour

func taskPushes(company, sessionID, execID string) string {
	return "CO#" + company + "#TP#" + sessionID + "." + execID
}
func taskPushSK(id string) string { return "P#" + id }

// taskPushRecord is the stored form of a push config; token and credentials as the store is
// given them (sealed by webhooks.SealedPushes).
type taskPushRecord struct {
	ID          string    `json:"id"`
	Company     string    `json:"company"`
	Owner       string    `json:"owner"`
	SessionID   string    `json:"session_id"`
	ExecutionID string    `json:"execution_id"`
	URL         string    `json:"url"`
	Token       string    `json:"token,omitempty"`
	Schemes     []string  `json:"schemes,omitempty"`
	Credentials string    `json:"credentials,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// PutTaskPush writes a task's push config, replacing the one of the same id (one PutItem).
func (st *Store) PutTaskPush(ctx context.Context, p *domain.TaskPush) error {
	it, err := item(taskPushes(p.Company, p.SessionID, p.ExecutionID), taskPushSK(p.ID), taskPushRecord(*p))
	if err != nil {
		return err
	}
	it[attrTTL] = numberAttr(p.CreatedAt.Add(TaskPushTTL).Unix())
	if err := st.put(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.table), Item: it}); err != nil {
		return fmt.Errorf("put push config %s: %w", p.ID, err)
	}
	return nil
}

// GetTaskPush reads one push config of a task (one GetItem); another company's is not found.
func (st *Store) GetTaskPush(ctx context.Context, company, sessionID, execID, id string) (*domain.TaskPush, error) {
	return getDecoded(ctx, st, itemKey(taskPushes(company, sessionID, execID), taskPushSK(id)), "push config "+id, decodeTaskPush)
}

// ListTaskPushes reads every push config of a task (one Query).
func (st *Store) ListTaskPushes(ctx context.Context, company, sessionID, execID string) ([]*domain.TaskPush, error) {
	return queryDecoded(ctx, st, taskPushes(company, sessionID, execID), "P#", "push configs of "+sessionID+"."+execID, decodeTaskPush)
}

// DeleteTaskPush removes one push config of a task, if there is one (one DeleteItem).
func (st *Store) DeleteTaskPush(ctx context.Context, company, sessionID, execID, id string) error {
	_, err := st.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.table),
		Key: itemKey(taskPushes(company, sessionID, execID), taskPushSK(id))})
	if err != nil {
		return fmt.Errorf("delete push config %s: %w", id, translate(err))
	}
	return nil
}

func decodeTaskPush(it map[string]types.AttributeValue) (*domain.TaskPush, error) {
	var r taskPushRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	p := domain.TaskPush(r)
	return &p, nil
}
