package knowledge

// The read models of files, collections and knowledge bases: what the feature answers, with
// the derived fields (statuses, progress, datasource lists) computed. The api package builds
// their JSON views.

import (
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/agentorch/agentorch/shared/domain"
)

// FileView is a file record as the API shows it (its JSON view is built in api).
type FileView struct {
	ID               string
	FileID           string
	OriginalFilename string
	FileType         string
	MediaType        string
	SizeBytes        int64
	Status           string
	Tags             []string
	ContentHash      string
	Error            string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

func fileView(f *domain.File) *FileView {
	tags := f.Tags
	if tags == nil {
		tags = []string{}
	}
	return &FileView{ID: f.ID, FileID: f.ID, OriginalFilename: f.Name, FileType: f.FileType, MediaType: f.MediaType,
		SizeBytes: f.Size, Status: f.Status, Tags: tags, ContentHash: f.ContentHash, Error: f.Error,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// CollectionView is a collection record (the contract's Collection).
type CollectionView struct {
	ID              string
	Name            string
	Description     string
	Status          string
	Progress        int
	DataSourceCount int
	TotalSize       int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// CollectionDetail is a collection with its files (GET /collections/{id}/).
type CollectionDetail struct {
	CollectionView
	Datasources []CollectionSource
}

// CollectionSource is one file of a collection in Atthene's shape.
type CollectionSource struct {
	ID             string
	DataSource     string
	DataSourceName string
	DataSourceType string
	DataSourceSize int64
	CreatedAt      time.Time
}

// Results of the bulk and add-files operations.
type (
	BulkItem struct {
		FileID string
		Status string // success | failed
		Error  string
	}
	BulkResult struct {
		Success   bool
		Processed int
		Failed    int
		Results   []BulkItem
	}
	AddFilesItem struct {
		FileID string
		Status string // added | failed
		Error  string
	}
	AddFilesResult struct {
		Success bool
		Added   int
		Failed  int
		Results []AddFilesItem
	}
)

// DatasourceView is one datasource of a knowledge base (the contract's Datasource): the file id,
// its name, type file-upload and the file's status.
type DatasourceView struct {
	ID     string
	Name   string
	Type   string
	Status string
}

// Snapshot is what the latest run made of one datasource (datasource_snapshots).
type Snapshot struct {
	ID              string
	Name            string
	Type            string
	IngestionStatus string
	Chunks          int
	Attempts        int
	Error           string
	UpdatedAt       *time.Time
}

// DatasourceType is the type of every datasource: an uploaded file.
const DatasourceType = "file-upload"

// KBListView is a knowledge base in a list (the contract's list view).
type KBListView struct {
	ID                  string
	Name                string
	Description         string
	ProcessingEngine    string
	Status              string
	Progress            int
	Datasources         []DatasourceView
	DatasourceCount     int
	TotalDatasources    int
	IngestedDatasources []DatasourceView
	FailedDatasources   []DatasourceView
	DatasourceErrors    map[string]string
	DatasourceSnapshots map[string]Snapshot
	SuccessRate         int
	ProcessingMetadata  domain.ProcessingMetadata
	CreatedByName       string
	CreatedAt           time.Time
	UpdatedAt           time.Time
	Error               string
}

// KBDetail is a knowledge base in full (the contract's detail view).
type KBDetail struct {
	KBListView
	DatasetName           string
	NormalizedDatasetName string
	SelectedCollections   []string
	SelectedDatasources   []string
	ChunkingStrategy      domain.Chunking
	EmbeddingConfig       domain.Embedding
	LLMConfig             map[string]any
	CompanyName           string
	LastIngestedAt        *time.Time
}

// KBStatus is the knowledge base inside a check_status answer.
type KBStatus struct {
	ID                  string
	Name                string
	Status              string
	Progress            int
	ProcessingEngine    string
	DatasourceCount     int
	TotalDatasources    int
	SuccessRate         int
	IngestedDatasources []DatasourceView
	FailedDatasources   []DatasourceView
	DatasourceErrors    map[string]string
	ProcessingMetadata  domain.ProcessingMetadata
	Error               string
	UpdatedAt           time.Time
}

// StatusView answers check_status.
type StatusView struct {
	Success       bool
	Message       string
	KnowledgeBase *KBStatus
	StatusUpdated bool
}

// SearchResult answers a search.
type SearchResult struct {
	Results []SearchHit
}

// SearchHit is one chunk found, best first.
type SearchHit struct {
	FileID     string
	FileName   string
	ChunkIndex int
	Text       string
	Score      float64
}

// kbListView builds the list view. files holds the company's files by id (for the datasources'
// file status; a datasource whose file is gone shows "deleted").
func kbListView(kb *domain.KnowledgeBase, files map[string]*domain.File) KBListView {
	v := KBListView{ID: kb.ID, Name: kb.Name, Description: kb.Description, ProcessingEngine: kb.Engine,
		Status: kb.Status, Progress: kb.Progress(), SuccessRate: kb.SuccessRate(), ProcessingMetadata: kb.Metadata,
		CreatedByName: kb.Owner, CreatedAt: kb.CreatedAt, UpdatedAt: kb.UpdatedAt, Error: kb.Error,
		Datasources: []DatasourceView{}, IngestedDatasources: []DatasourceView{}, FailedDatasources: []DatasourceView{},
		DatasourceErrors: map[string]string{}, DatasourceSnapshots: map[string]Snapshot{}}
	ids := make([]string, 0, len(kb.Sources))
	for id, d := range kb.Sources {
		if d.Status != domain.IngestRemoved {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		d := kb.Sources[id]
		status := "deleted"
		if f := files[id]; f != nil {
			status = f.Status
		}
		ds := DatasourceView{ID: id, Name: d.Name, Type: DatasourceType, Status: status}
		v.Datasources = append(v.Datasources, ds)
		switch d.Status {
		case domain.IngestIngested, domain.IngestUnchanged:
			v.IngestedDatasources = append(v.IngestedDatasources, ds)
		case domain.IngestFailed:
			v.FailedDatasources = append(v.FailedDatasources, ds)
			v.DatasourceErrors[id] = d.Error
		}
		v.DatasourceSnapshots[id] = Snapshot{ID: id, Name: d.Name, Type: DatasourceType, IngestionStatus: d.Status,
			Chunks: d.Chunks, Attempts: d.Attempts, Error: d.Error, UpdatedAt: d.UpdatedAt}
	}
	v.DatasourceCount, v.TotalDatasources = len(ids), len(ids)
	return v
}

// kbDetail builds the detail view.
func kbDetail(kb *domain.KnowledgeBase, files map[string]*domain.File) *KBDetail {
	collections, selected := kb.Collections, kb.Files
	if collections == nil {
		collections = []string{}
	}
	if selected == nil {
		selected = []string{}
	}
	return &KBDetail{KBListView: kbListView(kb, files), DatasetName: "", NormalizedDatasetName: normalizeName(kb.Name),
		SelectedCollections: collections, SelectedDatasources: selected, ChunkingStrategy: kb.Chunking,
		EmbeddingConfig: kb.Embedding, LLMConfig: map[string]any{}, CompanyName: kb.Company, LastIngestedAt: kb.Completed}
}

// kbStatus builds the knowledge base of a check_status answer.
func kbStatus(kb *domain.KnowledgeBase, files map[string]*domain.File) *KBStatus {
	v := kbListView(kb, files)
	return &KBStatus{ID: v.ID, Name: v.Name, Status: v.Status, Progress: v.Progress, ProcessingEngine: v.ProcessingEngine,
		DatasourceCount: v.DatasourceCount, TotalDatasources: v.TotalDatasources, SuccessRate: v.SuccessRate,
		IngestedDatasources: v.IngestedDatasources, FailedDatasources: v.FailedDatasources,
		DatasourceErrors: v.DatasourceErrors, ProcessingMetadata: v.ProcessingMetadata, Error: v.Error, UpdatedAt: v.UpdatedAt}
}

// normalizeName is the snake_case form of a name: lowercase letters and digits, every other run
// of characters one underscore ("Product Docs (v2)" → "product_docs_v2").
func normalizeName(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
		} else {
			sep = true
		}
	}
	return b.String()
}
