package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// SessionExecutions pages through a session's executions in the order they were created
// (their sort key "X#<UUIDv7>"), skipping offset: one Query of the session's partition for a
// page whose items fit in DynamoDB's 1 MB (an execution with its events is at most 400 KB), and
// none of another session's, since they live under their session's key.
func (st *Store) SessionExecutions(ctx context.Context, sessionID string, limit, offset int) ([]*domain.Execution, bool, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(st.table),
		KeyConditionExpression:    aws.String("pk = :p AND begins_with(sk, :x)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(sessionPK(sessionID)), ":x": stringAttr(execPrefix)},
		// The page, the ones it skips and one more to tell whether more follow.
		Limit: aws.Int32(int32(min(offset+limit+1, 1<<20))),
	}
	return pageOf(ctx, dynamodb.NewQueryPaginator(st.db, in), offset, limit, func(it map[string]types.AttributeValue) (*domain.Execution, error) {
		var r executionRecord
		if err := decode(it, &r); err != nil {
			return nil, err
		}
		return r.execution(), nil
	})
}
