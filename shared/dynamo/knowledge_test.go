package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// The store is the knowledge feature's Store (a test file may import the feature; the adapter
// itself may not).
var _ knowledge.Store = (*dynamo.Store)(nil)

// countingClient counts the DynamoDB calls that pass through it.
type countingClient struct {
	dynamo.Client
	mu    sync.Mutex
	calls map[string]int
}

func newCounting(c dynamo.Client) *countingClient {
	return &countingClient{Client: c, calls: map[string]int{}}
}

func (c *countingClient) count(op string) {
	c.mu.Lock()
	c.calls[op]++
	c.mu.Unlock()
}

// reset returns the calls counted so far and starts again from none.
func (c *countingClient) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.calls
	c.calls = map[string]int{}
	return got
}

func (c *countingClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.count("GetItem")
	return c.Client.GetItem(ctx, in, opts...)
}

func (c *countingClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count("PutItem")
	return c.Client.PutItem(ctx, in, opts...)
}

func (c *countingClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count("UpdateItem")
	return c.Client.UpdateItem(ctx, in, opts...)
}

func (c *countingClient) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.count("DeleteItem")
	return c.Client.DeleteItem(ctx, in, opts...)
}

func (c *countingClient) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.count("Query")
	return c.Client.Query(ctx, in, opts...)
}

func (c *countingClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.count("TransactWriteItems")
	return c.Client.TransactWriteItems(ctx, in, opts...)
}

func (c *countingClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.count("BatchGetItem")
	return c.Client.BatchGetItem(ctx, in, opts...)
}

func (c *countingClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.count("BatchWriteItem")
	return c.Client.BatchWriteItem(ctx, in, opts...)
}

// knowledgeStore is a store on a fresh table, with a count of its calls.
func knowledgeStore(t *testing.T) (*dynamo.Store, *countingClient) {
	env := localstack.NewTestEnv(t)
	c := newCounting(env.DynamoDB())
	return dynamo.NewStore(c, env.Config.Table), c
}

func newFile(company string, created time.Time) *domain.File {
	return &domain.File{ID: uuid.NewString(), Company: company, Owner: "alice", Name: "report <Q1> & notes.pdf", FileType: "document",
		MediaType: "application/pdf", Size: 1234, Status: domain.FileActive, Tags: []string{"finance"},
		ContentHash: strings.Repeat("ab", 32), ObjectKey: "files/" + company + "/x", CreatedAt: created, UpdatedAt: created}
}

// TestFileEntity: a file is created and read back whole, listed newest first in its company
// only, read in a batch, updated under its optimistic lock (a stale read is a conflict; an
// update after a delete is not found and never brings the record back), and deleted (a second
// delete is no error).
func TestFileEntity(t *testing.T) {
	st, calls := knowledgeStore(t)
	ctx := context.Background()
	base := time.Now().UTC().Add(-time.Hour)
	var want []string // newest first
	for i := range 3 {
		// Fractions that RFC 3339 would trim (.1 and .12) must still sort as the times do.
		f := newFile("acme", base.Truncate(time.Second).Add(time.Duration(i)*100*time.Millisecond+time.Duration(i)*20*time.Millisecond))
		if err := st.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		want = append([]string{f.ID}, want...)
	}
	other := newFile("globex", base)
	if err := st.CreateFile(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateFile(ctx, other); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("second create of one id: %v, want a conflict", err)
	}
	calls.reset()
	got, err := st.GetFile(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(other, got); d != "" {
		t.Errorf("get (-put +got):\n%s", d)
	}
	if n := calls.reset(); n["GetItem"] != 1 || len(n) != 1 {
		t.Errorf("get made %v, want 1 GetItem", n)
	}
	files, next, err := st.ListFiles(ctx, "acme", "", 10)
	if err != nil || next != "" {
		t.Fatalf("list: next %q, %v", next, err)
	}
	var ids []string
	for _, f := range files {
		ids = append(ids, f.ID)
	}
	if d := cmp.Diff(want, ids); d != "" {
		t.Errorf("acme's files, newest first (-want +got):\n%s", d)
	}
	if files, _, err := st.ListFiles(ctx, "globex", "", 10); err != nil || len(files) != 1 || files[0].ID != other.ID {
		t.Errorf("globex's files: %v, %v", files, err)
	}
	batch, err := st.GetFiles(ctx, append(append([]string{}, want...), other.ID, uuid.NewString(), want[0]))
	if err != nil || len(batch) != 4 || batch[other.ID].Company != "globex" || batch[want[1]].Name != "report <Q1> & notes.pdf" {
		t.Errorf("batch read: %d files, %v", len(batch), err)
	}

	prev := other.UpdatedAt
	other.Status, other.Tags, other.UpdatedAt = domain.FileArchived, []string{}, prev.Add(time.Second)
	if err := st.UpdateFile(ctx, other, prev); err != nil {
		t.Fatal(err)
	}
	if got, err := st.GetFile(ctx, other.ID); err != nil || got.Status != domain.FileArchived {
		t.Errorf("after update: %+v, %v", got, err)
	}
	stale := *other
	stale.Tags = []string{"stale"}
	if err := st.UpdateFile(ctx, &stale, prev); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("update from a stale read: %v, want a conflict", err)
	}
	for range 2 {
		if err := st.DeleteFile(ctx, other.ID); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	// A tag change that read the file before the delete must not bring it back.
	if err := st.UpdateFile(ctx, other, other.UpdatedAt); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("update after delete: %v, want not found", err)
	}
	if _, err := st.GetFile(ctx, other.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("get after delete: %v, want not found", err)
	}
}

