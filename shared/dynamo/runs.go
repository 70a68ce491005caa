package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// A run's lease adds lease_exec to its session item besides lease_id and lease_until (outside
// the data attribute; it goes when the lease is released or the run commits, as Commit removes
// the lease's attributes): the execution the lease runs. AcquireRun sets it in the UpdateItem
// that takes the lease, so a cancel request (and the watchdog, which looks for leases whose
// lease_until has passed) can name the run without another write. lease_until keeps one
// meaning throughout: once now is past it, the holder is dead (a supervised run moves it
// forward with ExtendLease while it runs).
//
// A cancel request is a small item of its own in the session's partition, keyed by the lease it
// stops (sk "C#<lease id>"): the supervisor's look for it is a GetItem of that item alone, half a
// read unit however large the session item is, and a lease id is never taken twice, so a mark
// cannot stop a later run (a paused execution resumed under a new lease, say). It expires by the
// table's TTL after a day and goes with the session's partition.
const (
	attrLeaseExec = "lease_exec"
	cancelPrefix  = "C#"
	cancelTTL     = 24 * time.Hour
)

// AcquireRun is AcquireSession for a run of execution execID: the same UpdateItem records
// execID as the lease's execution (lease_exec).
func (st *Store) AcquireRun(ctx context.Context, p domain.Principal, id, leaseID, execID string, until, now time.Time) (*domain.Session, error) {
	if len(execID) > maxLeaseID {
		return nil, fmt.Errorf("execution id of %d bytes, more than %d", len(execID), maxLeaseID)
	}
	return st.acquire(ctx, p, id, leaseID, execID, until, now)
}

// ExtendLease moves the lease's end to until (a supervised run's heartbeat) and, when execID
// is not empty, records it as the lease's execution (a resumed run learns its execution only
// from the session it acquired). It is a KindConflict error when leaseID no longer holds the
// session (the lease expired and was taken, or the session is gone).
func (st *Store) ExtendLease(ctx context.Context, id, leaseID, execID string, until time.Time) error {
	if len(execID) > maxLeaseID {
		return fmt.Errorf("execution id of %d bytes, more than %d", len(execID), maxLeaseID)
	}
	update := "SET lease_until = :u"
	values := map[string]types.AttributeValue{":l": stringAttr(leaseID), ":u": numberAttr(until.UnixMilli())}
	if execID != "" {
		update += ", " + attrLeaseExec + " = :x"
		values[":x"] = stringAttr(execID)
	}
	_, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(st.table),
		Key:                       itemKey(sessionPK(id), sessionSK),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("lease_id = :l"),
		ExpressionAttributeValues: values,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return &domain.Error{Kind: domain.KindConflict, Message: "The session's lease was lost", Err: err}
	}
	return translate(err)
}

// RequestCancel marks the session's run of execID to be cancelled, only while a live lease runs
// execID: a strongly consistent GetItem of the lease's id, then a transaction that checks the
// lease is still that one and puts the mark for it. Otherwise (no run of execID holds the
// session, or its holder died) it is domain.ErrNotFound and nothing is written.
func (st *Store) RequestCancel(ctx context.Context, id, execID string, now time.Time) error {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(st.table), Key: itemKey(sessionPK(id), sessionSK), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("lease_id"),
	})
	if err != nil {
		return translate(err)
	}
	lease, ok := out.Item["lease_id"].(*types.AttributeValueMemberS)
	if !ok {
		return domain.ErrNotFound
	}
	mark := itemKey(sessionPK(id), cancelPrefix+lease.Value)
	mark[attrLeaseExec] = stringAttr(execID)
	mark[attrTTL] = numberAttr(now.Add(cancelTTL).Unix())
	err = st.transact(ctx, []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(st.table), Key: itemKey(sessionPK(id), sessionSK),
			ConditionExpression:      aws.String("lease_id = :l AND #e = :x AND lease_until > :now"),
			ExpressionAttributeNames: map[string]string{"#e": attrLeaseExec},
			ExpressionAttributeValues: map[string]types.AttributeValue{":l": lease, ":x": stringAttr(execID),
				":now": numberAttr(now.UnixMilli())},
		}},
		{Put: &types.Put{TableName: aws.String(st.table), Item: mark}},
	})
	if cancelledAt(err, 0) {
		return domain.ErrNotFound
	}
	return translate(err)
}

// CancelRequested reports whether a cancel of the run under leaseID was asked for: one
// eventually consistent GetItem of its mark's small item (half a read unit), made by a run's
// supervisor once a second. A mark written just before may be missed once; the next look sees
// it.
func (st *Store) CancelRequested(ctx context.Context, id, leaseID string) (bool, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:            aws.String(st.table),
		Key:                  itemKey(sessionPK(id), cancelPrefix+leaseID),
		ProjectionExpression: aws.String(attrPK),
	})
	if err != nil {
		return false, translate(err)
	}
	return out.Item != nil, nil
}

// CancelQueued records e (status cancelled) only if its stored record is still queued (a
// conditional PutItem); a record the worker took meanwhile (running) or that finished is a
// KindConflict error and is left as it is.
func (st *Store) CancelQueued(ctx context.Context, e *domain.Execution) error {
	it, err := executionItem(e.SessionID, e)
	if err != nil {
		return err
	}
	err = st.put(ctx, &dynamodb.PutItemInput{Item: it,
		// A record from before the status attribute was kept is read in its data, whose JSON
		// holds "status":"queued" when queued (or, in such an old record alone, when its
		// request's inputs hold that pair).
		ConditionExpression:       aws.String("#s = :q OR (attribute_not_exists(#s) AND contains(#d, :qj))"),
		ExpressionAttributeNames:  map[string]string{"#s": attrStatus, "#d": attrData},
		ExpressionAttributeValues: map[string]types.AttributeValue{":q": stringAttr(domain.ExecQueued), ":qj": stringAttr(`"status":"queued"`)},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s is no longer queued", e.ID), Err: err}
	}
	return translate(err)
}

// activeExecution is the execution a session item's lease runs, when the lease is live at now.
func activeExecution(it map[string]types.AttributeValue, now time.Time) string {
	x, ok := it[attrLeaseExec].(*types.AttributeValueMemberS)
	if !ok {
		return ""
	}
	n, ok := it["lease_until"].(*types.AttributeValueMemberN)
	if !ok {
		return ""
	}
	until, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || until < now.UnixMilli() {
		return ""
	}
	return x.Value
}
