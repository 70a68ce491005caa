package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/backoff"
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

// Month counters: beside the day counters, the same partition holds one item per UTC month for
// the company (sk M#<YYYY-MM>) and one per month and API key (sk M#<YYYY-MM>#<key id>), with the
// same attributes, so that a monthly budget is checked by reading one or two items rather than
// summing the month's day counters. Their sort keys begin with a letter, so a report's Query of
// days (digits) never meets them.
const usageMonth = "2006-01"

func usageMonthSK(month time.Time, keyID string) string {
	sk := "M#" + month.UTC().Format(usageMonth)
	if keyID != "" {
		sk += "#" + keyID
	}
	return sk
}

// countPolicy retries a counting transaction that met another on one of its items (the month
// counters are shared by every run of a company); a cancelled transaction wrote nothing, so a
// retry never counts twice.
var countPolicy = backoff.Policy{MaxRetries: 8, BaseDelay: 10 * time.Millisecond, MaxDelay: 250 * time.Millisecond}

// CountUsage adds e's counts to its day counter and to the month counters of its company and key,
// in one TransactWriteItems of ADD updates (ADD creates the items and the attributes they lack):
// one call, as the one UpdateItem of the day counter was, at six write units instead of one (a
// transaction writes each of its three items at twice the price). Two counts that meet on an
// item cancel one of them (TransactionConflict); that one is sent again after a short jittered
// wait, so concurrent runs are all counted, each once.
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
	expr := aws.String("ADD " + strings.Join(adds, ", "))
	sks := []string{usageSK(e.Day, e.KeyID, e.AgentID), usageMonthSK(e.Day, "")}
	if e.KeyID != "" {
		sks = append(sks, usageMonthSK(e.Day, e.KeyID))
	}
	writes := make([]types.TransactWriteItem, len(sks))
	for i, sk := range sks {
		writes[i] = types.TransactWriteItem{Update: &types.Update{TableName: aws.String(st.table),
			Key: itemKey(usagePK(e.Company), sk), UpdateExpression: expr, ExpressionAttributeValues: values}}
	}
	err := backoff.Retry(ctx, countPolicy, func(int) (time.Duration, bool, error) {
		_, err := st.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
		return 0, conflicted(err), err
	})
	if err != nil {
		return fmt.Errorf("count usage of %s: %w", e.Company, translate(err))
	}
	return nil
}

// conflicted reports whether a transaction was cancelled by another one on the same item, or
// refused while one was in progress: worth sending again.
func conflicted(err error) bool {
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if r.Code != nil && *r.Code == "TransactionConflict" {
				return true
			}
		}
		return false
	}
	var tic *types.TransactionInProgressException
	var ae smithy.APIError
	return errors.As(err, &tic) || (errors.As(err, &ae) && ae.ErrorCode() == "TransactionConflictException")
}

// MonthUsage reads the counters of the UTC month of month: keyID's when it is not empty, the
// company's when ofCompany; one GetItem for one, one BatchGetItem for both. A counter no run has
// made yet is zero.
func (st *Store) MonthUsage(ctx context.Context, company, keyID string, ofCompany bool, month time.Time) (key, co domain.UsageCount, err error) {
	var sks []string
	if keyID != "" {
		sks = append(sks, usageMonthSK(month, keyID))
	}
	if ofCompany {
		sks = append(sks, usageMonthSK(month, ""))
	}
	found := map[string]map[string]types.AttributeValue{}
	switch len(sks) {
	case 0:
		return key, co, nil
	case 1:
		out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: itemKey(usagePK(company), sks[0])})
		if err != nil {
			return key, co, fmt.Errorf("month usage of %s: %w", company, translate(err))
		}
		found[sks[0]] = out.Item
	default:
		keys := make([]map[string]types.AttributeValue, len(sks))
		for i, sk := range sks {
			keys[i] = itemKey(usagePK(company), sk)
		}
		req := map[string]types.KeysAndAttributes{st.table: {Keys: keys}}
		err := backoff.Retry(ctx, unprocessedPolicy, func(int) (time.Duration, bool, error) {
			out, err := st.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return 0, false, translate(err)
			}
			for _, it := range out.Responses[st.table] {
				if sk, ok := it[attrSK].(*types.AttributeValueMemberS); ok {
					found[sk.Value] = it
				}
			}
			req = out.UnprocessedKeys
			if len(req) > 0 {
				return 0, true, domain.ErrOverloaded
			}
			return 0, false, nil
		})
		if err != nil {
			return key, co, fmt.Errorf("month usage of %s: %w", company, err)
		}
	}
	if keyID != "" {
		if key, err = usageCount(found[usageMonthSK(month, keyID)]); err != nil {
			return key, co, fmt.Errorf("month usage of key %s: %w", keyID, err)
		}
	}
	if ofCompany {
		if co, err = usageCount(found[usageMonthSK(month, "")]); err != nil {
			return key, co, fmt.Errorf("month usage of %s: %w", company, err)
		}
	}
	return key, co, nil
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
	if e.UsageCount, err = usageCount(it); err != nil {
		return e, fmt.Errorf("usage item %q of %s: %w", sk.Value, company, err)
	}
	return e, nil
}

// usageCount reads a counter item's attributes; an absent attribute (or item) is zero.
func usageCount(it map[string]types.AttributeValue) (domain.UsageCount, error) {
	var c domain.UsageCount
	ints := []*int64{&c.Requests, &c.Executions, &c.InputTokens, &c.OutputTokens, &c.EmbeddingTokens, nil, &c.Unpriced}
	for i, a := range usageAttrs {
		n, ok := it[a].(*types.AttributeValueMemberN)
		if !ok {
			continue // an attribute no ADD has created yet
		}
		var err error
		if ints[i] == nil {
			c.CostUSD, err = strconv.ParseFloat(n.Value, 64)
		} else {
			*ints[i], err = strconv.ParseInt(n.Value, 10, 64)
		}
		if err != nil {
			return c, fmt.Errorf("%s: %w", a, err)
		}
	}
	return c, nil
}
