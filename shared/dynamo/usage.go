package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// Usage counters: one item per company, UTC day, API key and agent, pk USAGE#<company>, sk
// <day>#<key id>#<agent id>, its counts in plain number attributes so that one UpdateItem ADD
// counts a run without reading anything. A report is one Query of the company's partition
// between two days: it reads counters, never executions.
const usageDay = "2006-01-02"

func usagePK(company string) string { return "USAGE#" + company }

func usageSK(day time.Time, keyID, agentID string) string {
	return day.UTC().Format(usageDay) + "#" + keyID + "#" + agentID
}

// usageAttrs are the counters' attributes in the order of domain.UsageCount.
var usageAttrs = []string{"requests", "executions", "input_tokens", "output_tokens", "embedding_tokens", "cost_usd", "unpriced"}

// CountUsage adds e's counts to its counter with one UpdateItem (ADD creates the item and the
// attributes it lacks); concurrent runs add without conflict.
func (st *Store) CountUsage(ctx context.Context, e domain.UsageEntry) error {
	vals := []string{strconv.FormatInt(e.Requests, 10), strconv.FormatInt(e.Executions, 10), strconv.FormatInt(e.InputTokens, 10),
		strconv.FormatInt(e.OutputTokens, 10), strconv.FormatInt(e.EmbeddingTokens, 10),
		strconv.FormatFloat(e.CostUSD, 'f', -1, 64), strconv.FormatInt(e.Unpriced, 10)}
	adds := make([]string, len(usageAttrs))
	values := make(map[string]types.AttributeValue, len(usageAttrs))
	for i, a := range usageAttrs {
		adds[i] = fmt.Sprintf("%s :v%d", a, i)
		values[fmt.Sprintf(":v%d", i)] = &types.AttributeValueMemberN{Value: vals[i]}
	}
	_, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(st.table),
		Key:                       itemKey(usagePK(e.Company), usageSK(e.Day, e.KeyID, e.AgentID)),
		UpdateExpression:          aws.String("ADD " + strings.Join(adds, ", ")),
		ExpressionAttributeValues: values,
	})
	if err != nil {
		return fmt.Errorf("count usage of %s: %w", e.Company, translate(err))
	}
	return nil
}

// UsageEntries returns a company's counters of the UTC days from to to, both included, with
// one Query (following its pages).
func (st *Store) UsageEntries(ctx context.Context, company string, from, to time.Time) ([]domain.UsageEntry, error) {
	items, err := st.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": stringAttr(usagePK(company)), ":from": stringAttr(from.UTC().Format(usageDay) + "#"),
			":to": stringAttr(to.UTC().Format(usageDay) + "#\uffff"),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("usage of %s: %w", company, err)
	}
	out := make([]domain.UsageEntry, 0, len(items))
	for _, it := range items {
		e, err := usageEntry(company, it)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func usageEntry(company string, it map[string]types.AttributeValue) (domain.UsageEntry, error) {
	sk, _ := it[attrSK].(*types.AttributeValueMemberS)
	if sk == nil {
		return domain.UsageEntry{}, fmt.Errorf("usage item of %s has no sort key", company)
	}
	parts := strings.SplitN(sk.Value, "#", 3)
	if len(parts) != 3 {
		return domain.UsageEntry{}, fmt.Errorf("usage item %q of %s: malformed sort key", sk.Value, company)
	}
	day, err := time.Parse(usageDay, parts[0])
	if err != nil {
		return domain.UsageEntry{}, fmt.Errorf("usage item %q of %s: %w", sk.Value, company, err)
	}
	e := domain.UsageEntry{Company: company, Day: day, KeyID: parts[1], AgentID: parts[2]}
	ints := []*int64{&e.Requests, &e.Executions, &e.InputTokens, &e.OutputTokens, &e.EmbeddingTokens, nil, &e.Unpriced}
	for i, a := range usageAttrs {
		n, ok := it[a].(*types.AttributeValueMemberN)
		if !ok {
			continue // an attribute no ADD has created yet
		}
		if ints[i] == nil {
			if e.CostUSD, err = strconv.ParseFloat(n.Value, 64); err != nil {
				return e, fmt.Errorf("usage item %q of %s: %s: %w", sk.Value, company, a, err)
			}
			continue
		}
		if *ints[i], err = strconv.ParseInt(n.Value, 10, 64); err != nil {
			return e, fmt.Errorf("usage item %q of %s: %s: %w", sk.Value, company, a, err)
		}
	}
	return e, nil
}
