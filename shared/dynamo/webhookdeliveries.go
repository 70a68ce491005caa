package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// A webhook's deliveries share one partition, CO#<company>#WH#<webhook id>; their ids begin
// with the event's time, so a Query backwards reads them newest first. The attempts are a list
// attribute that each attempt appends to (one UpdateItem), beside the record in data. Items
// expire DeliveryTTL after their creation.
//
//	delivery: pk CO#<company>#WH#<webhook>  sk D#<id>  data, status, attempts [JSON …], ttl

func webhookDeliveries(company, webhookID string) string { return "CO#" + company + "#WH#" + webhookID }
func deliverySK(id string) string                        { return "D#" + id }

// DeliveryTTL is how long a delivery and its attempts are kept.
const DeliveryTTL = 30 * 24 * time.Hour

const (
	attrStatus   = "status"
	attrAttempts = "attempts"
)

// deliveryRecord is the stored form of a delivery (its status and attempts are attributes of
// their own, which attempts update).
type deliveryRecord struct {
	ID        string    `json:"id"`
	WebhookID string    `json:"webhook_id"`
	Company   string    `json:"company"`
	EventType string    `json:"event_type"`
	Payload   string    `json:"payload"`
	CreatedAt time.Time `json:"created_at"`
}

// attemptRecord is the stored form of an attempt.
type attemptRecord struct {
	At          time.Time  `json:"at"`
	StatusCode  int        `json:"status_code,omitempty"`
	DurationMS  int64      `json:"duration_ms"`
	Error       string     `json:"error,omitempty"`
	NextRetryAt *time.Time `json:"next_retry_at,omitempty"`
}

func attemptAttr(a domain.WebhookAttempt) (types.AttributeValue, error) {
	b, err := json.Marshal(attemptRecord(a))
	if err != nil {
		return nil, err
	}
	return stringAttr(string(b)), nil
}

// CreateDelivery writes a new delivery (one conditional PutItem); a taken id is a conflict.
func (st *Store) CreateDelivery(ctx context.Context, d *domain.WebhookDelivery) error {
	it, err := item(webhookDeliveries(d.Company, d.WebhookID), deliverySK(d.ID), deliveryRecord{ID: d.ID, WebhookID: d.WebhookID,
		Company: d.Company, EventType: d.EventType, Payload: string(d.Payload), CreatedAt: d.CreatedAt})
	if err != nil {
		return err
	}
	it[attrStatus] = stringAttr(d.Status)
	attempts := make([]types.AttributeValue, 0, len(d.Attempts))
	for _, a := range d.Attempts {
		v, err := attemptAttr(a)
		if err != nil {
			return err
		}
		attempts = append(attempts, v)
	}
	it[attrAttempts] = &types.AttributeValueMemberL{Value: attempts}
	it[attrTTL] = numberAttr(d.CreatedAt.Add(DeliveryTTL).Unix())
	err = st.put(ctx, &dynamodb.PutItemInput{Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if domain.KindOf(translate(err)) == domain.KindConflict {
		return fmt.Errorf("create delivery %s: %w", d.ID, domain.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("create delivery %s: %w", d.ID, translate(err))
	}
	return nil
}

func decodeDelivery(it map[string]types.AttributeValue) (*domain.WebhookDelivery, error) {
	var r deliveryRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	d := &domain.WebhookDelivery{ID: r.ID, WebhookID: r.WebhookID, Company: r.Company, EventType: r.EventType,
		Payload: []byte(r.Payload), Attempts: []domain.WebhookAttempt{}, CreatedAt: r.CreatedAt}
	if s, ok := it[attrStatus].(*types.AttributeValueMemberS); ok {
		d.Status = s.Value
	}
	if l, ok := it[attrAttempts].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			s, ok := v.(*types.AttributeValueMemberS)
			if !ok {
				continue
			}
			var a attemptRecord
			if err := json.Unmarshal([]byte(s.Value), &a); err != nil {
				return nil, fmt.Errorf("decode attempt of %s: %w", r.ID, err)
			}
			d.Attempts = append(d.Attempts, domain.WebhookAttempt(a))
		}
	}
	return d, nil
}

// GetDelivery reads one delivery (one GetItem).
func (st *Store) GetDelivery(ctx context.Context, company, webhookID, id string) (*domain.WebhookDelivery, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table),
		Key: itemKey(webhookDeliveries(company, webhookID), deliverySK(id)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get delivery %s: %w", id, translate(err))
	}
	if out.Item == nil {
		return nil, domain.Errorf(domain.KindNotFound, "delivery %s not found", id)
	}
	return decodeDelivery(out.Item)
}

// AddAttempt appends an attempt and sets the status (one UpdateItem on an existing delivery).
func (st *Store) AddAttempt(ctx context.Context, company, webhookID, id string, a domain.WebhookAttempt, status string) error {
	v, err := attemptAttr(a)
	if err != nil {
		return err
	}
	_, err = st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.table),
		Key:                       itemKey(webhookDeliveries(company, webhookID), deliverySK(id)),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		UpdateExpression:          aws.String("SET #a = list_append(if_not_exists(#a, :none), :a), #s = :s"),
		ExpressionAttributeNames:  map[string]string{"#a": attrAttempts, "#s": attrStatus},
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberL{Value: []types.AttributeValue{v}}, ":none": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}, ":s": stringAttr(status)},
	})
	if domain.KindOf(translate(err)) == domain.KindConflict {
		return domain.Errorf(domain.KindNotFound, "delivery %s not found", id)
	}
	if err != nil {
		return fmt.Errorf("add attempt to %s: %w", id, translate(err))
	}
	return nil
}

// ListDeliveries reads a page of a webhook's deliveries newest first: one Query backwards of
// offset+limit+1 items (deliveries expire after DeliveryTTL, which bounds the offsets).
func (st *Store) ListDeliveries(ctx context.Context, company, webhookID string, offset, limit int) ([]*domain.WebhookDelivery, bool, error) {
	in := &dynamodb.QueryInput{TableName: aws.String(st.table), ScanIndexForward: aws.Bool(false),
		KeyConditionExpression: aws.String("pk = :p AND begins_with(sk, :s)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": stringAttr(webhookDeliveries(company, webhookID)), ":s": stringAttr("D#"),
		},
		Limit: aws.Int32(int32(min(offset+limit+1, 1000)))}
	out, more, err := pageOf(ctx, dynamodb.NewQueryPaginator(st.db, in), offset, limit, decodeDelivery)
	if err != nil {
		return nil, false, fmt.Errorf("list deliveries of %s: %w", webhookID, err)
	}
	return out, more, nil
}
