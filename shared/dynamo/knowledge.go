package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// Knowledge records: files, collections and knowledge bases, one item each, listed per company
// through gsi1 by creation time. A knowledge base keeps its datasources outside data, one entry
// per file in the map attribute sources, so that the ingestion workers of one run each write
// their own entry with one UpdateItem instead of reading and rewriting the whole record.
const (
	fileSK       = "F"
	collectionSK = "C"
	kbSK         = "B"

	attrUpdatedAt = "updated_at" // a collection's UpdatedAt (its optimistic lock); a KB's last write
	attrRunID     = "run_id"     // a knowledge base's current run (the workers' write condition)
	attrSources   = "sources"    // a knowledge base's datasources: file id → JSON of the datasource
)

func filePK(id string) string            { return "FILE#" + id }
func collectionPK(id string) string      { return "COLL#" + id }
func kbPK(id string) string              { return "KB#" + id }
func companyFiles(c string) string       { return "CO#" + c + "#FILES" }
func companyCollections(c string) string { return "CO#" + c + "#COLLECTIONS" }
func companyKBs(c string) string         { return "CO#" + c + "#KBS" }

// listed gives an item the gsi1 keys of its company's list, newest last in key order.
func listed(it map[string]types.AttributeValue, list string, created time.Time, id string) {
	it[attrGSI1PK] = stringAttr(list)
	it[attrGSI1SK] = stringAttr(sortTime(created) + "#" + id)
}

// fileItem builds a file's item: the record, its updated_at (the optimistic lock of UpdateFile)
// and its place in the company's list.
func fileItem(f *domain.File) (map[string]types.AttributeValue, error) {
	it, err := rawItem(filePK(f.ID), fileSK, newFileRecord(f))
	if err != nil {
		return nil, err
	}
	it[attrUpdatedAt] = stringAttr(sortTime(f.UpdatedAt))
	listed(it, companyFiles(f.Company), f.CreatedAt, f.ID)
	return it, nil
}

