package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// A company's MCP servers and their name claims share one partition, CO#<company>#MCP: the
// engine reads every server of a run's company with one Query, and a record is found by company
// and id with one GetItem (another company's id is simply absent from the caller's partition).
//
//	server:     pk CO#<company>#MCP  sk S#<id>    data, updated_at (optimistic lock)
//	name claim: pk CO#<company>#MCP  sk N#<name>  server_id (makes names unique in the company)
//	count:      pk CO#<company>#MCP  sk COUNT     servers (bounds the servers of a company)

func companyMCP(c string) string   { return "CO#" + c + "#MCP" }
func mcpServerSK(id string) string { return "S#" + id }
func mcpNameSK(name string) string { return "N#" + name }

const (
	attrServerID   = "server_id"
	attrMCPServers = "servers"
	mcpCountSK     = "COUNT"
)

// mcpCount changes a company's count of servers by delta; a rise needs the count below max.
func (st *Store) mcpCount(company string, delta, max int64) *types.Update {
	u := &types.Update{TableName: aws.String(st.table), Key: itemKey(companyMCP(company), mcpCountSK),
		UpdateExpression:          aws.String("ADD #n :d"),
		ExpressionAttributeNames:  map[string]string{"#n": attrMCPServers},
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": numberAttr(delta)}}
	if delta > 0 {
		u.ConditionExpression = aws.String("attribute_not_exists(#n) OR #n < :max")
		u.ExpressionAttributeValues[":max"] = numberAttr(max)
	}
	return u
}

// mcpRecord is the stored form of a server (the header values sealed).
type mcpRecord struct {
	ID            string                `json:"id"`
	Company       string                `json:"company"`
	CreatedBy     string                `json:"created_by"`
	Name          string                `json:"name"`
	URL           string                `json:"url"`
	Description   string                `json:"description,omitempty"`
	HeaderNames   []string              `json:"header_names"`
	SealedHeaders []byte                `json:"sealed_headers,omitempty"`
	Auth          *domain.MCPServerAuth `json:"auth,omitempty"`
	SealedAuth    []byte                `json:"sealed_auth,omitempty"`
	TimeoutMS     int                   `json:"timeout_ms,omitempty"`
	Status        string                `json:"status"`
	LastError     string                `json:"last_error,omitempty"`
	Tools         []mcpToolRecord       `json:"tools"`
	ToolsAt       time.Time             `json:"tools_at"`
	CreatedAt     time.Time             `json:"created_at"`
	UpdatedAt     time.Time             `json:"updated_at"`
}

func mcpItem(s *domain.MCPServer) (map[string]types.AttributeValue, error) {
	r := mcpRecord{ID: s.ID, Company: s.Company, CreatedBy: s.CreatedBy, Name: s.Name, URL: s.URL, Description: s.Description,
		HeaderNames: s.HeaderNames, SealedHeaders: s.SealedHeaders, Auth: s.Auth, SealedAuth: s.SealedAuth, TimeoutMS: s.TimeoutMS,
		Status: s.Status, LastError: s.LastError, Tools: newToolRecords(s.Tools), ToolsAt: s.ToolsAt, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	it, err := item(companyMCP(s.Company), mcpServerSK(s.ID), r)
	if err != nil {
		return nil, err
	}
	it[attrUpdatedAt] = stringAttr(sortTime(s.UpdatedAt))
	return it, nil
}

func decodeMCP(it map[string]types.AttributeValue) (*domain.MCPServer, error) {
	var r mcpRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	if r.HeaderNames == nil {
		r.HeaderNames = []string{}
	}
	tools := make([]domain.MCPTool, len(r.Tools))
	for i, t := range r.Tools {
		tools[i] = domain.MCPTool(t)
	}
	return &domain.MCPServer{ID: r.ID, Company: r.Company, CreatedBy: r.CreatedBy, Name: r.Name, URL: r.URL, Description: r.Description,
		HeaderNames: r.HeaderNames, SealedHeaders: r.SealedHeaders, Auth: r.Auth, SealedAuth: r.SealedAuth, TimeoutMS: r.TimeoutMS,
		Status: r.Status, LastError: r.LastError, Tools: tools, ToolsAt: r.ToolsAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

// mcpToolRecord is the stored form of a tool of a server.
type mcpToolRecord struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

func newToolRecords(tools []domain.MCPTool) []mcpToolRecord {
	if tools == nil {
		return nil
	}
	out := make([]mcpToolRecord, len(tools))
	for i, t := range tools {
		out[i] = mcpToolRecord(t)
	}
	return out
}

func (st *Store) mcpClaim(s *domain.MCPServer) *types.Put {
	it := itemKey(companyMCP(s.Company), mcpNameSK(s.Name))
	it[attrServerID] = stringAttr(s.ID)
	return &types.Put{TableName: aws.String(st.table), Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}
}

// CreateMCPServer writes the server, its name claim and its company's count in one
// transaction; a taken name is domain.ErrMCPNameTaken, a company that has max servers already
// domain.ErrMCPLimit, and both write nothing.
func (st *Store) CreateMCPServer(ctx context.Context, s *domain.MCPServer, max int) error {
	it, err := mcpItem(s)
	if err != nil {
		return err
	}
	err = st.transact(ctx, []types.TransactWriteItem{
		{Put: st.mcpClaim(s)},
		{Put: &types.Put{TableName: aws.String(st.table), Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: st.mcpCount(s.Company, 1, int64(max))},
	})
	switch {
	case cancelledAt(err, 0):
		return fmt.Errorf("MCP server name %q: %w", s.Name, domain.ErrMCPNameTaken)
	case cancelledAt(err, 2):
		return fmt.Errorf("MCP servers of %s: %w", s.Company, domain.ErrMCPLimit)
	}
	if err != nil {
		return fmt.Errorf("create MCP server %s: %w", s.ID, translate(err))
	}
	return nil
}

// GetMCPServer reads one of a company's servers (one GetItem).
func (st *Store) GetMCPServer(ctx context.Context, company, id string) (*domain.MCPServer, error) {
	return getDecoded(ctx, st, itemKey(companyMCP(company), mcpServerSK(id)), "MCP server "+id, decodeMCP)
}

// ListMCPServers reads every server of a company: one Query (per 1 MB) of its partition.
func (st *Store) ListMCPServers(ctx context.Context, company string) ([]*domain.MCPServer, error) {
	return queryDecoded(ctx, st, companyMCP(company), "S#", "MCP servers of "+company, decodeMCP)
}

// FindMCPServers reads the servers of company that refs name, by id or by name, without reading
// the others: one BatchGetItem for the ids and the name claims, and one more for the servers
// the names claim (none when every ref is an id). A ref that names nothing is absent from the
// result. Strongly consistent, as a configuration check follows a registration at once.
func (st *Store) FindMCPServers(ctx context.Context, company string, refs []string) ([]*domain.MCPServer, error) {
	pk := companyMCP(company)
	var keys []map[string]types.AttributeValue
	seen := map[string]bool{}
	add := func(sk string) {
		if !seen[sk] {
			seen[sk] = true
			keys = append(keys, itemKey(pk, sk))
		}
	}
	for _, ref := range refs {
		switch {
		case ref == "":
		case domain.IsID(ref):
			add(mcpServerSK(ref)) // names are never UUIDs
		default:
			add(mcpNameSK(ref))
		}
	}
	var out []*domain.MCPServer
	var claimed []map[string]types.AttributeValue
	collect := func(it map[string]types.AttributeValue) error {
		if id, ok := it[attrServerID].(*types.AttributeValueMemberS); ok {
			if sk := mcpServerSK(id.Value); !seen[sk] {
				seen[sk] = true
				claimed = append(claimed, itemKey(pk, sk))
			}
			return nil
		}
		s, err := decodeMCP(it)
		if err != nil {
			return err
		}
		out = append(out, s)
		return nil
	}
	if err := st.batchGetKeys(ctx, keys, true, "", nil, collect); err != nil {
		return nil, fmt.Errorf("find MCP servers of %s: %w", company, err)
	}
	if err := st.batchGetKeys(ctx, claimed, true, "", nil, collect); err != nil {
		return nil, fmt.Errorf("find MCP servers of %s: %w", company, err)
	}
	return out, nil
}

// unchanged is the condition of a write over a server read at prev: it exists and nobody wrote
// it since.
func (st *Store) unchanged(prev *domain.MCPServer) (string, map[string]string, map[string]types.AttributeValue) {
	return "attribute_exists(pk) AND #u = :prev", map[string]string{"#u": attrUpdatedAt},
		map[string]types.AttributeValue{":prev": stringAttr(sortTime(prev.UpdatedAt))}
}

// UpdateMCPServer replaces prev by s if nobody wrote it since it was read; a new name moves the
// claim in the same transaction (a taken one is domain.ErrMCPNameTaken).
func (st *Store) UpdateMCPServer(ctx context.Context, s, prev *domain.MCPServer) error {
	it, err := mcpItem(s)
	if err != nil {
		return err
	}
	cond, names, values := st.unchanged(prev)
	what := "MCP server " + s.ID
	if s.Name == prev.Name {
		err := st.putUnchanged(ctx, it, cond, prev.UpdatedAt)
		if err != nil {
			return fmt.Errorf("update %s: %w", what, lostRace(err, what, "The MCP server was changed concurrently; retry"))
		}
		return nil
	}
	err = st.transact(ctx, []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(st.table), Item: it, ConditionExpression: aws.String(cond),
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Delete: &types.Delete{TableName: aws.String(st.table), Key: itemKey(companyMCP(prev.Company), mcpNameSK(prev.Name)),
			ConditionExpression:       aws.String(attrServerID + " = :id"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":id": stringAttr(prev.ID)}}},
		{Put: st.mcpClaim(s)},
	})
	switch {
	case err == nil:
		return nil
	case cancelledAt(err, 0):
		return fmt.Errorf("update %s: %w", what, raceLost(err, what))
	case cancelledAt(err, 2):
		return fmt.Errorf("MCP server name %q: %w", s.Name, domain.ErrMCPNameTaken)
	}
	return fmt.Errorf("update %s: %w", what, translate(err))
}

// raceLost tells a transaction's failed first condition apart, by the old item it returned:
// none is not found, one a concurrent change.
func raceLost(err error, what string) error {
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) && len(tce.CancellationReasons) > 0 && len(tce.CancellationReasons[0].Item) == 0 {
		return &domain.Error{Kind: domain.KindNotFound, Message: what + " not found", Err: err}
	}
	return &domain.Error{Kind: domain.KindConflict, Message: "The MCP server was changed concurrently; retry", Err: err}
}

// DeleteMCPServer removes the server, if unchanged since read, and its name claim.
func (st *Store) DeleteMCPServer(ctx context.Context, s *domain.MCPServer) error {
	cond, names, values := st.unchanged(s)
	err := st.transact(ctx, []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(st.table), Key: itemKey(companyMCP(s.Company), mcpServerSK(s.ID)),
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Delete: &types.Delete{TableName: aws.String(st.table), Key: itemKey(companyMCP(s.Company), mcpNameSK(s.Name)),
			ConditionExpression:       aws.String(attrServerID + " = :id"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":id": stringAttr(s.ID)}}},
		{Update: st.mcpCount(s.Company, -1, 0)},
	})
	what := "MCP server " + s.ID
	switch {
	case err == nil:
		return nil
	case cancelledAt(err, 0):
		return fmt.Errorf("delete %s: %w", what, raceLost(err, what))
	}
	return fmt.Errorf("delete %s: %w", what, translate(err))
}
