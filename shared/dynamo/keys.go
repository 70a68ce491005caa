package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// keyRecord is a key as stored: what the API shows plus what it never shows.
type keyRecord struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Prefix    string   `json:"prefix"`
	Owner     string   `json:"owner"`
	Company   string   `json:"company"`
	ParentID  *string  `json:"parent_id"`
	Scopes    []string `json:"scopes"`
	RateLimit int      `json:"rate_limit"`
	// The key's monthly budget; absent in records of keys made without one.
	MonthlyTokens  *int64     `json:"monthly_tokens,omitempty"`
	MonthlyCostUSD *float64   `json:"monthly_cost_usd,omitempty"`
	ExpiresAt      time.Time  `json:"expires_at"`
	RevokedAt      *time.Time `json:"revoked_at"`
	CreatedAt      time.Time  `json:"created_at"`
	Hash           string     `json:"hash"`
	Ancestors      []string   `json:"ancestors,omitempty"`
}

func keyPK(hash string) string          { return "APIKEY#" + hash }
func companyKeys(c string) string       { return "CO#" + c + "#KEYS" }
func rateKey(id string, w int64) string { return fmt.Sprintf("RATE#%s#%d", id, w) }

func keyItem(k *domain.APIKey) (map[string]types.AttributeValue, error) {
	it, err := item(keyPK(k.Hash), "K", keyRecord{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Owner: k.Owner,
		Company: k.Company, ParentID: k.ParentID, Scopes: k.Scopes, RateLimit: k.RateLimit, ExpiresAt: k.ExpiresAt,
		MonthlyTokens: k.Budget.MonthlyTokens, MonthlyCostUSD: k.Budget.MonthlyCostUSD,
		RevokedAt: k.RevokedAt, CreatedAt: k.CreatedAt, Hash: k.Hash, Ancestors: k.Ancestors})
	if err != nil {
		return nil, err
	}
	it[attrGSI1PK] = stringAttr(companyKeys(k.Company))
	it[attrGSI1SK] = stringAttr("KEY#" + k.ID)
	return it, nil
}

func decodeKey(it map[string]types.AttributeValue) (*domain.APIKey, error) {
	var r keyRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	return &domain.APIKey{ID: r.ID, Name: r.Name, Prefix: r.Prefix, Hash: r.Hash, Owner: r.Owner, Company: r.Company,
		ParentID: r.ParentID, Ancestors: r.Ancestors, Scopes: r.Scopes, RateLimit: r.RateLimit, ExpiresAt: r.ExpiresAt,
		Budget:    domain.Budget{MonthlyTokens: r.MonthlyTokens, MonthlyCostUSD: r.MonthlyCostUSD},
		RevokedAt: r.RevokedAt, CreatedAt: r.CreatedAt}, nil
}

// GetKeyByHash reads a key by the hash of its secret (one GetItem).
func (st *Store) GetKeyByHash(ctx context.Context, hash string) (*domain.APIKey, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: itemKey(keyPK(hash), "K")})
	if err != nil {
		return nil, translate(err)
	}
	if out.Item == nil {
		return nil, domain.ErrNotFound
	}
	return decodeKey(out.Item)
}

// GetKey reads a company's key by its id (one Query on gsi1, which holds whole keys).
func (st *Store) GetKey(ctx context.Context, company, id string) (*domain.APIKey, error) {
	out, err := st.db.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(st.table),
		IndexName:              aws.String(indexGSI1),
		KeyConditionExpression: aws.String("gsi1pk = :p AND gsi1sk = :k"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": stringAttr(companyKeys(company)), ":k": stringAttr("KEY#" + id),
		},
	})
	if err != nil {
		return nil, translate(err)
	}
	if len(out.Items) == 0 {
		return nil, domain.Errorf(domain.KindNotFound, "API key %s not found", id)
	}
	return decodeKey(out.Items[0])
}

// PutKey stores a new key; gsi1 lists it under its company and finds it by id.
func (st *Store) PutKey(ctx context.Context, k *domain.APIKey) error {
	it, err := keyItem(k)
	if err != nil {
		return err
	}
	return translate(st.put(ctx, &dynamodb.PutItemInput{Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}))
}

// ListKeys lists a company's keys, newest first (one Query on gsi1 per page).
func (st *Store) ListKeys(ctx context.Context, company string) ([]*domain.APIKey, error) {
	items, err := st.query(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(companyKeys(company))},
	})
	if err != nil {
		return nil, err
	}
	out := make([]*domain.APIKey, 0, len(items))
	for _, it := range items {
		k, err := decodeKey(it)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, nil
}

// RevokeKey marks a stored key revoked at at (one PutItem; keys change in no other way) and
// returns it as stored. A key revoked before keeps its first revocation time.
func (st *Store) RevokeKey(ctx context.Context, k *domain.APIKey, at time.Time) (*domain.APIKey, error) {
	c := *k
	if c.RevokedAt == nil {
		c.RevokedAt = &at
	}
	it, err := keyItem(&c)
	if err != nil {
		return nil, err
	}
	err = st.put(ctx, &dynamodb.PutItemInput{Item: it, ConditionExpression: aws.String("attribute_exists(pk)")})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil, domain.Errorf(domain.KindNotFound, "API key %s not found", k.ID)
	}
	if err != nil {
		return nil, translate(err)
	}
	return &c, nil
}

// Hit counts one request in a key's window with one conditional UpdateItem; the item expires by
// TTL after the window.
func (st *Store) Hit(ctx context.Context, keyID string, window time.Time, limit int, expires time.Time) (int, error) {
	out, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(st.table),
		Key:                      itemKey(rateKey(keyID, window.Unix()), "R"),
		UpdateExpression:         aws.String("ADD hits :one SET #ttl = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(hits) OR hits < :limit"),
		ExpressionAttributeNames: map[string]string{"#ttl": attrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": numberAttr(1), ":limit": numberAttr(int64(limit)), ":ttl": numberAttr(expires.Unix()),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return limit, domain.ErrRateLimited
	}
	if err != nil {
		return 0, translate(err)
	}
	hits, ok := out.Attributes["hits"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, errors.New("rate limit: no count returned")
	}
	var c int
	_, err = fmt.Sscan(hits.Value, &c)
	return c, err
}