// CreateFile stores a new file (one conditional PutItem): KindConflict if its id is taken.
func (st *Store) CreateFile(ctx context.Context, f *domain.File) error {
	it, err := fileItem(f)
	if err != nil {
		return err
	}
	err = st.put(ctx, &dynamodb.PutItemInput{Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if err != nil {
		return fmt.Errorf("create file %s: %w", f.ID, translate(err))
	}
	return nil
}

// UpdateFile replaces a file if it still exists and its stored updated_at is still prev (one
// conditional PutItem): KindNotFound if it was deleted meanwhile (so that a change racing a
// delete never brings the record back), KindConflict if someone changed it since it was read.
// A record written before files kept updated_at passes the time check.
func (st *Store) UpdateFile(ctx context.Context, f *domain.File, prev time.Time) error {
	it, err := fileItem(f)
	if err != nil {
		return err
	}
	err = st.putUnchanged(ctx, it, "attribute_exists(pk) AND (attribute_not_exists(#u) OR #u = :prev)", prev)
	if err != nil {
		return fmt.Errorf("update file %s: %w", f.ID, lostRace(err, "File "+f.ID, "The file was changed meanwhile; read it again"))
	}
	return nil
}

// GetFile reads a file (one GetItem).
func (st *Store) GetFile(ctx context.Context, id string) (*domain.File, error) {
	var f fileRecord
	if err := st.get(ctx, filePK(id), fileSK, &f); err != nil {
		return nil, fmt.Errorf("get file %s: %w", id, err)
	}
	return f.file(), nil
}

// ListFiles reads one page of a company's files, newest first: at most limit after the cursor
// after ("" from the newest), and the cursor of the next page ("" at the end). It reads only the
// page (a Query on gsi1 with Limit), whatever the number of the company's files.
func (st *Store) ListFiles(ctx context.Context, company, after string, limit int) ([]*domain.File, string, error) {
	items, next, err := st.listPage(ctx, companyFiles(company), filePK, fileSK, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("list files of %s: %w", company, err)
	}
	out := make([]*domain.File, 0, len(items))
	for _, it := range items {
		var f fileRecord
		if err := decode(it, &f); err != nil {
			return nil, "", err
		}
		out = append(out, f.file())
	}
	return out, next, nil
}

// GetFiles reads the files of ids that exist (missing ones are absent from the map): one
// eventually consistent BatchGetItem per 100 ids (half a read unit per file; every write of a
// file is conditional, so a stale read can never be written back), plus retries of unprocessed
// keys. It does not check companies.
func (st *Store) GetFiles(ctx context.Context, ids []string) (map[string]*domain.File, error) {
	out := make(map[string]*domain.File, len(ids))
	err := st.batchGet(ctx, ids, filePK, fileSK, false, "", nil, func(it map[string]types.AttributeValue) error {
		var f fileRecord
		if err := decode(it, &f); err != nil {
			return err
		}
		out[f.ID] = f.file()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("get files: %w", err)
	}
	return out, nil
}

// DeleteFile removes a file's record (one DeleteItem; deleting a missing file is no error).
func (st *Store) DeleteFile(ctx context.Context, id string) error {
	return st.deleteItem(ctx, filePK(id), fileSK)
}

func collectionItem(c *domain.Collection) (map[string]types.AttributeValue, error) {
	it, err := rawItem(collectionPK(c.ID), collectionSK, newCollectionRecord(c))
	if err != nil {
		return nil, err
	}
	it[attrUpdatedAt] = stringAttr(sortTime(c.UpdatedAt))
	listed(it, companyCollections(c.Company), c.CreatedAt, c.ID)
	return it, nil
}

// PutCollection stores a collection, creating or overwriting it (one PutItem).
func (st *Store) PutCollection(ctx context.Context, c *domain.Collection) error {
	it, err := collectionItem(c)
	if err != nil {
		return err
	}
	if err := st.put(ctx, &dynamodb.PutItemInput{Item: it}); err != nil {
		return fmt.Errorf("put collection %s: %w", c.ID, translate(err))
	}
	return nil
}

// GetCollection reads a collection (one GetItem).
func (st *Store) GetCollection(ctx context.Context, id string) (*domain.Collection, error) {
	var c collectionRecord
	if err := st.get(ctx, collectionPK(id), collectionSK, &c); err != nil {
		return nil, fmt.Errorf("get collection %s: %w", id, err)
	}
	return c.collection(), nil
}

// ListCollections reads one page of a company's collections, newest first, as ListFiles does.
func (st *Store) ListCollections(ctx context.Context, company, after string, limit int) ([]*domain.Collection, string, error) {
	items, next, err := st.listPage(ctx, companyCollections(company), collectionPK, collectionSK, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("list collections of %s: %w", company, err)
	}
	out := make([]*domain.Collection, 0, len(items))
	for _, it := range items {
		var c collectionRecord
		if err := decode(it, &c); err != nil {
			return nil, "", err
		}
		out = append(out, c.collection())
	}
	return out, next, nil
}

// DeleteCollection removes a collection (one DeleteItem; a missing one is no error).
func (st *Store) DeleteCollection(ctx context.Context, id string) error {
	return st.deleteItem(ctx, collectionPK(id), collectionSK)
}

// UpdateCollection replaces a collection if its stored updated_at is still prev (one conditional
// PutItem): a KindConflict error if someone changed it since it was read, KindNotFound if it is
// gone.
func (st *Store) UpdateCollection(ctx context.Context, c *domain.Collection, prev time.Time) error {
	it, err := collectionItem(c)
	if err != nil {
		return err
	}
	if err := st.putUnchanged(ctx, it, "#u = :prev", prev); err != nil {
		return fmt.Errorf("update collection %s: %w", c.ID, lostRace(err, "Collection "+c.ID, "The collection was changed meanwhile; read it again"))
	}
	return nil
}

// kbItem builds a knowledge base's item: the record without its datasources in data, the
// datasources in the sources map (always present, so that UpdateSource can set an entry).
func kbItem(kb *domain.KnowledgeBase) (map[string]types.AttributeValue, error) {
	it, err := rawItem(kbPK(kb.ID), kbSK, newKBRecord(kb))
	if err != nil {
		return nil, err
	}
	sources := make(map[string]types.AttributeValue, len(kb.Sources))
	for id, d := range kb.Sources {
		if d == nil {
			continue
		}
		v, _, err := sourceAttr(id, d)
		if err != nil {
			return nil, fmt.Errorf("encode knowledge base %s: %w", kb.ID, err)
		}
		sources[id] = v
	}
	it[attrSources] = &types.AttributeValueMemberM{Value: sources}
	it[attrRunID] = stringAttr(kb.RunID)
	it[attrUpdatedAt] = stringAttr(sortTime(kb.UpdatedAt))
	listed(it, companyKBs(kb.Company), kb.CreatedAt, kb.ID)
	openRoom(it)
	return it, nil
}

// decodeKB reads a knowledge base item: data, the sources map and the time of the last write.
func decodeKB(it map[string]types.AttributeValue) (*domain.KnowledgeBase, error) {
	var r kbRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	kb := r.knowledgeBase()
	kb.Sources = map[string]*domain.Datasource{}
	if m, ok := it[attrSources].(*types.AttributeValueMemberM); ok {
		for id, v := range m.Value {
			s, ok := sourceJSON(v)
			if !ok {
				return nil, fmt.Errorf("knowledge base %s: datasource %s is not a string", kb.ID, id)
			}
			var d sourceRecord
			if err := json.Unmarshal([]byte(s), &d); err != nil {
				return nil, fmt.Errorf("knowledge base %s: datasource %s: %w", kb.ID, id, err)
			}
			d.FileID = id
			ds := domain.Datasource(d)
			kb.Sources[id] = &ds
		}
	}
	if s, ok := it[attrUpdatedAt].(*types.AttributeValueMemberS); ok {
		if t, err := time.Parse(time.RFC3339Nano, s.Value); err == nil {
			kb.UpdatedAt = t
		}
	}
	return kb, nil
}

// PutKB stores a knowledge base with its datasources, creating or overwriting it (one PutItem).
func (st *Store) PutKB(ctx context.Context, kb *domain.KnowledgeBase) error {
	it, err := kbItem(kb)
	if err != nil {
		return err
	}
	if err := st.put(ctx, &dynamodb.PutItemInput{Item: it}); err != nil {
		return fmt.Errorf("put knowledge base %s: %w", kb.ID, translate(err))
	}
	return nil
}

// GetKB reads a knowledge base with its datasources (one GetItem, strongly consistent: the
// workers decide from it whether their run is still current).
func (st *Store) GetKB(ctx context.Context, id string) (*domain.KnowledgeBase, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: itemKey(kbPK(id), kbSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get knowledge base %s: %w", id, translate(err))
	}
	if out.Item == nil {
		return nil, fmt.Errorf("get knowledge base %s: %w", id, domain.ErrNotFound)
	}
	return decodeKB(out.Item)
}

// KnowledgeBaseOwners returns the company of each knowledge base of ids that exists (missing
// ones are absent from the map): one strongly consistent BatchGetItem per 100 ids that reads
// only the keys (the company is in the list key), plus retries of unprocessed keys. Agent and
// session validation check knowledge_bases with it.
func (st *Store) KnowledgeBaseOwners(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	prefix, suffix := companyKBs(""), "#KBS"
	prefix = strings.TrimSuffix(prefix, suffix)
	err := st.batchGet(ctx, ids, kbPK, kbSK, true, "#pk, #list", map[string]string{"#pk": attrPK, "#list": attrGSI1PK}, func(it map[string]types.AttributeValue) error {
		pk, _ := it[attrPK].(*types.AttributeValueMemberS)
		list, _ := it[attrGSI1PK].(*types.AttributeValueMemberS)
		if pk != nil && list != nil {
			out[strings.TrimPrefix(pk.Value, kbPK(""))] = strings.TrimSuffix(strings.TrimPrefix(list.Value, prefix), suffix)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge base owners: %w", err)
	}
	return out, nil
}

// ListKBs reads one page of a company's knowledge bases with their datasources, newest first,
// as ListFiles does.
func (st *Store) ListKBs(ctx context.Context, company, after string, limit int) ([]*domain.KnowledgeBase, string, error) {
	items, next, err := st.listPage(ctx, companyKBs(company), kbPK, kbSK, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("list knowledge bases of %s: %w", company, err)
	}
	out := make([]*domain.KnowledgeBase, 0, len(items))
	for _, it := range items {
		kb, err := decodeKB(it)
		if err != nil {
			return nil, "", err
		}
		out = append(out, kb)
	}
	return out, next, nil
}

// DeleteKB removes a knowledge base's record (one DeleteItem; a missing one is no error). Its
// workers' next UpdateSource then fails with KindNotFound.
func (st *Store) DeleteKB(ctx context.Context, id string) error {
	return st.deleteItem(ctx, kbPK(id), kbSK)
}

// UpdateKB replaces a knowledge base, datasources included, if its stored run is still runID
// (one conditional PutItem): KindConflict if another run superseded it, KindNotFound if it is
// gone. It replaces the whole sources map, so the caller writes it from a record read after
// the run's last UpdateSource (or starts a new run, whose workers write nothing under runID).
func (st *Store) UpdateKB(ctx context.Context, kb *domain.KnowledgeBase, runID string) error {
	it, err := kbItem(kb)
	if err != nil {
		return err
	}
	err = st.put(ctx, &dynamodb.PutItemInput{
		Item:                                it,
		ConditionExpression:                 aws.String("#r = :r"),
		ExpressionAttributeNames:            map[string]string{"#r": attrRunID},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":r": stringAttr(runID)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		return fmt.Errorf("update knowledge base %s: %w", kb.ID, lostRace(err, "Knowledge base "+kb.ID, "The knowledge base's run was superseded"))
	}
	return nil
}

// putUnchanged writes it over a record on cond, where #u is the record's updated_at and :prev
// the one the writer read (optimistic concurrency); the old item comes back with a failed
// condition, for lostRace.
func (st *Store) putUnchanged(ctx context.Context, it map[string]types.AttributeValue, cond string, prev time.Time) error {
	return st.put(ctx, &dynamodb.PutItemInput{
		Item:                                it,
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            map[string]string{"#u": attrUpdatedAt},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":prev": stringAttr(sortTime(prev))},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
}

// lostRace translates a failed conditional write that returned the old item (ALL_OLD): no item
// is KindNotFound, a changed one KindConflict with msg.
func lostRace(err error, what, msg string) error {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return translate(err)
	}
	if len(ccf.Item) == 0 {
		return &domain.Error{Kind: domain.KindNotFound, Message: what + " not found", Err: err}
	}
	return &domain.Error{Kind: domain.KindConflict, Message: msg, Err: err}
}

// newestFirst queries a company list of gsi1, newest first.
func newestFirst(list string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		IndexName:                 aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(list)},
		ScanIndexForward:          aws.Bool(false),
	}
}

// deleteItem removes one item by key; a missing item is no error.
func (st *Store) deleteItem(ctx context.Context, pk, sk string) error {
	if _, err := st.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.table), Key: itemKey(pk, sk)}); err != nil {
		return fmt.Errorf("delete %s: %w", pk, translate(err))
	}
	return nil
}
