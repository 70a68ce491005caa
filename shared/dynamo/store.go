// Package dynamo is the DynamoDB adapter: one table holds every record (see infra/README.md for
// the key design and access patterns). SDK errors come out as domain error kinds.
package dynamo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/domain"
)

// Key and index attribute names of the table, as template.yaml declares them.
const (
	attrPK     = "pk"
	attrSK     = "sk"
	attrGSI1PK = "gsi1pk"
	attrGSI1SK = "gsi1sk"
	attrData   = "data"
	attrTTL    = "ttl"
	indexGSI1  = "gsi1"
)

// Client is the part of the DynamoDB API the store uses.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// Store implements the features' stores on one DynamoDB table.
type Store struct {
	db    Client
	table string
}

// NewStore builds a store on table.
func NewStore(db Client, table string) *Store {
	return &Store{db: db, table: table}
}

func stringAttr(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func numberAttr(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: fmt.Sprint(v)}
}

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: stringAttr(pk), attrSK: stringAttr(sk)}
}

// item builds a record: its keys plus the JSON of v in the data attribute.
func item(pk, sk string, v any) (map[string]types.AttributeValue, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", pk, err)
	}
	it := itemKey(pk, sk)
	it[attrData] = stringAttr(string(b))
	return it, nil
}

// decode reads the data attribute of an item into v, keeping numbers exact.
func decode(it map[string]types.AttributeValue, v any) error {
	d, ok := it[attrData].(*types.AttributeValueMemberS)
	if !ok {
		return fmt.Errorf("item %v has no data", it[attrPK])
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(d.Value)))
	dec.UseNumber()
	return dec.Decode(v)
}

// put sends a PutItem of in.Item to the table once checkItem has measured it; the error is the
// SDK's for the callers to translate, or a KindTooLarge error for an item DynamoDB would refuse.
func (st *Store) put(ctx context.Context, in *dynamodb.PutItemInput) error {
	if err := checkItem(in.Item); err != nil {
		return err
	}
	in.TableName = aws.String(st.table)
	_, err := st.db.PutItem(ctx, in)
	return err
}

// transact sends a TransactWriteItems once checkItem has measured the item of each Put; the
// error is the SDK's for the callers to translate (cancelledAt), or a KindTooLarge error.
func (st *Store) transact(ctx context.Context, writes []types.TransactWriteItem) error {
	for _, w := range writes {
		if w.Put != nil {
			if err := checkItem(w.Put.Item); err != nil {
				return err
			}
		}
	}
	_, err := st.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
	return err
}

// get reads one item; a missing item is domain.ErrNotFound.
func (st *Store) get(ctx context.Context, pk, sk string, v any) error {
	it, err := st.getItem(ctx, &dynamodb.GetItemInput{Key: itemKey(pk, sk)})
	if err != nil {
		return err
	}
	return decode(it, v)
}

// getItem sends the GetItem in of the table and returns the item; a missing item is
// domain.ErrNotFound, an error of the SDK translated.
func (st *Store) getItem(ctx context.Context, in *dynamodb.GetItemInput) (map[string]types.AttributeValue, error) {
	in.TableName = aws.String(st.table)
	out, err := st.db.GetItem(ctx, in)
	if err != nil {
		return nil, translate(err)
	}
	if out.Item == nil {
		return nil, domain.ErrNotFound
	}
	return out.Item, nil
}

// query reads every item of a partition (of the table or of gsi1), following pages.
func (st *Store) query(ctx context.Context, in *dynamodb.QueryInput) ([]map[string]types.AttributeValue, error) {
	in.TableName = aws.String(st.table)
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(st.db, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, translate(err)
		}
		items = append(items, out.Items...)
	}
	return items, nil
}

// pageOf reads the items p yields, skips offset of them and converts the next limit with conv,
// and says whether more follow (it stops reading at the item after the page).
func pageOf[T any](ctx context.Context, p *dynamodb.QueryPaginator, offset, limit int, conv func(map[string]types.AttributeValue) (T, error)) ([]T, bool, error) {
	out := make([]T, 0, min(limit, MaxPage))
	seen := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, false, translate(err)
		}
		for _, it := range page.Items {
			seen++
			if seen <= offset {
				continue
			}
			if len(out) == limit {
				return out, true, nil
			}
			v, err := conv(it)
			if err != nil {
				return nil, false, err
			}
			out = append(out, v)
		}
	}
	return out, false, nil
}

// getDecoded reads one item by its key (one GetItem) and decodes it; what names it in errors
// ("webhook 42"), and an absent item is a not-found error naming it.
func getDecoded[T any](ctx context.Context, st *Store, key map[string]types.AttributeValue, what string, decode func(map[string]types.AttributeValue) (*T, error)) (*T, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: key})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", what, translate(err))
	}
	if out.Item == nil {
		return nil, domain.Errorf(domain.KindNotFound, "%s not found", what)
	}
	return decode(out.Item)
}

// queryDecoded reads and decodes every item of partition pk whose sort key begins with prefix:
// one Query per 1 MB. what names the list in errors ("webhooks of acme").
func queryDecoded[T any](ctx context.Context, st *Store, pk, prefix, what string, decode func(map[string]types.AttributeValue) (*T, error)) ([]*T, error) {
	items, err := st.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String("pk = :p AND begins_with(sk, :s)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": stringAttr(pk), ":s": stringAttr(prefix),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	out := make([]*T, 0, len(items))
	for _, it := range items {
		v, err := decode(it)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// translate turns SDK errors into domain kinds.
func translate(err error) error {
	var ccf *types.ConditionalCheckFailedException
	var tce *types.TransactionCanceledException
	var pte *types.ProvisionedThroughputExceededException
	var rle *types.RequestLimitExceeded
	var rnf *types.ResourceNotFoundException
	var ae smithy.APIError
	switch {
	case errors.As(err, &ccf), errors.As(err, &tce):
		return &domain.Error{Kind: domain.KindConflict, Message: domain.ErrConflict.Message, Err: err}
	case errors.As(err, &pte), errors.As(err, &rle):
		return &domain.Error{Kind: domain.KindOverloaded, Message: domain.ErrOverloaded.Message, Err: err}
	case errors.As(err, &rnf):
		return fmt.Errorf("dynamodb table missing: %w", err)
	case errors.As(err, &ae) && ae.ErrorCode() == "ThrottlingException":
		return &domain.Error{Kind: domain.KindOverloaded, Message: domain.ErrOverloaded.Message, Err: err}
	}
	return err
}

// cancelledAt reports whether the transaction failed on the condition of item i.
func cancelledAt(err error, i int) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || i >= len(tce.CancellationReasons) {
		return false
	}
	c := tce.CancellationReasons[i].Code
	return c != nil && *c == "ConditionalCheckFailed"
}
