package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// A company's webhooks share one partition, CO#<company>#WH: an event's fan-out reads every
// webhook of its company with one Query, and a webhook is found by company and id with one
// GetItem (another company's id is absent from the caller's partition).
//
//	webhook: pk CO#<company>#WH  sk W#<id>  data, updated_at (optimistic lock)
//	count:   pk CO#<company>#WH  sk COUNT   webhooks (bounds the webhooks of a company)

func companyWebhooks(c string) string { return "CO#" + c + "#WH" }
func webhookSK(id string) string      { return "W#" + id }

const (
	attrWebhooks   = "webhooks"
	webhookCountSK = "COUNT"
)

// webhookRecord is the stored form of a webhook. Its secrets are stored as the store is given
// them: sealed ("sealed:<base64>", webhooks.Sealed) by the functions, whsec_… in the clear in
// records written before sealing.
type webhookRecord struct {
	ID             string    `json:"id"`
	Company        string    `json:"company"`
	CreatedBy      string    `json:"created_by"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Description    string    `json:"description,omitempty"`
	Enabled        bool      `json:"enabled"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
	Secret         string    `json:"secret"`
	PreviousSecret string    `json:"previous_secret,omitempty"`
	PreviousUntil  time.Time `json:"previous_until"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

func webhookItem(w *domain.Webhook) (map[string]types.AttributeValue, error) {
	r := webhookRecord{ID: w.ID, Company: w.Company, CreatedBy: w.CreatedBy, URL: w.URL, Events: w.Events,
		Description: w.Description, Enabled: w.Enabled, DisabledReason: w.DisabledReason, Secret: w.Secret,
		PreviousSecret: w.PreviousSecret, PreviousUntil: w.PreviousUntil, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	it, err := item(companyWebhooks(w.Company), webhookSK(w.ID), r)
	if err != nil {
		return nil, err
	}
	it[attrUpdatedAt] = stringAttr(sortTime(w.UpdatedAt))
	return it, nil
}

func decodeWebhook(it map[string]types.AttributeValue) (*domain.Webhook, error) {
	var r webhookRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	if r.Events == nil {
		r.Events = []string{}
	}
	return &domain.Webhook{ID: r.ID, Company: r.Company, CreatedBy: r.CreatedBy, URL: r.URL, Events: r.Events,
		Description: r.Description, Enabled: r.Enabled, DisabledReason: r.DisabledReason, Secret: r.Secret,
		PreviousSecret: r.PreviousSecret, PreviousUntil: r.PreviousUntil, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

// webhookCount changes a company's count of webhooks by delta; a rise needs the count below max.
func (st *Store) webhookCount(company string, delta, max int64) *types.Update {
	u := &types.Update{TableName: aws.String(st.table), Key: itemKey(companyWebhooks(company), webhookCountSK),
		UpdateExpression:          aws.String("ADD #n :d"),
		ExpressionAttributeNames:  map[string]string{"#n": attrWebhooks},
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": numberAttr(delta)}}
	if delta > 0 {
		u.ConditionExpression = aws.String("attribute_not_exists(#n) OR #n < :max")
		u.ExpressionAttributeValues[":max"] = numberAttr(max)
	}
	return u
}

// CreateWebhook writes the webhook and its company's count in one transaction; a company that
// has max webhooks already is domain.ErrWebhookLimit, a taken id a conflict, and both write
// nothing.
func (st *Store) CreateWebhook(ctx context.Context, w *domain.Webhook, max int) error {
	it, err := webhookItem(w)
	if err != nil {
		return err
	}
	err = st.transact(ctx, []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(st.table), Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: st.webhookCount(w.Company, 1, int64(max))},
	})
	switch {
	case err == nil:
		return nil
	case cancelledAt(err, 0):
		return fmt.Errorf("create webhook %s: %w", w.ID, domain.ErrConflict)
	case cancelledAt(err, 1):
		return fmt.Errorf("webhooks of %s: %w", w.Company, domain.ErrWebhookLimit)
	}
	return fmt.Errorf("create webhook %s: %w", w.ID, translate(err))
}

// GetWebhook reads one of a company's webhooks (one GetItem).
func (st *Store) GetWebhook(ctx context.Context, company, id string) (*domain.Webhook, error) {
	return getDecoded(ctx, st, itemKey(companyWebhooks(company), webhookSK(id)), "webhook "+id, decodeWebhook)
}

// ListWebhooks reads every webhook of a company: one Query (per 1 MB) of its partition.
func (st *Store) ListWebhooks(ctx context.Context, company string) ([]*domain.Webhook, error) {
	return queryDecoded(ctx, st, companyWebhooks(company), "W#", "webhooks of "+company, decodeWebhook)
}

// UpdateWebhook replaces prev by w if nobody wrote it since it was read (one PutItem).
func (st *Store) UpdateWebhook(ctx context.Context, w, prev *domain.Webhook) error {
	it, err := webhookItem(w)
	if err != nil {
		return err
	}
	what := "webhook " + w.ID
	if err := st.putUnchanged(ctx, it, "attribute_exists(pk) AND #u = :prev", prev.UpdatedAt); err != nil {
		return fmt.Errorf("update %s: %w", what, lostRace(err, what, "The webhook was changed concurrently; retry"))
	}
	return nil
}

// DeleteWebhook removes the webhook, if unchanged since read, and counts it out.
func (st *Store) DeleteWebhook(ctx context.Context, w *domain.Webhook) error {
	err := st.transact(ctx, []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(st.table), Key: itemKey(companyWebhooks(w.Company), webhookSK(w.ID)),
			ConditionExpression:                 aws.String("attribute_exists(pk) AND #u = :prev"),
			ExpressionAttributeNames:            map[string]string{"#u": attrUpdatedAt},
			ExpressionAttributeValues:           map[string]types.AttributeValue{":prev": stringAttr(sortTime(w.UpdatedAt))},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Update: st.webhookCount(w.Company, -1, 0)},
	})
	what := "webhook " + w.ID
	switch {
	case err == nil:
		return nil
	case cancelledAt(err, 0):
		return fmt.Errorf("delete %s: %w", what, raceLost(err, what))
	}
	return fmt.Errorf("delete %s: %w", what, translate(err))
}
