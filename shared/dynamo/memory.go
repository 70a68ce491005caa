package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// Memory (shared/memory): a user's records and blocks share one partition, MEM#<company>#<user>;
// a record's sort key is R#<agent key>#<id>, a block's B#<agent key>#<label> (unique in its
// scope by key). Beside each item, written and deleted in the same transaction, a pointer
// MEMID#<company>#<id> / P holds the item's key: an item is found by id with two strongly
// consistent GetItem, so an item created a moment ago is found (gsi1 is eventually consistent).
// gsi1 lists them by company (CO#<company>#MEM, R#<id> / B#<id>). infra/README.md has the rows.

const (
	// attrAgentKey is an item's agent key, for the company-wide lists of one agent's items.
	attrAgentKey = "agent_key"
	// attrItemPK and attrItemSK are a memory pointer's item key.
	attrItemPK      = "item_pk"
	attrItemSK      = "item_sk"
	memoryPointerSK = "P"
)

func memoryPK(company, user string) string { return "MEM#" + company + "#" + user }
func companyMemory(c string) string        { return "CO#" + c + "#MEM" }
func memoryIDPK(company, id string) string { return "MEMID#" + company + "#" + id }

// memoryAgentKey is an agent id made fit for a sort key (no #): "shared" for the shared scope,
// a UUID as it is, any other id (an inline configuration's "inline:<name>") "x" and 24 hex digits
// of its SHA-256, which is never a UUID nor "shared".
func memoryAgentKey(agentID string) string {
	switch {
	case agentID == "":
		return "shared"
	case domain.IsID(agentID):
		return agentID
	}
	sum := sha256.Sum256([]byte(agentID))
	return "x" + hex.EncodeToString(sum[:12])
}

func recordSK(agentID, id string) string   { return "R#" + memoryAgentKey(agentID) + "#" + id }
func blockSK(agentID, label string) string { return "B#" + memoryAgentKey(agentID) + "#" + label }

