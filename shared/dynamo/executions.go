package dynamo

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// The traces list is a part of gsi1: an execution item written with its session's company and
// owner (executionItem) carries
//
//	gsi1pk = "CO#<company>#OWNER#<owner>#RUNS"
//	gsi1sk = "<created>#<session id>#<execution id>"
//	agent_id = its session's agent (beside data, for the filter)
//
// unless SwapExecution puts it on the watchdog's list instead (queued or running: watch.go). So
// an execution joins its owner's list in the write that ends or pauses it, and a page of the
// list is one Query of gsi1, newest first, the time window a key condition on the sort key and
// the agent and status filters a FilterExpression. The list is the owner's, as sessions are:
// every execution listed opens to its trace for the caller that lists it.
const (
	attrAgentID = "agent_id"
	// filteredReads is how many executions a filtered page reads at least (a Query's Limit
	// counts the items read before the filter): a page of rare matches still finds some in one
	// Query, whose 1 MB bounds what it costs.
	filteredReads = 200
)

func ownerRuns(company, owner string) string { return "CO#" + company + "#OWNER#" + owner + "#RUNS" }

func runSK(e *domain.Execution) string { return sortTime(e.CreatedAt) + "#" + e.SessionID + "#" + e.ID }

// listRun gives an execution item the keys of its owner's list, when the execution names them.
func listRun(it map[string]types.AttributeValue, e *domain.Execution) {
	if e.Company == "" || e.Owner == "" {
		return // recorded before executions named them
	}
	it[attrGSI1PK] = stringAttr(ownerRuns(e.Company, e.Owner))
	it[attrGSI1SK] = stringAttr(runSK(e))
	if e.AgentID != "" {
		it[attrAgentID] = stringAttr(e.AgentID)
	}
}

// ListExecutions reads one page of an owner's executions, newest first, as f picks them: at
// most f.Limit (1 to MaxPage) and the cursor of the next page ("" at the end). It is one Query
// of gsi1 whatever f holds. Without an agent or status filter it reads f.Limit+1 executions;
// with one, at least filteredReads, so a filtered page may hold fewer than f.Limit (even none)
// with a cursor to go on from. A cursor that is not one of this list's is a 400 on "after".
func (st *Store) ListExecutions(ctx context.Context, company, owner string, f domain.ExecutionFilter) ([]*domain.Execution, string, error) {
	limit := min(max(f.Limit, 1), MaxPage)
	list := ownerRuns(company, owner)
	names := map[string]string{"#pk": attrGSI1PK, "#sk": attrGSI1SK, "#d": attrData}
	values := map[string]types.AttributeValue{":p": stringAttr(list)}
	key := "#pk = :p"
	lo, hi := "", ""
	if !f.Since.IsZero() {
		lo = sortTime(f.Since)
	}
	if !f.Until.IsZero() {
		hi = sortTime(f.Until) // no sort key equals it: each goes on with "#<ids>"
	}
	switch {
	case lo != "" && hi != "":
		if lo >= hi {
			return []*domain.Execution{}, "", nil
		}
		key += " AND #sk BETWEEN :lo AND :hi"
		values[":lo"], values[":hi"] = stringAttr(lo), stringAttr(hi)
	case lo != "":
		key += " AND #sk >= :lo"
		values[":lo"] = stringAttr(lo)
	case hi != "":
		key += " AND #sk < :hi"
		values[":hi"] = stringAttr(hi)
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(st.table), IndexName: aws.String(indexGSI1),
		KeyConditionExpression: aws.String(key), ScanIndexForward: aws.Bool(false),
		ProjectionExpression: aws.String("#d, #sk"), Limit: aws.Int32(int32(limit + 1)),
	}
	var filters []string
	if f.AgentID != "" {
		filters = append(filters, "#a = :a")
		names["#a"], values[":a"] = attrAgentID, stringAttr(f.AgentID)
	}
	if f.Status != "" {
		filters = append(filters, "#s = :s")
		names["#s"], values[":s"] = attrStatus, stringAttr(f.Status)
	}
	if len(filters) > 0 {
		in.FilterExpression = aws.String(strings.Join(filters, " AND "))
		in.Limit = aws.Int32(int32(min(max(limit+1, filteredReads), MaxPage)))
	}
	if f.After != "" {
		sk, sid, eid, ok := parseRunCursor(f.After)
		if !ok {
			return nil, "", domain.Invalid([]domain.FieldError{{Field: "after", Message: "is not a cursor of this list; take the next page's address from the Link header"}})
		}
		switch {
		case lo != "" && sk < lo:
			return []*domain.Execution{}, "", nil // the page before ended the window
		case hi == "" || sk < hi:
			// A start key outside the key condition is refused by DynamoDB; one after the
			// window's end starts the window from its end.
			in.ExclusiveStartKey = map[string]types.AttributeValue{
				attrPK: stringAttr(sessionPK(sid)), attrSK: stringAttr(execPrefix + eid),
				attrGSI1PK: stringAttr(list), attrGSI1SK: stringAttr(sk),
			}
		}
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = names, values
	out, err := st.db.Query(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("list executions: %w", translate(err))
	}
	page := make([]*domain.Execution, 0, min(limit, len(out.Items)))
	last := ""
	for _, it := range out.Items {
		if len(page) == limit {
			return page, runCursor(last), nil
		}
		var r executionRecord
		if err := decode(it, &r); err != nil {
			return nil, "", err
		}
		page = append(page, r.execution())
		last = skOf(it)
	}
	if len(out.LastEvaluatedKey) > 0 {
		// The Query stopped (at its Limit or 1 MB) before the list's end: the next page goes on
		// after the last execution it read, listed or filtered out.
		if sk := skOf(out.LastEvaluatedKey); sk != "" {
			return page, runCursor(sk), nil
		}
	}
	return page, "", nil
}

func skOf(it map[string]types.AttributeValue) string {
	if s, ok := it[attrGSI1SK].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// runCursor is the opaque cursor of a page that ends at the list's sort key sk.
func runCursor(sk string) string { return base64.RawURLEncoding.EncodeToString([]byte(sk)) }

// parseRunCursor reads a cursor back into its sort key and the ids the start key needs.
func parseRunCursor(c string) (sk, sessionID, execID string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", "", "", false
	}
	f := strings.Split(string(b), "#")
	if len(f) != 3 || !domain.IsID(f[1]) || !domain.IsID(f[2]) {
		return "", "", "", false
	}
	if t, err := time.Parse(time.RFC3339Nano, f[0]); err != nil || sortTime(t) != f[0] {
		return "", "", "", false
	}
	return string(b), f[1], f[2], true
}
