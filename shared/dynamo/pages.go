package dynamo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
)

// MaxPage bounds the items one list page asks DynamoDB for.
const MaxPage = 1000

// maxBatchGet is BatchGetItem's limit on keys per request.
const maxBatchGet = 100

// listPage reads one page of a company list of gsi1, newest first: at most limit items (1 to
// MaxPage) after the cursor after, and the cursor of the next page ("" at the end). A cursor is
// the gsi1 sort key of the page's last item ("<created>#<id>"), from which the Query's exclusive
// start key is rebuilt (pk and sk follow from the id), so a page costs only the items it reads.
func (st *Store) listPage(ctx context.Context, list string, pkOf func(string) string, sk, after string, limit int) ([]map[string]types.AttributeValue, string, error) {
	limit = min(max(limit, 1), MaxPage)
	in := newestFirst(list)
	in.TableName = aws.String(st.table)
	if after != "" {
		i := strings.LastIndexByte(after, '#')
		if i < 0 || !domain.IsID(after[i+1:]) {
			return nil, "", domain.Errorf(domain.KindInvalid, "The page cursor is malformed")
		}
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			attrPK: stringAttr(pkOf(after[i+1:])), attrSK: stringAttr(sk),
			attrGSI1PK: stringAttr(list), attrGSI1SK: stringAttr(after),
		}
	}
	var items []map[string]types.AttributeValue
	for {
		in.Limit = aws.Int32(int32(limit - len(items)))
		out, err := st.db.Query(ctx, in)
		if err != nil {
			return nil, "", translate(err)
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			return items, "", nil // the list ends here
		}
		if len(items) >= limit {
			last, _ := items[len(items)-1][attrGSI1SK].(*types.AttributeValueMemberS)
			if last == nil {
				return nil, "", fmt.Errorf("item of %s without %s", list, attrGSI1SK)
			}
			return items, last.Value, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey // a 1 MB page ended before limit items
	}
}

// batchGet reads the items of ids (pk pkOf(id), sort key sk) that exist and calls each with
// every one found: one BatchGetItem per 100 ids, plus retries of unprocessed keys with backoff.
// projection (with its names) limits the attributes read; "" reads whole items. consistent asks
// for strongly consistent reads, which cost twice the read units.
func (st *Store) batchGet(ctx context.Context, ids []string, pkOf func(string) string, sk string, consistent bool, projection string, names map[string]string, each func(map[string]types.AttributeValue) error) error {
	var keys []map[string]types.AttributeValue
	seen := map[string]bool{}
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			keys = append(keys, itemKey(pkOf(id), sk))
		}
	}
	return st.batchGetKeys(ctx, keys, consistent, projection, names, each)
}

// batchGetKeys is batchGet over distinct keys of any shape.
func (st *Store) batchGetKeys(ctx context.Context, keys []map[string]types.AttributeValue, consistent bool, projection string, names map[string]string, each func(map[string]types.AttributeValue) error) error {
	for len(keys) > 0 {
		n := min(len(keys), maxBatchGet)
		pending := keys[:n]
		keys = keys[n:]
		err := backoff.Retry(ctx, unprocessedPolicy, func(int) (time.Duration, bool, error) {
			ka := types.KeysAndAttributes{Keys: pending, ConsistentRead: aws.Bool(consistent)}
			if projection != "" {
				ka.ProjectionExpression, ka.ExpressionAttributeNames = aws.String(projection), names
			}
			res, err := st.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{st.table: ka}})
			if err != nil {
				return 0, false, translate(err)
			}
			for _, it := range res.Responses[st.table] {
				if err := each(it); err != nil {
					return 0, false, err
				}
			}
			pending = res.UnprocessedKeys[st.table].Keys
			return 0, len(pending) > 0, unprocessed(len(pending))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// unprocessedPolicy paces the retries of what a batch request leaves unprocessed (DynamoDB
// throttling part of a batch): 50 ms doubling to 1 s, at most 8 retries, within the deadline.
var unprocessedPolicy = backoff.Policy{MaxRetries: 8, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Second}

// unprocessed is the error of n items a batch request left unprocessed (nil for none).
func unprocessed(n int) error {
	if n == 0 {
		return nil
	}
	return domain.Errorf(domain.KindOverloaded, "The table kept throttling (%d items left unprocessed); retry", n)
}
