package dynamo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// The watchdog's list is a sparse part of gsi1: an execution item written queued or running by
// SwapExecution carries
//
//	gsi1pk = "WATCH#<shard>"                          (shard: of the execution id, 0..watchShards-1)
//	gsi1sk = "<due time>#<status>#<session id>#<execution id>"
//
// and every other write of it (PutExecution, Commit, CancelQueued, a SwapExecution to a final
// status) replaces the whole item without them: an execution leaves the list in the write that
// ends it, with no call of its own. The watchdog reads what is due with one Query per shard
// (DueExecutions), never a Scan. The shards spread the list's writes over watchShards index
// partitions.
const (
	watchPrefix = "WATCH#"
	watchShards = 4
)

func watchPK(shard int) string { return watchPrefix + strconv.Itoa(shard) }

func watchShard(execID string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(execID)) // a hash never fails to write
	return int(h.Sum32() % watchShards)
}

func watchSK(due time.Time, status, sessionID, execID string) string {
	return sortTime(due) + "#" + status + "#" + sessionID + "#" + execID
}

// parseWatchSK reads a watch sort key back; ok is false for any other.
func parseWatchSK(sk string) (domain.Watched, bool) {
	f := strings.Split(sk, "#")
	if len(f) != 4 {
		return domain.Watched{}, false
	}
	due, err := time.Parse(time.RFC3339Nano, f[0])
	if err != nil {
		return domain.Watched{}, false
	}
	return domain.Watched{Due: due, Status: f[1], SessionID: f[2], ExecutionID: f[3]}, true
}

// watching says whether an execution of this status is kept on the list.
func watching(status string) bool { return status == domain.ExecQueued || status == domain.ExecRunning }

// SwapExecution writes e only while the stored execution's status is from ("": while there is
// none), in one conditional PutItem; otherwise it writes nothing and is a KindConflict error. A
// queued or running e is put on the watchdog's list, due at due; any other leaves it.
func (st *Store) SwapExecution(ctx context.Context, e *domain.Execution, from string, due time.Time) error {
	it, err := executionItem(e.SessionID, e)
	if err != nil {
		return err
	}
	if watching(e.Status) {
		it[attrGSI1PK] = stringAttr(watchPK(watchShard(e.ID)))
		it[attrGSI1SK] = stringAttr(watchSK(due, e.Status, e.SessionID, e.ID))
	}
	in := &dynamodb.PutItemInput{Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}
	if from != "" {
		// A record from before the status attribute was kept is read in its data (as
		// CancelQueued does).
		in.ConditionExpression = aws.String("#s = :f OR (attribute_not_exists(#s) AND contains(#d, :fj))")
		in.ExpressionAttributeNames = map[string]string{"#s": attrStatus, "#d": attrData}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":f": stringAttr(from), ":fj": stringAttr(`"status":"` + from + `"`)}
	}
	err = st.put(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if from == "" {
			return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s exists", e.ID), Err: err}
		}
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s is no longer %s", e.ID, from), Err: err}
	}
	return translate(err)
}

// Postpone moves a listed execution's due time to due (one UpdateItem of its index keys), only
// while it is still listed with status; otherwise it is a KindConflict error.
func (st *Store) Postpone(ctx context.Context, w domain.Watched, due time.Time) error {
	_, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(st.table),
		Key:                      itemKey(sessionPK(w.SessionID), execPrefix+w.ExecutionID),
		UpdateExpression:         aws.String("SET #sk = :new"),
		ConditionExpression:      aws.String("#pk = :pk AND #s = :st"),
		ExpressionAttributeNames: map[string]string{"#pk": attrGSI1PK, "#sk": attrGSI1SK, "#s": attrStatus},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":new": stringAttr(watchSK(due, w.Status, w.SessionID, w.ExecutionID)),
			":pk":  stringAttr(watchPK(watchShard(w.ExecutionID))), ":st": stringAttr(w.Status)},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s is no longer %s", w.ExecutionID, w.Status), Err: err}
	}
	return translate(err)
}