// memorySource is a MemorySource as stored.
type memorySource struct {
	Type        string `json:"type"`
	ExecutionID string `json:"execution_id,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	KeyID       string `json:"key_id,omitempty"`
}

// memoryRecordRecord is a MemoryRecord as stored.
type memoryRecordRecord struct {
	ID             string       `json:"id"`
	Company        string       `json:"company"`
	UserID         string       `json:"user_id"`
	AgentID        string       `json:"agent_id,omitempty"`
	Text           string       `json:"text"`
	Source         memorySource `json:"source"`
	EmbeddingModel string       `json:"embedding_model"`
	Dimensions     int          `json:"dimensions"`
	CreatedAt      time.Time    `json:"created_at"`
	UpdatedAt      time.Time    `json:"updated_at"`
}

// memoryBlockRecord is a MemoryBlock as stored.
type memoryBlockRecord struct {
	ID          string       `json:"id"`
	Company     string       `json:"company"`
	UserID      string       `json:"user_id"`
	AgentID     string       `json:"agent_id,omitempty"`
	Label       string       `json:"label"`
	Description string       `json:"description,omitempty"`
	Value       string       `json:"value"`
	Limit       int          `json:"limit"`
	Source      memorySource `json:"source"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

// memoryItem is the item of a record or block: its keys, data, updated_at and agent key.
func memoryItem(company, user, agentID, sk, listSK string, updated time.Time, v any) (map[string]types.AttributeValue, error) {
	it, err := item(memoryPK(company, user), sk, v)
	if err != nil {
		return nil, err
	}
	it[attrGSI1PK] = stringAttr(companyMemory(company))
	it[attrGSI1SK] = stringAttr(listSK)
	it[attrUpdatedAt] = stringAttr(sortTime(updated))
	it[attrAgentKey] = stringAttr(memoryAgentKey(agentID))
	return it, nil
}

func memoryRecordItem(r *domain.MemoryRecord) (map[string]types.AttributeValue, error) {
	return memoryItem(r.Company, r.UserID, r.AgentID, recordSK(r.AgentID, r.ID), "R#"+r.ID, r.UpdatedAt, memoryRecordRecord{
		ID: r.ID, Company: r.Company, UserID: r.UserID, AgentID: r.AgentID, Text: r.Text, Source: memorySource(r.Source),
		EmbeddingModel: r.EmbeddingModel, Dimensions: r.Dimensions, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt})
}

func decodeMemoryRecord(it map[string]types.AttributeValue) (*domain.MemoryRecord, error) {
	var r memoryRecordRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	return &domain.MemoryRecord{ID: r.ID, Company: r.Company, UserID: r.UserID, AgentID: r.AgentID, Text: r.Text,
		Source: domain.MemorySource(r.Source), EmbeddingModel: r.EmbeddingModel, Dimensions: r.Dimensions,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

func memoryBlockItem(b *domain.MemoryBlock) (map[string]types.AttributeValue, error) {
	return memoryItem(b.Company, b.UserID, b.AgentID, blockSK(b.AgentID, b.Label), "B#"+b.ID, b.UpdatedAt, memoryBlockRecord{
		ID: b.ID, Company: b.Company, UserID: b.UserID, AgentID: b.AgentID, Label: b.Label, Description: b.Description,
		Value: b.Value, Limit: b.Limit, Source: memorySource(b.Source), CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt})
}

func decodeMemoryBlock(it map[string]types.AttributeValue) (*domain.MemoryBlock, error) {
	var r memoryBlockRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	return &domain.MemoryBlock{ID: r.ID, Company: r.Company, UserID: r.UserID, AgentID: r.AgentID, Label: r.Label,
		Description: r.Description, Value: r.Value, Limit: r.Limit, Source: domain.MemorySource(r.Source),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

// createMemory puts a new item of company and its pointer by id in one transaction, each on
// the condition that its key is free: a taken key is a conflict.
func (st *Store) createMemory(ctx context.Context, company, id string, it map[string]types.AttributeValue) error {
	free := aws.String("attribute_not_exists(pk)")
	ptr := itemKey(memoryIDPK(company, id), memoryPointerSK)
	ptr[attrItemPK], ptr[attrItemSK] = it[attrPK], it[attrSK]
	return translate(st.transact(ctx, []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(st.table), Item: it, ConditionExpression: free}},
		{Put: &types.Put{TableName: aws.String(st.table), Item: ptr, ConditionExpression: free}},
	}))
}

// deleteMemory deletes an item and its pointer in one transaction (missing ones are no error).
func (st *Store) deleteMemory(ctx context.Context, company, id, pk, sk, what string) error {
	err := st.transact(ctx, []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(st.table), Key: itemKey(pk, sk)}},
		{Delete: &types.Delete{TableName: aws.String(st.table), Key: itemKey(memoryIDPK(company, id), memoryPointerSK)}},
	})
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, translate(err))
	}
	return nil
}

// CreateMemoryRecord stores a new record and its pointer (one TransactWriteItems).
func (st *Store) CreateMemoryRecord(ctx context.Context, r *domain.MemoryRecord) error {
	it, err := memoryRecordItem(r)
	if err != nil {
		return err
	}
	if err := st.createMemory(ctx, r.Company, r.ID, it); err != nil {
		return fmt.Errorf("create memory record %s: %w", r.ID, err)
	}
	return nil
}

// memoryByID reads the item of company that id names, of kind "R" (a record) or "B" (a block):
// a strongly consistent GetItem of its pointer, then one of the item. The company in the
// pointer's key keeps a tenant to its own items; a pointer to the other kind is not found.
func (st *Store) memoryByID(ctx context.Context, company, kind, id, what string) (map[string]types.AttributeValue, error) {
	notFound := domain.Errorf(domain.KindNotFound, "%s not found", what)
	ptr, err := st.getItem(ctx, &dynamodb.GetItemInput{Key: itemKey(memoryIDPK(company, id), memoryPointerSK), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(attrItemPK + ", " + attrItemSK)})
	if errors.Is(err, domain.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", what, err)
	}
	pk, _ := ptr[attrItemPK].(*types.AttributeValueMemberS)
	sk, _ := ptr[attrItemSK].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil || !strings.HasPrefix(sk.Value, kind+"#") {
		return nil, notFound
	}
	it, err := st.getItem(ctx, &dynamodb.GetItemInput{Key: itemKey(pk.Value, sk.Value), ConsistentRead: aws.Bool(true)})
	if errors.Is(err, domain.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", what, err)
	}
	return it, nil
}

