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

// A company's limits are one item, pk LIMITS#<company>, sk L, each limit a plain attribute
// (absent: none), so that a change sets and removes only the fields it names, in one
// UpdateItem, whatever another change did meanwhile.
func limitsKey(company string) map[string]types.AttributeValue {
	return itemKey("LIMITS#"+company, "L")
}

// Attribute names of a company's limits item.
const (
	attrRPM     = "requests_per_minute"
	attrTokens  = "monthly_tokens"
	attrCostUSD = "monthly_cost_usd"
)

// CompanyLimits reads a company's limits (one GetItem); a company that never set any has none.
func (st *Store) CompanyLimits(ctx context.Context, company string) (domain.Limits, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: limitsKey(company)})
	if err != nil {
		return domain.Limits{}, fmt.Errorf("limits of %s: %w", company, translate(err))
	}
	return decodeLimits(company, out.Item)
}

// UpdateCompanyLimits applies c to a company's limits and returns them as they now are (one
// UpdateItem; SET for a value, REMOVE for a null, nothing for a field left out). keyID, the
// changing key, and at are kept on the item beside the limits.
func (st *Store) UpdateCompanyLimits(ctx context.Context, company string, c domain.LimitsChange, keyID string, at time.Time) (domain.Limits, error) {
	sets := []string{"updated_at = :at", "updated_by = :by"}
	var removes []string
	values := map[string]types.AttributeValue{":at": stringAttr(at.UTC().Format(time.RFC3339Nano)), ":by": stringAttr(keyID)}
	field := func(attr string, set, null bool, v string) {
		switch {
		case !set:
		case null:
			removes = append(removes, attr)
		default:
			sets = append(sets, attr+" = :"+attr)
			values[":"+attr] = &types.AttributeValueMemberN{Value: v}
		}
	}
	field(attrRPM, c.RequestsPerMinute.Set, c.RequestsPerMinute.Null, strconv.Itoa(c.RequestsPerMinute.Value))
	field(attrTokens, c.MonthlyTokens.Set, c.MonthlyTokens.Null, strconv.FormatInt(c.MonthlyTokens.Value, 10))
	field(attrCostUSD, c.MonthlyCostUSD.Set, c.MonthlyCostUSD.Null, strconv.FormatFloat(c.MonthlyCostUSD.Value, 'f', -1, 64))
	expr := "SET " + strings.Join(sets, ", ")
	if len(removes) > 0 {
		expr += " REMOVE " + strings.Join(removes, ", ")
	}
	out, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(st.table), Key: limitsKey(company),
		UpdateExpression: aws.String(expr), ExpressionAttributeValues: values, ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return domain.Limits{}, fmt.Errorf("update limits of %s: %w", company, translate(err))
	}
	return decodeLimits(company, out.Attributes)
}

func decodeLimits(company string, it map[string]types.AttributeValue) (domain.Limits, error) {
	var l domain.Limits
	num := func(attr string) (string, bool) {
		n, ok := it[attr].(*types.AttributeValueMemberN)
		if !ok {
			return "", false
		}
		return n.Value, true
	}
	var err error
	if v, ok := num(attrRPM); ok {
		if l.RequestsPerMinute, err = strconv.Atoi(v); err != nil {
			return l, fmt.Errorf("limits of %s: %s: %w", company, attrRPM, err)
		}
	}
	if v, ok := num(attrTokens); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return l, fmt.Errorf("limits of %s: %s: %w", company, attrTokens, err)
		}
		l.MonthlyTokens = &n
	}
	if v, ok := num(attrCostUSD); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return l, fmt.Errorf("limits of %s: %s: %w", company, attrCostUSD, err)
		}
		l.MonthlyCostUSD = &f
	}
	return l, nil
}