// WatchedExecution reads one execution (one GetItem, strongly consistent) with its due time on
// the watchdog's list; zero when it is not on it.
func (st *Store) WatchedExecution(ctx context.Context, sessionID, id string) (*domain.Execution, time.Time, error) {
	it, err := st.getItem(ctx, &dynamodb.GetItemInput{Key: itemKey(sessionPK(sessionID), execPrefix+id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, time.Time{}, err
	}
	var r executionRecord
	if err := decode(it, &r); err != nil {
		return nil, time.Time{}, err
	}
	var due time.Time
	if sk, ok := it[attrGSI1SK].(*types.AttributeValueMemberS); ok {
		if w, ok := parseWatchSK(sk.Value); ok {
			due = w.Due
		}
	}
	return r.execution(), due, nil
}

// DueExecutions returns up to limit listed executions whose due time is before now, the
// earliest of each shard first: one Query of gsi1 per shard, reading the index keys only.
func (st *Store) DueExecutions(ctx context.Context, now time.Time, limit int) ([]domain.Watched, error) {
	var out []domain.Watched
	for shard := range watchShards {
		if len(out) >= limit {
			break
		}
		p := dynamodb.NewQueryPaginator(st.db, &dynamodb.QueryInput{
			TableName:                aws.String(st.table),
			IndexName:                aws.String(indexGSI1),
			KeyConditionExpression:   aws.String("#pk = :p AND #sk < :now"),
			ProjectionExpression:     aws.String("#sk"),
			ExpressionAttributeNames: map[string]string{"#pk": attrGSI1PK, "#sk": attrGSI1SK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(watchPK(shard)),
				":now": stringAttr(sortTime(now))},
			Limit: aws.Int32(int32(min(limit, 100))),
		})
		for p.HasMorePages() && len(out) < limit {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("executions due on %s: %w", watchPK(shard), translate(err))
			}
			for _, it := range page.Items {
				sk, _ := it[attrGSI1SK].(*types.AttributeValueMemberS)
				if sk == nil {
					continue
				}
				if w, ok := parseWatchSK(sk.Value); ok && len(out) < limit {
					out = append(out, w)
				}
			}
		}
	}
	return out, nil
}

// SessionLease reads a session with its lease (one strongly consistent GetItem): what a worker
// reads before it takes a queued execution, so that it leaves one whose session is busy queued.
func (st *Store) SessionLease(ctx context.Context, id string) (*domain.Session, domain.Lease, error) {
	it, err := st.getItem(ctx, &dynamodb.GetItemInput{Key: itemKey(sessionPK(id), sessionSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, domain.Lease{}, err
	}
	var r sessionRecord
	if err := decode(it, &r); err != nil {
		return nil, domain.Lease{}, err
	}
	return r.session(), leaseIn(it), nil
}

// leaseIn reads the lease attributes of a session item.
func leaseIn(it map[string]types.AttributeValue) domain.Lease {
	var l domain.Lease
	if n, ok := it["lease_until"].(*types.AttributeValueMemberN); ok {
		if ms, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			l.Until = time.UnixMilli(ms).UTC()
		}
	}
	if x, ok := it[attrLeaseExec].(*types.AttributeValueMemberS); ok {
		l.ExecutionID = x.Value
	}
	return l
}

// LeaseOf reads a session's lease (one strongly consistent GetItem of its lease attributes);
// a session that does not exist is domain.ErrNotFound.
func (st *Store) LeaseOf(ctx context.Context, sessionID string) (domain.Lease, error) {
	it, err := st.getItem(ctx, &dynamodb.GetItemInput{
		Key: itemKey(sessionPK(sessionID), sessionSK), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#pk, lease_until, #x"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#x": attrLeaseExec},
	})
	if err != nil {
		return domain.Lease{}, err
	}
	return leaseIn(it), nil
}
