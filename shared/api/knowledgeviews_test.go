package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
)

var updateViews = flag.Bool("update-views", false, "rewrite testdata/knowledge_views.json")

// viewSamples are the views with every field set, and with the empty lists and absent values
// the views leave.
func viewSamples() []any {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	ds := []datasourceJSON{{ID: "d1", Name: "n", Type: domain.DatasourceType, Status: "active"}}
	list := kbListJSON{ID: "k", Name: "n", Description: "d", ProcessingEngine: "opensearch", Status: "completed", Progress: 50,
		Datasources: ds, DatasourceCount: 1, TotalDatasources: 1, IngestedDatasources: []datasourceJSON{}, FailedDatasources: ds,
		DatasourceErrors: map[string]string{"d1": "bad"}, DatasourceSnapshots: map[string]snapshotJSON{"d1": {ID: "d1", Name: "n", Type: "t", IngestionStatus: "failed", Chunks: 3, Attempts: 2, Error: "e", UpdatedAt: &now}, "d2": {ID: "d2"}},
		SuccessRate: 7, ProcessingMetadata: processingMetadataJSON{}, CreatedByName: "bob", CreatedAt: now, UpdatedAt: now, Error: "err"}
	list2 := list
	list2.Error = ""
	return []any{
		&fileJSON{ID: "f", FileID: "f", OriginalFilename: "a.txt", FileType: "txt", MediaType: "text/plain", SizeBytes: 3, Status: "active", Tags: []string{}, ContentHash: "h", CreatedAt: now, UpdatedAt: now},
		&fileJSON{ID: "f", Error: "e", Tags: []string{"a"}},
		pendingUploadView(&library.PendingUpload{FileID: "f", UploadURL: "u", Method: "PUT", Headers: map[string]string{"a": "b"}, ExpiresAt: now}),
		&collectionJSON{ID: "c", Name: "n", Description: "d", Status: "pending", Progress: 1, DataSourceCount: 2, TotalSize: 3, CreatedAt: now, UpdatedAt: now},
		&collectionDetailJSON{collectionJSON: collectionJSON{ID: "c"}, Datasources: []collectionSourceJSON{{ID: "s", DataSource: "s", DataSourceName: "n", DataSourceType: "t", DataSourceSize: 4, CreatedAt: now}}},
		&collectionDetailJSON{Datasources: []collectionSourceJSON{}},
		&bulkResultJSON{Success: true, Processed: 1, Failed: 1, Results: []bulkItemJSON{{FileID: "a", Status: "success"}, {FileID: "b", Status: "failed", Error: "x"}}},
		&addFilesResultJSON{Success: false, Added: 1, Failed: 1, Results: []addFilesItemJSON{{FileID: "a", Status: "added"}, {FileID: "b", Status: "failed", Error: "x"}}},
		&list, &list2,
		&kbDetailJSON{kbListJSON: list, DatasetName: "", NormalizedDatasetName: "n", SelectedCollections: []string{}, SelectedDatasources: []string{"a"},
			ChunkingStrategy: chunkingJSON{Strategy: "recursive", ChunkSize: 5, ContextualHeaders: true}, EmbeddingConfig: embeddingJSON{Provider: "p"}, LLMConfig: map[string]any{}, CompanyName: "acme", LastIngestedAt: &now},
		&kbDetailJSON{kbListJSON: list2},
		&statusJSON{Success: true, Message: "m", StatusUpdated: true, KnowledgeBase: &kbStatusJSON{ID: "k", Name: "n", Status: "s", Progress: 1, ProcessingEngine: "o", DatasourceCount: 1, TotalDatasources: 1,
			SuccessRate: 3, IngestedDatasources: ds, FailedDatasources: []datasourceJSON{}, DatasourceErrors: map[string]string{}, Error: "e", UpdatedAt: now}},
		&statusJSON{},
		&searchJSON{Results: []searchHitJSON{{FileID: "f", FileName: "n", ChunkIndex: 2, Text: "t", Score: 0.25}}},
		searchView([]domain.Hit{}),
	}
}

