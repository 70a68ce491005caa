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
)

var updateViews = flag.Bool("update-views", false, "rewrite testdata/knowledge_views.json")

// viewSamples are read models with every field set, and with the empty lists and absent
// values the feature leaves, each through its view.
func viewSamples() []any {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	ds := []knowledge.DatasourceView{{ID: "d1", Name: "n", Type: knowledge.DatasourceType, Status: "active"}}
	list := knowledge.KBListView{ID: "k", Name: "n", Description: "d", ProcessingEngine: "opensearch", Status: "completed", Progress: 50,
		Datasources: ds, DatasourceCount: 1, TotalDatasources: 1, IngestedDatasources: []knowledge.DatasourceView{}, FailedDatasources: ds,
		DatasourceErrors: map[string]string{"d1": "bad"}, DatasourceSnapshots: map[string]knowledge.Snapshot{"d1": {ID: "d1", Name: "n", Type: "t", IngestionStatus: "failed", Chunks: 3, Attempts: 2, Error: "e", UpdatedAt: &now}, "d2": {ID: "d2"}},
		SuccessRate: 7, ProcessingMetadata: domain.ProcessingMetadata{}, CreatedByName: "bob", CreatedAt: now, UpdatedAt: now, Error: "err"}
	list2 := list
	list2.Error = ""
	return []any{
		&knowledge.FileView{ID: "f", FileID: "f", OriginalFilename: "a.txt", FileType: "txt", MediaType: "text/plain", SizeBytes: 3, Status: "active", Tags: []string{}, ContentHash: "h", CreatedAt: now, UpdatedAt: now},
		&knowledge.FileView{ID: "f", Error: "e", Tags: []string{"a"}},
		&knowledge.PendingUpload{FileID: "f", UploadURL: "u", Method: "PUT", Headers: map[string]string{"a": "b"}, ExpiresAt: now},
		&knowledge.CollectionView{ID: "c", Name: "n", Description: "d", Status: "pending", Progress: 1, DataSourceCount: 2, TotalSize: 3, CreatedAt: now, UpdatedAt: now},
		&knowledge.CollectionDetail{CollectionView: knowledge.CollectionView{ID: "c"}, Datasources: []knowledge.CollectionSource{{ID: "s", DataSource: "s", DataSourceName: "n", DataSourceType: "t", DataSourceSize: 4, CreatedAt: now}}},
		&knowledge.CollectionDetail{Datasources: []knowledge.CollectionSource{}},
		&knowledge.BulkResult{Success: true, Processed: 1, Failed: 1, Results: []knowledge.BulkItem{{FileID: "a", Status: "success"}, {FileID: "b", Status: "failed", Error: "x"}}},
		&knowledge.AddFilesResult{Success: false, Added: 1, Failed: 1, Results: []knowledge.AddFilesItem{{FileID: "a", Status: "added"}, {FileID: "b", Status: "failed", Error: "x"}}},
		&list, &list2,
		&knowledge.KBDetail{KBListView: list, DatasetName: "", NormalizedDatasetName: "n", SelectedCollections: []string{}, SelectedDatasources: []string{"a"},
			ChunkingStrategy: domain.Chunking{Strategy: "recursive", ChunkSize: 5}, EmbeddingConfig: domain.Embedding{Provider: "p"}, LLMConfig: map[string]any{}, CompanyName: "acme", LastIngestedAt: &now},
		&knowledge.KBDetail{KBListView: list2},
		&knowledge.StatusView{Success: true, Message: "m", StatusUpdated: true, KnowledgeBase: &knowledge.KBStatus{ID: "k", Name: "n", Status: "s", Progress: 1, ProcessingEngine: "o", DatasourceCount: 1, TotalDatasources: 1,
			SuccessRate: 3, IngestedDatasources: ds, FailedDatasources: []knowledge.DatasourceView{}, DatasourceErrors: map[string]string{}, Error: "e", UpdatedAt: now}},
		&knowledge.StatusView{},
		&knowledge.SearchResult{Results: []knowledge.SearchHit{{FileID: "f", FileName: "n", ChunkIndex: 2, Text: "t", Score: 0.25}}},
		&knowledge.SearchResult{Results: []knowledge.SearchHit{}},
	}
}

// view is the JSON view the handlers write for a read model of the knowledge feature.
func view(t *testing.T, v any) any {
	switch v := v.(type) {
	case *knowledge.FileView:
		return fileView(v)
	case *knowledge.PendingUpload:
		return pendingUploadView(v)
	case *knowledge.CollectionView:
		return collectionView(v)
	case *knowledge.CollectionDetail:
		return collectionDetailView(v)
	case *knowledge.BulkResult:
		return bulkResultView(v)
	case *knowledge.AddFilesResult:
		return addFilesResultView(v)
	case *knowledge.KBListView:
		return kbListView(v)
	case *knowledge.KBDetail:
		return kbDetailView(v)
	case *knowledge.StatusView:
		return statusView(v)
	case *knowledge.SearchResult:
		return searchView(v)
	}
	t.Fatalf("no view of %T", v)
	return nil
}

// TestKnowledgeViews pins the JSON of the files, collections and knowledge-bases views, field
// names, order, empty lists and omitted fields, in testdata/knowledge_views.json (-update-views
// rewrites it).
func TestKnowledgeViews(t *testing.T) {
	var got []json.RawMessage
	for _, v := range viewSamples() {
		b, err := json.Marshal(view(t, v))
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