// TestListPages: a company list is read a page at a time with a cursor, newest first, each page
// costing one Query that reads only its items; every record is seen once across the pages.
func TestListPages(t *testing.T) {
	st, calls := knowledgeStore(t)
	ctx := context.Background()
	base := time.Now().UTC().Add(-time.Hour)
	var want []string
	for i := range 23 {
		f := newFile("acme", base.Add(time.Duration(i)*time.Millisecond))
		if err := st.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		want = append([]string{f.ID}, want...)
	}
	for i := range 5 { // another company's files, older and newer
		if err := st.CreateFile(ctx, newFile("globex", base.Add(time.Duration(i*10-20)*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
	}
	calls.reset()
	var got []string
	after, pages := "", 0
	for {
		files, next, err := st.ListFiles(ctx, "acme", after, 10)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(files) > 10 {
			t.Fatalf("page of %d files, want at most 10", len(files))
		}
		for _, f := range files {
			got = append(got, f.ID)
		}
		if next == "" {
			break
		}
		after = next
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files across pages (-want +got):\n%s", d)
	}
	if n := calls.reset(); pages != 3 || n["Query"] != 3 || len(n) != 1 {
		t.Errorf("%d pages made %v, want 3 Queries", pages, n)
	}
	if _, _, err := st.ListFiles(ctx, "acme", "not-a-cursor", 10); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("malformed cursor: %v, want invalid", err)
	}
}

// TestCollectionEntity: CRUD, the company list, and the optimistic lock of UpdateCollection
// (a stale UpdatedAt is a conflict that writes nothing; a deleted collection is not found).
func TestCollectionEntity(t *testing.T) {
	st, calls := knowledgeStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	older := &domain.Collection{ID: uuid.NewString(), Company: "acme", Owner: "alice", Name: "old", FileIDs: []string{},
		CreatedAt: now.Add(-time.Minute), UpdatedAt: now.Add(-time.Minute)}
	c := &domain.Collection{ID: uuid.NewString(), Company: "acme", Owner: "alice", Name: "docs", Description: "d",
		FileIDs: []string{"f1"}, TotalSize: 10, CreatedAt: now, UpdatedAt: now}
	for _, x := range []*domain.Collection{older, c} {
		if err := st.PutCollection(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.GetCollection(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c, got); d != "" {
		t.Errorf("get (-put +got):\n%s", d)
	}
	list, _, err := st.ListCollections(ctx, "acme", "", 100)
	if err != nil || len(list) != 2 || list[0].ID != c.ID || list[1].ID != older.ID {
		t.Errorf("list, newest first: %v, %v", list, err)
	}
	if list, _, err := st.ListCollections(ctx, "globex", "", 100); err != nil || len(list) != 0 {
		t.Errorf("globex sees %v, %v", list, err)
	}

	// Two writers read the same version; the first wins, the second is refused.
	first, second := *got, *got
	first.FileIDs, first.UpdatedAt = []string{"f1", "f2"}, now.Add(time.Second)
	second.FileIDs, second.UpdatedAt = []string{"f1", "f3"}, now.Add(2*time.Second)
	calls.reset()
	if err := st.UpdateCollection(ctx, &first, got.UpdatedAt); err != nil {
		t.Fatalf("first update: %v", err)
	}
	if n := calls.reset(); n["PutItem"] != 1 || len(n) != 1 {
		t.Errorf("update made %v, want 1 PutItem", n)
	}
	if err := st.UpdateCollection(ctx, &second, got.UpdatedAt); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("stale update: %v, want conflict", err)
	}
	if now, err := st.GetCollection(ctx, c.ID); err != nil || !cmp.Equal(now.FileIDs, []string{"f1", "f2"}) {
		t.Errorf("after the refused update: %+v, %v (the first writer's files must stay)", now, err)
	}
	if err := st.UpdateCollection(ctx, &second, first.UpdatedAt); err != nil {
		t.Errorf("update after reading again: %v", err)
	}
	if err := st.DeleteCollection(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateCollection(ctx, &second, second.UpdatedAt); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("update of a deleted collection: %v, want not found", err)
	}
	if _, err := st.GetCollection(ctx, c.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
}

func newKB(company, runID string, created time.Time, files ...string) *domain.KnowledgeBase {
	kb := &domain.KnowledgeBase{ID: uuid.NewString(), Company: company, Owner: "alice", Name: "kb", Engine: domain.EngineOpenSearch,
		Collections: []string{}, Files: files, Chunking: domain.Chunking{Strategy: "recursive", ChunkSize: 1000, ChunkOverlap: 100},
		Embedding: domain.Embedding{Provider: "local", Model: "use-lite", Dimensions: 512}, Index: "agentorch-kb-use-lite-512",
		Status: domain.KBRunning, Sources: map[string]*domain.Datasource{}, RunID: runID, RunStarted: &created,
		StatusChanged: created, CreatedAt: created, UpdatedAt: created}
	for _, f := range files {
		kb.Sources[f] = &domain.Datasource{FileID: f, Name: f + ".txt", Status: domain.IngestPending}
	}
	return kb
}

// TestKBEntity: a knowledge base round-trips with its datasources; UpdateKB under a superseded
// run is a conflict and on a deleted knowledge base not found.
func TestKBEntity(t *testing.T) {
	st, calls := knowledgeStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	kb := newKB("acme", "run-1", now, "f1", "f2")
	if err := st.PutKB(ctx, kb); err != nil {
		t.Fatal(err)
	}
	older := newKB("acme", "run-0", now.Add(-time.Minute))
	if err := st.PutKB(ctx, older); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetKB(ctx, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(kb, got); d != "" {
		t.Errorf("get (-put +got):\n%s", d)
	}
	list, _, err := st.ListKBs(ctx, "acme", "", 100)
	if err != nil || len(list) != 2 || list[0].ID != kb.ID || list[1].ID != older.ID || len(list[0].Sources) != 2 {
		t.Errorf("list, newest first with sources: %v, %v", list, err)
	}
	if list, _, err := st.ListKBs(ctx, "globex", "", 100); err != nil || len(list) != 0 {
		t.Errorf("globex sees %v, %v", list, err)
	}

	// A sync starts run-2 over run-1; run-1's final write is then refused.
	next := *got
	next.RunID, next.Sources = "run-2", map[string]*domain.Datasource{"f3": {FileID: "f3", Status: domain.IngestPending}}
	calls.reset()
	if err := st.UpdateKB(ctx, &next, "run-1"); err != nil {
		t.Fatalf("start run-2: %v", err)
	}
	if n := calls.reset(); n["PutItem"] != 1 || len(n) != 1 {
		t.Errorf("update made %v, want 1 PutItem", n)
	}
	stale := *got
	stale.Status = domain.KBCompleted
	if err := st.UpdateKB(ctx, &stale, "run-1"); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("superseded run's update: %v, want conflict", err)
	}
	cur, err := st.GetKB(ctx, kb.ID)
	if err != nil || cur.RunID != "run-2" || cur.Status != domain.KBRunning || len(cur.Sources) != 1 || cur.Sources["f3"] == nil {
		t.Errorf("after the refused update: %+v, %v", cur, err)
	}
	if err := st.DeleteKB(ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateKB(ctx, &next, "run-2"); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("update of a deleted knowledge base: %v, want not found", err)
	}
	if _, err := st.GetKB(ctx, kb.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if err := st.DeleteKB(ctx, kb.ID); err != nil {
		t.Errorf("second delete: %v", err)
	}
}

// TestUpdateSourceConcurrent: 20 workers of one run set 20 datasources of one knowledge base at
// once, one UpdateItem each, and no write is lost; each gets back the whole record as of its
// write. A superseded run is a conflict, a deleted knowledge base not found.
func TestUpdateSourceConcurrent(t *testing.T) {
	st, calls := knowledgeStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	var files []string
	for i := range 20 {
		files = append(files, fmt.Sprintf("file-%02d-%s", i, uuid.NewString()))
	}
	kb := newKB("acme", "run-1", now, files...)
	if err := st.PutKB(ctx, kb); err != nil {
		t.Fatal(err)
	}
	calls.reset()
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := now.Add(time.Duration(i+1) * time.Second)
			d := &domain.Datasource{FileID: f, Name: f + ".txt", Status: domain.IngestIngested, Chunks: i + 1, Attempts: 1,
				ContentHash: fmt.Sprintf("%064d", i), UpdatedAt: &at}
			got, err := st.UpdateSource(ctx, kb.ID, "run-1", d)
			if err == nil && (got.ID != kb.ID || got.Name != kb.Name || len(got.Sources) != len(files) || !cmp.Equal(got.Sources[f], d)) {
				err = fmt.Errorf("returned record %+v lacks the write %+v", got, d)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	if n := calls.reset(); n["UpdateItem"] != len(files) || len(n) != 1 {
		t.Errorf("20 updates made %v, want 20 UpdateItem and nothing else", n)
	}
	got, err := st.GetKB(ctx, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		d := got.Sources[f]
		if d == nil || d.Status != domain.IngestIngested || d.Chunks != i+1 {
			t.Errorf("datasource %s after the concurrent writes: %+v", f, d)
		}
	}
	if got.Progress() != 100 || got.Name != kb.Name || got.RunID != "run-1" {
		t.Errorf("record after the writes: progress %d, %+v", got.Progress(), got)
	}

	late := &domain.Datasource{FileID: files[0], Status: domain.IngestFailed, Error: "late"}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-0", late); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("stale run: %v, want conflict", err)
	}
	if got, err := st.GetKB(ctx, kb.ID); err != nil || got.Sources[files[0]].Status != domain.IngestIngested {
		t.Errorf("the stale run wrote: %+v, %v", got.Sources[files[0]], err)
	}
	if err := st.DeleteKB(ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", late); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("deleted knowledge base: %v, want not found", err)
	}
	if _, err := st.GetKB(ctx, kb.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the refused update created an item: %v", err)
	}
}

// TestKBDatasourceBudget: the item-size budget infra/README.md documents. A knowledge base of
// 1,000 datasources, each with a 60-character name, a content hash and a short error, fits in
// one item (about 360 bytes a datasource) and takes further updates; a write past DynamoDB's
// 400 KB is request_too_large, not a 500.
func TestKBDatasourceBudget(t *testing.T) {
	st, _ := knowledgeStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	var files []string
	for range 1000 {
		files = append(files, uuid.NewString())
	}
	kb := newKB("acme", "run-1", now, files...)
	kb.Collections = []string{uuid.NewString()}
	for i, f := range files {
		kb.Sources[f] = &domain.Datasource{FileID: f, Name: strings.Repeat("n", 51) + fmt.Sprintf("-%04d.pdf", i), Status: domain.IngestFailed,
			Error: "The file has no text to index", ContentHash: strings.Repeat("c", 64), Chunks: 120, Attempts: 3, UpdatedAt: &now}
	}
	if err := st.PutKB(ctx, kb); err != nil {
		t.Fatalf("1,000 datasources: %v", err)
	}
	d := *kb.Sources[files[0]]
	d.Status, d.Error = domain.IngestIngested, ""
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", &d); err != nil {
		t.Fatalf("update in a knowledge base of 1,000 datasources: %v", err)
	}
	big := &domain.Datasource{FileID: uuid.NewString(), Status: domain.IngestFailed, Error: strings.Repeat("x", 200_000)}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", big); domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("update past 400 KB: %v, want request_too_large", err)
	}
}

// TestKnowledgeBaseOwners: the companies of existing knowledge bases, in one BatchGetItem per
// 100 ids; unknown ids are absent.
func TestKnowledgeBaseOwners(t *testing.T) {
	st, calls := knowledgeStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	var ids []string
	want := map[string]string{}
	for i := range 3 {
		company := []string{"acme", "globex", "acme#KBS"}[i]
		kb := newKB(company, "run-1", now, "f1")
		if err := st.PutKB(ctx, kb); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, kb.ID)
		want[kb.ID] = company
	}
	for range 120 {
		ids = append(ids, uuid.NewString())
	}
	ids = append(ids, ids[0]) // duplicates are read once
	calls.reset()
	got, err := st.KnowledgeBaseOwners(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("owners (-want +got):\n%s", d)
	}
	if n := calls.reset()["BatchGetItem"]; n != 2 {
		t.Errorf("%d BatchGetItem calls for 123 ids, want 2", n)
	}
	if got, err := st.KnowledgeBaseOwners(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v %v", got, err)
	}
	if n := calls.reset()["BatchGetItem"]; n != 0 {
		t.Errorf("%d calls for no ids", n)
	}
}
