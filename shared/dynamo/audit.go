package dynamo

import (
	"context"
	"encoding/json"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// auditRecord is an audit entry as stored.
type auditRecord struct {
	ID         string    `json:"id"`
	Company    string    `json:"company"`
	ActorKeyID string    `json:"actor_key_id"`
	ViaToken   bool      `json:"via_token,omitempty"`
	Action     string    `json:"action"`
	TargetID   string    `json:"target_id"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// A company's entries share one partition, sorted by time: the whole list is one Query newest
// first, a time window a key condition on the sort key. gsi1 holds each action's entries in a
// partition of their own with the same sort key, so the action filter is one Query too and reads
// no entry of another action. The acting key is a FilterExpression on that same Query: DynamoDB
// drops the other keys' entries after reading them, so a page of one key's entries reads (and is
// billed for) the window's entries of every key up to it; the time window bounds that.
func companyAudit(c string) string               { return "CO#" + c + "#AUDIT" }
func companyAuditAction(c, action string) string { return "CO#" + c + "#AUDIT#" + action }
func auditSK(e *domain.AuditEntry) string        { return sortTime(e.CreatedAt) + "#" + e.ID }

// actorNeedle is how a record's JSON names its acting key: the field as encoding/json writes it.
func actorNeedle(keyID string) string {
	b, _ := json.Marshal(struct {
		ActorKeyID string `json:"actor_key_id"`
	}{keyID})
	return string(b[1 : len(b)-1])
}

// PutAuditEntry stores an entry (one PutItem) with its expiry in ttl, in epoch seconds, so that
// DynamoDB deletes it after audit.Retention.
func (st *Store) PutAuditEntry(ctx context.Context, e *domain.AuditEntry) error {
	sk := auditSK(e)
	it, err := item(companyAudit(e.Company), sk, auditRecord{ID: e.ID, Company: e.Company, ActorKeyID: e.ActorKeyID,
		ViaToken: e.ViaToken, Action: e.Action, TargetID: e.TargetID, CreatedAt: e.CreatedAt, ExpiresAt: e.ExpiresAt})
	if err != nil {
		return err
	}
	it[attrGSI1PK] = stringAttr(companyAuditAction(e.Company, e.Action))
	it[attrGSI1SK] = stringAttr(sk)
	it[attrTTL] = numberAttr(e.ExpiresAt.Unix())
	return translate(st.put(ctx, &dynamodb.PutItemInput{Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}))
}

// ListAuditEntries pages through a company's entries, newest first: one Query on the table (or,
// with an action, on gsi1) that reads no further than offset+limit+1 entries of the window (with
// an acting key, than offset+limit+1 of its entries: the Query goes on past entries it filters
// out, so a page is as full as without the filter).
func (st *Store) ListAuditEntries(ctx context.Context, company string, f domain.AuditFilter, offset, limit int) ([]*domain.AuditEntry, bool, error) {
	pkName, skName, list := attrPK, attrSK, companyAudit(company)
	in := &dynamodb.QueryInput{TableName: aws.String(st.table), ScanIndexForward: aws.Bool(false),
		Limit: aws.Int32(int32(min(offset+limit+1, MaxPage)))}
	if f.Action != "" {
		pkName, skName, list = attrGSI1PK, attrGSI1SK, companyAuditAction(company, f.Action)
		in.IndexName = aws.String(indexGSI1)
	}
	// A time's sort key is a prefix of its entries' keys ("<time>#<id>"): from is inclusive
	// (>=), to exclusive (every entry of that time sorts after the bare time).
	cond, values := "#pk = :p", map[string]types.AttributeValue{":p": stringAttr(list)}
	switch from, to := f.From, f.To; {
	case !from.IsZero() && !to.IsZero():
		cond += " AND #sk BETWEEN :from AND :to"
		values[":from"], values[":to"] = stringAttr(sortTime(from)), stringAttr(sortTime(to))
	case !from.IsZero():
		cond += " AND #sk >= :from"
		values[":from"] = stringAttr(sortTime(from))
	case !to.IsZero():
		cond += " AND #sk < :to"
		values[":to"] = stringAttr(sortTime(to))
	}
	in.KeyConditionExpression = aws.String(cond)
	in.ExpressionAttributeNames = map[string]string{"#pk": pkName}
	if len(values) > 1 {
		in.ExpressionAttributeNames["#sk"] = skName
	}
	if f.ActorKeyID != "" {
		// The record is one JSON string (attrData): the key is the text its encoding holds, which
		// matches entries written before this filter existed too. Its field name and quotes make
		// it match actor_key_id alone, never a target_id of the same value.
		in.FilterExpression = aws.String("contains(#data, :actor)")
		in.ExpressionAttributeNames["#data"] = attrData
		values[":actor"] = stringAttr(actorNeedle(f.ActorKeyID))
	}
	in.ExpressionAttributeValues = values

	return pageOf(ctx, dynamodb.NewQueryPaginator(st.db, in), offset, limit, func(it map[string]types.AttributeValue) (*domain.AuditEntry, error) {
		var r auditRecord
		if err := decode(it, &r); err != nil {
			return nil, err
		}
		return &domain.AuditEntry{ID: r.ID, Company: r.Company, ActorKeyID: r.ActorKeyID, ViaToken: r.ViaToken,
			Action: r.Action, TargetID: r.TargetID, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}, nil
	})
}
