package knowledge

import (
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/agentorch/agentorch/shared/domain"
)

// FileView is a file record as the API shows it.
type FileView struct {
	ID               string    `json:"id"`
	FileID           string    `json:"file_id"`
	OriginalFilename string    `json:"original_filename"`
	FileType         string    `json:"file_type"`
	MediaType        string    `json:"media_type"`
	SizeBytes        int64     `json:"size_bytes"`
	Status           string    `json:"status"`
	Tags             []string  `json:"tags"`
	ContentHash      string    `json:"content_hash"`
	Error            string    `json:"error,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
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
	ID              string    `json:"id"`
	Name            string    `json:"name"`
	Description     string    `json:"description"`
	Status          string    `json:"status"`
	Progress        int       `json:"progress"`
	DataSourceCount int       `json:"data_source_count"`
	TotalSize       int64     `json:"total_size"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// CollectionDetail is a collection with its files (GET /collections/{id}/).
type CollectionDetail struct {
	CollectionView
	Datasources []CollectionSource `json:"datasources"`
}

// CollectionSource is one file of a collection in Atthene's shape.
type CollectionSource struct {
	ID             string    `json:"id"`
	DataSource     string    `json:"data_source"`
	DataSourceName string    `json:"data_source_name"`
	DataSourceType string    `json:"data_source_type"`
	DataSourceSize int64     `json:"data_source_size"`
	CreatedAt      time.Time `json:"created_at"`
}

// Results of the bulk and add-files operations.
type (
	BulkItem struct {
		FileID string `json:"file_id"`
		Status string `json:"status"` // success | failed
		Error  string `json:"error,omitempty"`
	}
	BulkResult struct {
		Success   bool       `json:"success"`
		Processed int        `json:"processed"`
		Failed    int        `json:"failed"`
		Results   []BulkItem `json:"results"`
	}
	AddFilesItem struct {
		FileID string `json:"file_id"`
		Status string `json:"status"` // added | failed
		Error  string `json:"error,omitempty"`
	}
	AddFilesResult struct {
		Success bool           `json:"success"`
		Added   int            `json:"added"`
		Failed  int            `json:"failed"`
		Results []AddFilesItem `json:"results"`
	}
)

// DatasourceView is one datasource of a knowledge base (the contract's Datasource): the file id,
// its name, type file-upload and the file's status.
type DatasourceView struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Status string `json:"status"`
}

// Snapshot is what the latest run made of one datasource (datasource_snapshots).
type Snapshot struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Type            string     `json:"type"`
	IngestionStatus string     `json:"ingestion_status"`
	Chunks          int        `json:"chunks"`
	Attempts        int        `json:"attempts"`
	Error           string     `json:"error,omitempty"`
	UpdatedAt       *time.Time `json:"updated_at,omitempty"`
}

// DatasourceType is the type of every datasource: an uploaded file.
const DatasourceType = "file-upload"

// KBListView is a knowledge base in a list (the contract's list view).
type KBListView struct {
	ID                  string                    `json:"id"`
	Name                string                    `json:"name"`
	Description         string                    `json:"description"`
	ProcessingEngine    string                    `json:"processing_engine"`
	Status              string                    `json:"status"`
	Progress            int                       `json:"progress"`
	Datasources         []DatasourceView          `json:"datasources"`
	DatasourceCount     int                       `json:"datasource_count"`
	TotalDatasources    int                       `json:"total_datasources"`
	IngestedDatasources []DatasourceView          `json:"ingested_datasources"`
	FailedDatasources   []DatasourceView          `json:"failed_datasources"`
	DatasourceErrors    map[string]string         `json:"datasource_errors"`
	DatasourceSnapshots map[string]Snapshot       `json:"datasource_snapshots"`
	SuccessRate         int                       `json:"success_rate"`
	ProcessingMetadata  domain.ProcessingMetadata `json:"processing_metadata"`
	CreatedByName       string                    `json:"created_by_name"`
	CreatedAt           time.Time                 `json:"created_at"`
	UpdatedAt           time.Time                 `json:"updated_at"`
	Error               string                    `json:"error,omitempty"`
}

// KBDetail is a knowledge base in full (the contract's detail view).
type KBDetail struct {
	KBListView
	DatasetName           string           `json:"dataset_name"`
	NormalizedDatasetName string           `json:"normalized_dataset_name"`
	SelectedCollections   []string         `json:"selected_collections"`
	SelectedDatasources   []string         `json:"selected_datasources"`
	ChunkingStrategy      domain.Chunking  `json:"chunking_strategy"`
	EmbeddingConfig       domain.Embedding `json:"embedding_config"`
	LLMConfig             map[string]any   `json:"llm_config"`
	CompanyName           string           `json:"company_name"`
	LastIngestedAt        *time.Time       `json:"last_ingested_at"`
}

// KBStatus is the knowledge base inside a check_status answer.
type KBStatus struct {
	ID                  string                    `json:"id"`
	Name                string                    `json:"name"`
	Status              string                    `json:"status"`
	Progress            int                       `json:"progress"`
	ProcessingEngine    string                    `json:"processing_engine"`
	DatasourceCount     int                       `json:"datasource_count"`
	TotalDatasources    int                       `json:"total_datasources"`
	SuccessRate         int                       `json:"success_rate"`
	IngestedDatasources []DatasourceView          `json:"ingested_datasources"`
	FailedDatasources   []DatasourceView          `json:"failed_datasources"`
	DatasourceErrors    map[string]string         `json:"datasource_errors"`
	ProcessingMetadata  domain.ProcessingMetadata `json:"processing_metadata"`
	Error               string                    `json:"error,omitempty"`
	UpdatedAt           time.Time                 `json:"updated_at"`
}

// StatusView answers check_status.
type StatusView struct {
	Success       bool      `json:"success"`
	Message       string    `json:"message"`
	KnowledgeBase *KBStatus `json:"knowledge_base"`
	StatusUpdated bool      `json:"status_updated"`
}

// SearchResult answers a search.
type SearchResult struct {
	Results []SearchHit `json:"results"`
}

// SearchHit is one chunk found, best first.
type SearchHit struct {
	FileID     string  `json:"file_id"`
	FileName   string  `json:"file_name"`
	ChunkIndex int     `json:"chunk_index"`
	Text       string  `json:"text"`
	Score      float64 `json:"score"`
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