// GetMemoryRecord reads a record of company by id: two strongly consistent GetItem (pointer,
// record).
func (st *Store) GetMemoryRecord(ctx context.Context, company, id string) (*domain.MemoryRecord, error) {
	what := "memory record " + id
	it, err := st.memoryByID(ctx, company, "R", id, what)
	if err != nil {
		return nil, err
	}
	r, err := decodeMemoryRecord(it)
	if err == nil && r.Company != company { // a # in a company or an id can make two pointer keys alike
		return nil, domain.Errorf(domain.KindNotFound, "%s not found", what)
	}
	return r, err
}

// UpdateMemoryRecord replaces prev by r if nobody wrote it since prev was read: one PutItem on
// updated_at = prev's (a changed record is a conflict, a deleted one not found).
func (st *Store) UpdateMemoryRecord(ctx context.Context, r, prev *domain.MemoryRecord) error {
	it, err := memoryRecordItem(r)
	if err != nil {
		return err
	}
	what := "memory record " + r.ID
	if err := st.putUnchanged(ctx, it, "attribute_exists(pk) AND #u = :prev", prev.UpdatedAt); err != nil {
		return fmt.Errorf("update %s: %w", what, lostRace(err, what, "The memory record was changed concurrently; retry"))
	}
	return nil
}

// DeleteMemoryRecord deletes a record and its pointer (one TransactWriteItems; a missing
// record is no error).
func (st *Store) DeleteMemoryRecord(ctx context.Context, r *domain.MemoryRecord) error {
	return st.deleteMemory(ctx, r.Company, r.ID, memoryPK(r.Company, r.UserID), recordSK(r.AgentID, r.ID), "memory record "+r.ID)
}

// CreateMemoryBlock stores a new block and its pointer (one TransactWriteItems): a block of the
// same label in the scope has the same key, which is a conflict.
func (st *Store) CreateMemoryBlock(ctx context.Context, b *domain.MemoryBlock) error {
	it, err := memoryBlockItem(b)
	if err != nil {
		return err
	}
	if err := st.createMemory(ctx, b.Company, b.ID, it); err != nil {
		return fmt.Errorf("create memory block %s: %w", b.Label, err)
	}
	return nil
}

// GetMemoryBlock reads a block of company by id: two strongly consistent GetItem (pointer,
// block).
func (st *Store) GetMemoryBlock(ctx context.Context, company, id string) (*domain.MemoryBlock, error) {
	what := "memory block " + id
	it, err := st.memoryByID(ctx, company, "B", id, what)
	if err != nil {
		return nil, err
	}
	b, err := decodeMemoryBlock(it)
	if err == nil && b.Company != company {
		return nil, domain.Errorf(domain.KindNotFound, "%s not found", what)
	}
	return b, err
}

// UpdateMemoryBlock replaces prev by b if nobody wrote it since prev was read (one PutItem).
func (st *Store) UpdateMemoryBlock(ctx context.Context, b, prev *domain.MemoryBlock) error {
	it, err := memoryBlockItem(b)
	if err != nil {
		return err
	}
	what := "memory block " + b.ID
	if err := st.putUnchanged(ctx, it, "attribute_exists(pk) AND #u = :prev", prev.UpdatedAt); err != nil {
		return fmt.Errorf("update %s: %w", what, lostRace(err, what, "The memory block was changed concurrently; retry"))
	}
	return nil
}

// DeleteMemoryBlock deletes a block and its pointer (one TransactWriteItems; a missing block is
// no error).
func (st *Store) DeleteMemoryBlock(ctx context.Context, b *domain.MemoryBlock) error {
	return st.deleteMemory(ctx, b.Company, b.ID, memoryPK(b.Company, b.UserID), blockSK(b.AgentID, b.Label), "memory block "+b.ID)
}