// TestKnowledgeViews pins the JSON of the files, collections and knowledge-bases views, field
// names, order, empty lists and omitted fields, in testdata/knowledge_views.json (-update-views
// rewrites it). TestKnowledgeViewsDerive checks what the views make of the feature's records.
func TestKnowledgeViews(t *testing.T) {
	var got []json.RawMessage
	for _, v := range viewSamples() {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
	raw, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, '\n')
	golden := filepath.Join("testdata", "knowledge_views.json")
	if *updateViews {
		if err := os.WriteFile(golden, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, raw) {
		t.Errorf("views (-want +got):\n%s", cmp.Diff(string(want), string(raw)))
	}
}

// TestKnowledgeViewsDerive: the views derive from the feature's records what the contract
// shows: a knowledge base's live datasources sorted by id with their files' statuses (deleted
// when gone), the ingested and failed ones, errors and snapshots; a collection's status and
// counts from its files; the counts of bulk and add-files items; empty lists, never null.
func TestKnowledgeViewsDerive(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	kb := &knowledge.KB{KnowledgeBase: &domain.KnowledgeBase{ID: "k", Company: "acme", Owner: "bob", Name: "Product Docs (v2)",
		Engine: domain.EngineOpenSearch, Status: domain.KBRunning, Metadata: domain.ProcessingMetadata{Phase: "embedding"},
		Sources: map[string]*domain.Datasource{
			"d": {Name: "d.txt", Status: domain.IngestUnchanged, Chunks: 2},
			"b": {Name: "b.txt", Status: domain.IngestFailed, Error: "bad", Attempts: 3, UpdatedAt: &now},
			"c": {Name: "c.txt", Status: domain.IngestRemoved},
			"a": {Name: "a.txt", Status: domain.IngestIngested, Chunks: 5},
			"e": {Name: "e.txt", Status: domain.IngestPending},
		}, CreatedAt: now, UpdatedAt: now},
		SourceFiles: map[string]*domain.File{"a": {ID: "a", Status: domain.FileActive}, "d": {ID: "d", Status: domain.FileArchived},
			"e": {ID: "e", Status: domain.FileActive}}}
	ds := func(id, status string) datasourceJSON {
		return datasourceJSON{ID: id, Name: id + ".txt", Type: domain.DatasourceType, Status: status}
	}
	wantList := kbListJSON{ID: "k", Name: "Product Docs (v2)", ProcessingEngine: "opensearch", Status: domain.KBRunning, Progress: 75,
		Datasources:     []datasourceJSON{ds("a", "active"), ds("b", "deleted"), ds("d", "archived"), ds("e", "active")},
		DatasourceCount: 4, TotalDatasources: 4,
		IngestedDatasources: []datasourceJSON{ds("a", "active"), ds("d", "archived")},
		FailedDatasources:   []datasourceJSON{ds("b", "deleted")},
		DatasourceErrors:    map[string]string{"b": "bad"},
		DatasourceSnapshots: map[string]snapshotJSON{
			"a": {ID: "a", Name: "a.txt", Type: domain.DatasourceType, IngestionStatus: domain.IngestIngested, Chunks: 5},
			"b": {ID: "b", Name: "b.txt", Type: domain.DatasourceType, IngestionStatus: domain.IngestFailed, Attempts: 3, Error: "bad", UpdatedAt: &now},
			"d": {ID: "d", Name: "d.txt", Type: domain.DatasourceType, IngestionStatus: domain.IngestUnchanged, Chunks: 2},
			"e": {ID: "e", Name: "e.txt", Type: domain.DatasourceType, IngestionStatus: domain.IngestPending},
		},
		SuccessRate: 50, ProcessingMetadata: processingMetadataJSON{Phase: "embedding"}, CreatedByName: "bob", CreatedAt: now, UpdatedAt: now}
	empty := &knowledge.KB{KnowledgeBase: &domain.KnowledgeBase{ID: "z", Status: domain.KBCompleted}}
	emptyList := kbListJSON{ID: "z", Status: domain.KBCompleted, Progress: 100, Datasources: []datasourceJSON{},
		IngestedDatasources: []datasourceJSON{}, FailedDatasources: []datasourceJSON{}, DatasourceErrors: map[string]string{},
		DatasourceSnapshots: map[string]snapshotJSON{}}
	files := []*domain.File{{ID: "f1", Name: "one.pdf", FileType: "document", Size: 10, Status: domain.FileActive, CreatedAt: now},
		{ID: "f2", Name: "two.png", FileType: "image", Size: 5, Status: domain.FileUploading}}
	coll := func(files ...*domain.File) *library.Collection {
		return &library.Collection{Collection: &domain.Collection{ID: "c", Name: "n", CreatedAt: now}, Files: files}
	}
	failedFile := &domain.File{ID: "f3", Size: 1, Status: domain.FileError}
	items := []library.BulkItem{{FileID: "a", Status: library.ItemSucceeded}, {FileID: "b", Status: library.ItemFailed, Error: "file not found"}}
	tests := []struct {
		name      string
		got, want any
	}{
		{"kb list", kbListView(kb), &wantList},
		{"kb detail", kbDetailView(kb), &kbDetailJSON{kbListJSON: wantList, NormalizedDatasetName: "product_docs_v2",
			SelectedCollections: []string{}, SelectedDatasources: []string{}, LLMConfig: map[string]any{}, CompanyName: "acme"}},
		{"empty kb", kbListView(empty), &emptyList},
		{"status", statusView(&knowledge.KBStatus{KB: kb, Updated: true}), &statusJSON{Success: true, StatusUpdated: true,
			Message: "Status checked for knowledge base 'Product Docs (v2)'", KnowledgeBase: &kbStatusJSON{ID: "k", Name: "Product Docs (v2)",
				Status: domain.KBRunning, Progress: 75, ProcessingEngine: "opensearch", DatasourceCount: 4, TotalDatasources: 4, SuccessRate: 50,
				IngestedDatasources: wantList.IngestedDatasources, FailedDatasources: wantList.FailedDatasources, DatasourceErrors: wantList.DatasourceErrors,
				ProcessingMetadata: wantList.ProcessingMetadata, UpdatedAt: now}}},
		{"collection uploading", collectionView(coll(files...)), &collectionJSON{ID: "c", Name: "n", Status: domain.CollectionPending, Progress: 50,
			DataSourceCount: 2, TotalSize: 15, CreatedAt: now}},
		{"collection failed", collectionView(coll(files[0], failedFile)), &collectionJSON{ID: "c", Name: "n", Status: domain.CollectionFailed,
			Progress: 100, DataSourceCount: 2, TotalSize: 11, CreatedAt: now}},
		{"collection completed", collectionView(coll(files[0])), &collectionJSON{ID: "c", Name: "n", Status: domain.CollectionCompleted,
			Progress: 100, DataSourceCount: 1, TotalSize: 10, CreatedAt: now}},
		{"empty collection", collectionDetailView(coll()), &collectionDetailJSON{collectionJSON: collectionJSON{ID: "c", Name: "n",
			Status: domain.CollectionPending, CreatedAt: now}, Datasources: []collectionSourceJSON{}}},
		{"collection detail", collectionDetailView(coll(files[0])).Datasources, []collectionSourceJSON{{ID: "f1", DataSource: "f1",
			DataSourceName: "one.pdf", DataSourceType: "document", DataSourceSize: 10, CreatedAt: now}}},
		{"file without tags", fileView(&domain.File{ID: "f", Name: "a.txt", Size: 3, ObjectKey: "k"}), &fileJSON{ID: "f", FileID: "f",
			OriginalFilename: "a.txt", SizeBytes: 3, Tags: []string{}}},
		{"bulk", bulkResultView(items), &bulkResultJSON{Success: false, Processed: 1, Failed: 1,
			Results: []bulkItemJSON{{FileID: "a", Status: "success"}, {FileID: "b", Status: "failed", Error: "file not found"}}}},
		{"bulk all done", bulkResultView(items[:1]), &bulkResultJSON{Success: true, Processed: 1, Results: []bulkItemJSON{{FileID: "a", Status: "success"}}}},
		{"add files", addFilesResultView(items), &addFilesResultJSON{Success: false, Added: 1, Failed: 1,
			Results: []addFilesItemJSON{{FileID: "a", Status: "added"}, {FileID: "b", Status: "failed", Error: "file not found"}}}},
		{"no hits", searchView(nil), &searchJSON{Results: []searchHitJSON{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.got, cmp.AllowUnexported(collectionDetailJSON{}, kbDetailJSON{})); d != "" {
				t.Errorf("view (-want +got):\n%s", d)
			}
		})
	}
}
