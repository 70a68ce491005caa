package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// An Idempotency-Key's record is an item of its own, keyed by the company and a hash of the key
// (so keys of any characters spread over partitions): pk "IDEM#<company>#<sha256(key)>", sk
// "IDEM". Its state and fingerprint are attributes of their own, for the conditions of the claim;
// ttl lets DynamoDB delete it after domain.IdempotencyTTL (a record read past it counts as gone).
const idemSK = "IDEM"

func idemPK(company, key string) string {
	sum := sha256.Sum256([]byte(key))
	return "IDEM#" + company + "#" + hex.EncodeToString(sum[:])
}

// idemRecord is the stored form of an Idempotency-Key's record but its body, which is kept in a
// binary attribute of its own (in the JSON of data it would take a third more).
type idemRecord struct {
	Company     string    `json:"company"`
	Key         string    `json:"key"`
	Fingerprint string    `json:"fingerprint"`
	State       string    `json:"state"`
	Status      int       `json:"status,omitempty"`
	SessionID   string    `json:"session_id,omitempty"`
	ExecutionID string    `json:"execution_id,omitempty"`
	Streamed    bool      `json:"streamed,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

const attrBody = "body"

func newIdemRecord(r *domain.IdempotencyRecord) idemRecord {
	return idemRecord{Company: r.Company, Key: r.Key, Fingerprint: r.Fingerprint, State: r.State, Status: r.Status,
		SessionID: r.SessionID, ExecutionID: r.ExecutionID, Streamed: r.Streamed, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
}

func decodeIdem(it map[string]types.AttributeValue) (*domain.IdempotencyRecord, error) {
	var r idemRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	rec := &domain.IdempotencyRecord{Company: r.Company, Key: r.Key, Fingerprint: r.Fingerprint, State: r.State, Status: r.Status,
		SessionID: r.SessionID, ExecutionID: r.ExecutionID, Streamed: r.Streamed, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	if b, ok := it[attrBody].(*types.AttributeValueMemberB); ok {
		rec.Body = b.Value
	}
	return rec, nil
}

func idemItem(r *domain.IdempotencyRecord) (map[string]types.AttributeValue, error) {
	it, err := item(idemPK(r.Company, r.Key), idemSK, newIdemRecord(r))
	if err != nil {
		return nil, err
	}
	if r.Body != nil {
		it[attrBody] = &types.AttributeValueMemberB{Value: r.Body}
	}
	it["state"], it["fingerprint"] = stringAttr(r.State), stringAttr(r.Fingerprint)
	it["created_ms"] = numberAttr(r.CreatedAt.UnixMilli())
	it[attrTTL] = numberAttr(r.ExpiresAt.Unix())
	return it, nil
}

// ClaimIdempotencyKey records r (pending) unless the company's key has a live record, in one
// conditional PutItem; it then returns that record (nil once r is recorded). A record past its
// expiry counts as gone, and a pending one of the same fingerprint created before staleBefore (its
// request died unanswered) is claimed over.
func (st *Store) ClaimIdempotencyKey(ctx context.Context, r *domain.IdempotencyRecord, now, staleBefore time.Time) (*domain.IdempotencyRecord, error) {
	it, err := idemItem(r)
	if err != nil {
		return nil, err
	}
	err = st.put(ctx, &dynamodb.PutItemInput{Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(pk) OR #ttl < :now OR (#st = :pending AND #fp = :fp AND created_ms < :stale)"),
		ExpressionAttributeNames: map[string]string{"#ttl": attrTTL, "#st": "state", "#fp": "fingerprint"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": numberAttr(now.Unix()), ":pending": stringAttr(domain.KeyPending),
			":fp": stringAttr(r.Fingerprint), ":stale": numberAttr(staleBefore.UnixMilli())},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && len(ccf.Item) > 0 {
		return decodeIdem(ccf.Item)
	}
	return nil, translate(err)
}

// SettleIdempotencyKey records the answer of r's first request (one PutItem, only over its own
// pending record: a KindConflict error otherwise). A record too large for an item is a
// KindTooLarge error, written nowhere.
func (st *Store) SettleIdempotencyKey(ctx context.Context, r *domain.IdempotencyRecord) error {
	it, err := idemItem(r)
	if err != nil {
		return err
	}
	return translate(st.put(ctx, &dynamodb.PutItemInput{Item: it,
		ConditionExpression:       aws.String("#st = :pending AND #fp = :fp"),
		ExpressionAttributeNames:  map[string]string{"#st": "state", "#fp": "fingerprint"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": stringAttr(domain.KeyPending), ":fp": stringAttr(r.Fingerprint)},
	}))
}

// ReleaseIdempotencyKey deletes the company's pending record of key made for fingerprint (a
// request that failed, so that the key may be used again); any other record stays.
func (st *Store) ReleaseIdempotencyKey(ctx context.Context, company, key, fingerprint string) error {
	_, err := st.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.table), Key: itemKey(idemPK(company, key), idemSK),
		ConditionExpression:       aws.String("#st = :pending AND #fp = :fp"),
		ExpressionAttributeNames:  map[string]string{"#st": "state", "#fp": "fingerprint"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": stringAttr(domain.KeyPending), ":fp": stringAttr(fingerprint)},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return translate(err)
}