// ScopeMemoryBlocks reads every block of a scope, label order: one strongly consistent Query
// (the scope holds at most domain.MaxMemoryBlocks blocks, well under a page), so a block just
// written is in the next turn and an edit's read sees the write it lost to.
func (st *Store) ScopeMemoryBlocks(ctx context.Context, s domain.MemoryScope) ([]*domain.MemoryBlock, error) {
	items, err := st.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String("pk = :p AND begins_with(sk, :s)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": stringAttr(memoryPK(s.Company, s.UserID)), ":s": stringAttr(blockSK(s.AgentID, "")),
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("list memory blocks: %w", err)
	}
	out := make([]*domain.MemoryBlock, 0, len(items))
	for _, it := range items {
		b, err := decodeMemoryBlock(it)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// memoryList is the Query of a list of kind ("R" or "B"): a user's partition (of one agent's
// sort keys when f names one; strongly consistent), else the company's list on gsi1 (filtered
// on the agent key when f names an agent; eventually consistent).
func (st *Store) memoryList(company, kind string, f domain.MemoryFilter, offset, limit int) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{TableName: aws.String(st.table)}
	prefix := kind + "#"
	if f.UserID != "" {
		if f.AgentSet {
			prefix += memoryAgentKey(f.AgentID) + "#"
		}
		in.KeyConditionExpression = aws.String("pk = :p AND begins_with(sk, :s)")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":p": stringAttr(memoryPK(company, f.UserID)), ":s": stringAttr(prefix)}
		in.Limit = aws.Int32(int32(min(offset+limit+1, MaxPage)))
		in.ConsistentRead = aws.Bool(true)
		return in
	}
	in.IndexName = aws.String(indexGSI1)
	in.KeyConditionExpression = aws.String("gsi1pk = :p AND begins_with(gsi1sk, :s)")
	in.ExpressionAttributeValues = map[string]types.AttributeValue{":p": stringAttr(companyMemory(company)), ":s": stringAttr(prefix)}
	if f.AgentSet {
		// Limit counts the items read before the filter: read full pages.
		in.FilterExpression = aws.String(attrAgentKey + " = :a")
		in.ExpressionAttributeValues[":a"] = stringAttr(memoryAgentKey(f.AgentID))
		in.Limit = aws.Int32(MaxPage)
	} else {
		in.Limit = aws.Int32(int32(min(offset+limit+1, MaxPage)))
	}
	return in
}

// ListMemoryRecords is a page of company's records that f selects and whether more follow: a
// user's (Query of the partition: grouped by agent, each agent's oldest first) or the company's
// (Query of gsi1: oldest first, as ids are UUIDv7). It reads no further than the item after
// the page.
func (st *Store) ListMemoryRecords(ctx context.Context, company string, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryRecord, bool, error) {
	p := dynamodb.NewQueryPaginator(st.db, st.memoryList(company, "R", f, offset, limit))
	return pageOf(ctx, p, offset, limit, decodeMemoryRecord)
}

// ListMemoryBlocks is ListMemoryRecords of blocks (a user's: grouped by agent, label order).
func (st *Store) ListMemoryBlocks(ctx context.Context, company string, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryBlock, bool, error) {
	p := dynamodb.NewQueryPaginator(st.db, st.memoryList(company, "B", f, offset, limit))
	return pageOf(ctx, p, offset, limit, decodeMemoryBlock)
}

// ForgetMemoryUser deletes every record and block of a user and their pointers: a strongly
// consistent Query of the partition's keys and ids (every page), then BatchWriteItem deletes
// of 25 (each item beside its pointer), retrying unprocessed ones. A pointer left by a failed
// batch points at nothing (not found); an item left is deleted by the next call.
func (st *Store) ForgetMemoryUser(ctx context.Context, company, userID string) (records, blocks int, err error) {
	items, err := st.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(memoryPK(company, userID))},
		ProjectionExpression:      aws.String("pk, sk, " + attrGSI1SK),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return 0, 0, fmt.Errorf("read a user's memory: %w", err)
	}
	keys := make([]map[string]types.AttributeValue, 0, 2*len(items))
	for _, it := range items {
		keys = append(keys, it)
		sk, _ := it[attrSK].(*types.AttributeValueMemberS)
		switch {
		case sk != nil && strings.HasPrefix(sk.Value, "R#"):
			records++
		case sk != nil && strings.HasPrefix(sk.Value, "B#"):
			blocks++
		}
		// gsi1sk is R#<id> or B#<id>: the pointer's id.
		if l, ok := it[attrGSI1SK].(*types.AttributeValueMemberS); ok {
			if _, id, ok := strings.Cut(l.Value, "#"); ok {
				keys = append(keys, itemKey(memoryIDPK(company, id), memoryPointerSK))
			}
		}
	}
	if err := st.deleteAll(ctx, keys); err != nil {
		return 0, 0, fmt.Errorf("forget a user's memory: %w", err)
	}
	return records, blocks, nil
}
