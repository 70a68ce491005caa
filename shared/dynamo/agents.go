package dynamo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
)

// agentRecord is the stored form of an agent (the data attribute of its item): what the API
// shows plus what only the service sees. Its keys are the ones items were first written with.
type agentRecord struct {
	ID            string         `json:"id"`
	AgentKey      string         `json:"agent_key"`
	Name          string         `json:"name"`
	Architecture  string         `json:"architecture"`
	EntryPoint    string         `json:"entry_point"`
	IsPublic      bool           `json:"is_public"`
	IsShared      bool           `json:"is_shared"`
	OriginURL     *string        `json:"origin_url"`
	Owner         string         `json:"owner"`
	Company       string         `json:"company"`
	SystemConfig  map[string]any `json:"system_config"`
	VersionNumber string         `json:"version_number"`
	ConfigHash    string         `json:"config_hash"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
	Explicit      map[string]any `json:"explicit"`
	VersionID     string         `json:"version_id"`
	Seq           int            `json:"seq"`
}

func newAgentRecord(a *domain.Agent) agentRecord {
	return agentRecord{ID: a.ID, AgentKey: a.AgentKey, Name: a.Name, Architecture: a.Architecture, EntryPoint: a.EntryPoint,
		IsPublic: a.IsPublic, IsShared: a.IsShared, OriginURL: a.OriginURL, Owner: a.Owner, Company: a.Company,
		SystemConfig: a.SystemConfig, VersionNumber: a.VersionNumber, ConfigHash: a.ConfigHash, CreatedAt: a.CreatedAt,
		UpdatedAt: a.UpdatedAt, Explicit: a.Explicit, VersionID: a.VersionID, Seq: a.Seq}
}

func (r *agentRecord) agent() *domain.Agent {
	return &domain.Agent{ID: r.ID, AgentKey: r.AgentKey, Name: r.Name, Architecture: r.Architecture, EntryPoint: r.EntryPoint,
		IsPublic: r.IsPublic, IsShared: r.IsShared, OriginURL: r.OriginURL, Owner: r.Owner, Company: r.Company,
		SystemConfig: r.SystemConfig, VersionNumber: r.VersionNumber, ConfigHash: r.ConfigHash, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, Explicit: r.Explicit, VersionID: r.VersionID, Seq: r.Seq}
}

// versionRecord is the stored form of an agent version. Its system_config is the configuration's
// JSON with the members in the order the client wrote them (SystemConfigJSON); items written
// before held the object with its keys sorted, which reads the same way.
type versionRecord struct {
	ID            string          `json:"id"`
	AgentID       string          `json:"agent"`
	VersionNumber string          `json:"version_number"`
	SystemConfig  json.RawMessage `json:"system_config"`
	Metadata      map[string]any  `json:"metadata"`
	Seq           int             `json:"seq"`
	CreatedAt     time.Time       `json:"created_at"`
}

func newVersionRecord(v *domain.AgentVersion) (versionRecord, error) {
	cfg := v.SystemConfigJSON
	if cfg == nil {
		var err error
		if cfg, err = domain.ConfigDocOf(v.SystemConfig).OrderedJSON(); err != nil {
			return versionRecord{}, fmt.Errorf("encode version %s: %w", v.ID, err)
		}
	}
	return versionRecord{ID: v.ID, AgentID: v.AgentID, VersionNumber: v.VersionNumber, SystemConfig: cfg,
		Metadata: v.Metadata, Seq: v.Seq, CreatedAt: v.CreatedAt}, nil
}

func (r *versionRecord) version() (*domain.AgentVersion, error) {
	v := &domain.AgentVersion{ID: r.ID, AgentID: r.AgentID, VersionNumber: r.VersionNumber,
		Metadata: r.Metadata, Seq: r.Seq, CreatedAt: r.CreatedAt}
	if len(r.SystemConfig) == 0 || string(r.SystemConfig) == "null" {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(r.SystemConfig))
	dec.UseNumber()
	if err := dec.Decode(&v.SystemConfig); err != nil {
		return nil, fmt.Errorf("decode version %s: %w", r.ID, err)
	}
	// Written again as the API writes it: the stored text has encoding/json's HTML escapes.
	cfg, err := domain.ConfigDocJSON(v.SystemConfig, r.SystemConfig).OrderedJSON()
	if err != nil {
		return nil, fmt.Errorf("encode version %s: %w", r.ID, err)
	}
	v.SystemConfigJSON = cfg
	return v, nil
}

func agentPK(id string) string      { return "AGENT#" + id }
func agentKeyPK(k string) string    { return "AGENTKEY#" + k }
func companyAgents(c string) string { return "CO#" + c + "#AGENTS" }
func versionSK(seq int) string      { return fmt.Sprintf("V#%08d", seq) }

const agentSK = "A"

// sortTime writes a time for a sort key: fixed width, so that the strings sort as the times do
// (RFC 3339 with trimmed fractions puts .12 before .1). Lists page by this order.
func sortTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z")
}

func (st *Store) agentItem(a *domain.Agent) (map[string]types.AttributeValue, error) {
	it, err := item(agentPK(a.ID), agentSK, newAgentRecord(a))
	if err != nil {
		return nil, err
	}
	it["seq"] = numberAttr(int64(a.Seq))
	it[attrGSI1PK] = stringAttr(companyAgents(a.Company))
	it[attrGSI1SK] = stringAttr(sortTime(a.CreatedAt) + "#" + a.ID)
	return it, nil
}

func (st *Store) versionPut(v *domain.AgentVersion) (*types.Put, error) {
	r, err := newVersionRecord(v)
	if err != nil {
		return nil, err
	}
	it, err := item(agentPK(v.AgentID), versionSK(v.Seq), r)
	if err != nil {
		return nil, err
	}
	return &types.Put{TableName: aws.String(st.table), Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}, nil
}

// CreateAgent writes the agent, its first version and its agent_key claim in one transaction.
func (st *Store) CreateAgent(ctx context.Context, a *domain.Agent, v *domain.AgentVersion) error {
	ai, err := st.agentItem(a)
	if err != nil {
		return err
	}
	vp, err := st.versionPut(v)
	if err != nil {
		return err
	}
	claim := itemKey(agentKeyPK(a.AgentKey), "K")
	claim["agent_id"] = stringAttr(a.ID)
	err = st.transact(ctx, []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(st.table), Item: claim, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: aws.String(st.table), Item: ai, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: vp},
	})
	if cancelledAt(err, 0) {
		return fmt.Errorf("agent_key %q: %w", a.AgentKey, domain.ErrAgentKeyTaken)
	}
	if err != nil {
		return fmt.Errorf("create agent %s: %w", a.ID, translate(err))
	}
	return nil
}

// GetAgent reads one agent (one GetItem).
func (st *Store) GetAgent(ctx context.Context, id string) (*domain.Agent, error) {
	var r agentRecord
	if err := st.get(ctx, agentPK(id), agentSK, &r); err != nil {
		return nil, fmt.Errorf("get agent %s: %w", id, err)
	}
	return r.agent(), nil
}

// ListAgents calls each with a company's agents, newest first, until it returns false (one
// Query on gsi1 per 1 MB page, and no page after the one where each stops).
func (st *Store) ListAgents(ctx context.Context, company string, each func(*domain.Agent) bool) error {
	p := dynamodb.NewQueryPaginator(st.db, &dynamodb.QueryInput{
		TableName:                 aws.String(st.table),
		IndexName:                 aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(companyAgents(company))},
		ScanIndexForward:          aws.Bool(false),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list agents of %s: %w", company, translate(err))
		}
		for _, it := range page.Items {
			var r agentRecord
			if err := decode(it, &r); err != nil {
				return err
			}
			if !each(r.agent()) {
				return nil
			}
		}
	}
	return nil
}

// UpdateAgent replaces the agent if nobody changed it since it was read (seq), adding the new
// version in the same transaction.
func (st *Store) UpdateAgent(ctx context.Context, a *domain.Agent, v *domain.AgentVersion, prevSeq int) error {
	ai, err := st.agentItem(a)
	if err != nil {
		return err
	}
	put := &types.Put{
		TableName: aws.String(st.table), Item: ai,
		ConditionExpression:       aws.String("seq = :prev"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":prev": numberAttr(int64(prevSeq))},
	}
	if v == nil {
		return translate(st.put(ctx, &dynamodb.PutItemInput{Item: put.Item,
			ConditionExpression: put.ConditionExpression, ExpressionAttributeValues: put.ExpressionAttributeValues}))
	}
	vp, err := st.versionPut(v)
	if err != nil {
		return err
	}
	return translate(st.transact(ctx, []types.TransactWriteItem{{Put: put}, {Put: vp}}))
}

// DeleteAgent removes the agent and its key claim, then its versions.
func (st *Store) DeleteAgent(ctx context.Context, a *domain.Agent) error {
	_, err := st.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(st.table), Key: itemKey(agentPK(a.ID), agentSK), ConditionExpression: aws.String("attribute_exists(pk)")}},
		{Delete: &types.Delete{TableName: aws.String(st.table), Key: itemKey(agentKeyPK(a.AgentKey), "K")}},
	}})
	if cancelledAt(err, 0) {
		return domain.Errorf(domain.KindNotFound, "Agent %s not found", a.ID)
	}
	if err != nil {
		return translate(err)
	}
	items, err := st.query(ctx, versionsQuery(a.ID, true))
	if err != nil {
		return err
	}
	return st.deleteAll(ctx, items)
}

func versionsQuery(agentID string, keysOnly bool) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :p AND begins_with(sk, :v)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(agentPK(agentID)), ":v": stringAttr("V#")},
	}
	if keysOnly {
		in.ProjectionExpression = aws.String("pk, sk")
	}
	return in
}

// deleteAll removes items by key in batches of 25, retrying what DynamoDB leaves unprocessed.
func (st *Store) deleteAll(ctx context.Context, items []map[string]types.AttributeValue) error {
	for len(items) > 0 {
		batch := items[:min(25, len(items))]
		items = items[len(batch):]
		reqs := make([]types.WriteRequest, len(batch))
		for i, it := range batch {
			reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{attrPK: it[attrPK], attrSK: it[attrSK]}}}
		}
		pending := map[string][]types.WriteRequest{st.table: reqs}
		err := backoff.Retry(ctx, unprocessedPolicy, func(int) (time.Duration, bool, error) {
			out, err := st.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return 0, false, translate(err)
			}
			pending = out.UnprocessedItems
			return 0, len(pending[st.table]) > 0, unprocessed(len(pending[st.table]))
		})
		if err != nil {
			return fmt.Errorf("batch delete: %w", err)
		}
	}
	return nil
}

// ListVersions returns up to limit versions of an agent, oldest first, after skipping offset,
// and whether more follow. Versions are numbered 1, 2, 3 … without gaps (seq), so the offset is
// a key condition: the Query starts at version offset+1 and reads limit+1 items, however many
// versions come before.
func (st *Store) ListVersions(ctx context.Context, agentID string, offset, limit int) ([]*domain.AgentVersion, bool, error) {
	if offset >= maxVersionSeq {
		return []*domain.AgentVersion{}, false, nil
	}
	p := dynamodb.NewQueryPaginator(st.db, &dynamodb.QueryInput{
		TableName:              aws.String(st.table),
		KeyConditionExpression: aws.String("pk = :p AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": stringAttr(agentPK(agentID)), ":from": stringAttr(versionSK(offset + 1)), ":to": stringAttr(versionSK(maxVersionSeq)),
		},
		Limit: aws.Int32(int32(limit + 1)),
	})
	out := make([]*domain.AgentVersion, 0, limit)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, false, translate(err)
		}
		for _, it := range page.Items {
			if len(out) == limit {
				return out, true, nil
			}
			v, err := decodeVersion(it)
			if err != nil {
				return nil, false, err
			}
			out = append(out, v)
		}
	}
	return out, false, nil
}

// maxVersionSeq is the largest version number versionSK can write in its eight digits.
const maxVersionSeq = 99_999_999

// GetVersion reads one version by its sequence number.
func (st *Store) GetVersion(ctx context.Context, agentID string, seq int) (*domain.AgentVersion, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: itemKey(agentPK(agentID), versionSK(seq))})
	if err != nil {
		return nil, translate(err)
	}
	if out.Item == nil {
		return nil, domain.ErrNotFound
	}
	return decodeVersion(out.Item)
}

func decodeVersion(it map[string]types.AttributeValue) (*domain.AgentVersion, error) {
	var r versionRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	return r.version()
}

// AgentIDByKey resolves an agent_key to its agent id (one GetItem on the key claim).
func (st *Store) AgentIDByKey(ctx context.Context, agentKey string) (string, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: itemKey(agentKeyPK(agentKey), "K")})
	if err != nil {
		return "", translate(err)
	}
	id, ok := out.Item["agent_id"].(*types.AttributeValueMemberS)
	if !ok {
		return "", domain.ErrNotFound
	}
	return id.Value, nil
}
