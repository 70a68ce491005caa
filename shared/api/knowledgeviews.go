package api

import (
	"fmt"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
)

// The JSON views of the files, collections and knowledge-bases groups: the records the knowledge
// feature answers with, and what domain derives from them, as the contract (SPEC.md, openapi/)
// names their fields.

// fileJSON is a file record.
type fileJSON struct {
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

// pendingUploadJSON answers POST /files/uploads/.
type pendingUploadJSON struct {
	FileID    string            `json:"file_id"`
	UploadURL string            `json:"upload_url"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers"`
	ExpiresAt time.Time         `json:"expires_at"`
}

// collectionJSON is a collection record (the contract's Collection).
type collectionJSON struct {
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

// collectionDetailJSON is a collection with its files.
type collectionDetailJSON struct {
	collectionJSON
	Datasources []collectionSourceJSON `json:"datasources"`
}

// collectionSourceJSON is one file of a collection in Atthene's shape.
type collectionSourceJSON struct {
	ID             string    `json:"id"`
	DataSource     string    `json:"data_source"`
	DataSourceName string    `json:"data_source_name"`
	DataSourceType string    `json:"data_source_type"`
	DataSourceSize int64     `json:"data_source_size"`
	CreatedAt      time.Time `json:"created_at"`
}

// The answers of the bulk and add-files operations.
type (
	bulkItemJSON struct {
		FileID string `json:"file_id"`
		Status string `json:"status"`
		Error  string `json:"error,omitempty"`
	}
	bulkResultJSON struct {
		Success   bool           `json:"success"`
		Processed int            `json:"processed"`
		Failed    int            `json:"failed"`
		Results   []bulkItemJSON `json:"results"`
	}
	addFilesItemJSON struct {
		FileID string `json:"file_id"`
		Status string `json:"status"`
		Error  string `json:"error,omitempty"`
	}
	addFilesResultJSON struct {
		Success bool               `json:"success"`
		Added   int                `json:"added"`
		Failed  int                `json:"failed"`
		Results []addFilesItemJSON `json:"results"`
	}
)

// datasourceJSON is one datasource of a knowledge base (the contract's Datasource).
type datasourceJSON struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Status string `json:"status"`
}

// snapshotJSON is what the latest run made of one datasource (datasource_snapshots).
type snapshotJSON struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Type            string     `json:"type"`
	IngestionStatus string     `json:"ingestion_status"`
	Chunks          int        `json:"chunks"`
	Attempts        int        `json:"attempts"`
	Error           string     `json:"error,omitempty"`
	UpdatedAt       *time.Time `json:"updated_at,omitempty"`
}

// kbListJSON is a knowledge base in a list (the contract's list view).
type kbListJSON struct {
	ID                  string                  `json:"id"`
	Name                string                  `json:"name"`
	Description         string                  `json:"description"`
	ProcessingEngine    string                  `json:"processing_engine"`
	Status              string                  `json:"status"`
	Progress            int                     `json:"progress"`
	Datasources         []datasourceJSON        `json:"datasources"`
	DatasourceCount     int                     `json:"datasource_count"`
	TotalDatasources    int                     `json:"total_datasources"`
	IngestedDatasources []datasourceJSON        `json:"ingested_datasources"`
	FailedDatasources   []datasourceJSON        `json:"failed_datasources"`
	DatasourceErrors    map[string]string       `json:"datasource_errors"`
	DatasourceSnapshots map[string]snapshotJSON `json:"datasource_snapshots"`
	SuccessRate         int                     `json:"success_rate"`
	ProcessingMetadata  processingMetadataJSON  `json:"processing_metadata"`
	CreatedByName       string                  `json:"created_by_name"`
	CreatedAt           time.Time               `json:"created_at"`
	UpdatedAt           time.Time               `json:"updated_at"`
	Error               string                  `json:"error,omitempty"`
}

// kbDetailJSON is a knowledge base in full (the contract's detail view).
type kbDetailJSON struct {
	kbListJSON
	DatasetName           string         `json:"dataset_name"`
	NormalizedDatasetName string         `json:"normalized_dataset_name"`
	SelectedCollections   []string       `json:"selected_collections"`
	SelectedDatasources   []string       `json:"selected_datasources"`
	ChunkingStrategy      chunkingJSON   `json:"chunking_strategy"`
	EmbeddingConfig       embeddingJSON  `json:"embedding_config"`
	LLMConfig             map[string]any `json:"llm_config"`
	CompanyName           string         `json:"company_name"`
	LastIngestedAt        *time.Time     `json:"last_ingested_at"`
}

// kbStatusJSON is the knowledge base inside a check_status answer.
type kbStatusJSON struct {
	ID                  string                 `json:"id"`
	Name                string                 `json:"name"`
	Status              string                 `json:"status"`
	Progress            int                    `json:"progress"`
	ProcessingEngine    string                 `json:"processing_engine"`
	DatasourceCount     int                    `json:"datasource_count"`
	TotalDatasources    int                    `json:"total_datasources"`
	SuccessRate         int                    `json:"success_rate"`
	IngestedDatasources []datasourceJSON       `json:"ingested_datasources"`
	FailedDatasources   []datasourceJSON       `json:"failed_datasources"`
	DatasourceErrors    map[string]string      `json:"datasource_errors"`
	ProcessingMetadata  processingMetadataJSON `json:"processing_metadata"`
	Error               string                 `json:"error,omitempty"`
	UpdatedAt           time.Time              `json:"updated_at"`
}

// statusJSON answers check_status.
type statusJSON struct {
	Success       bool          `json:"success"`
	Message       string        `json:"message"`
	KnowledgeBase *kbStatusJSON `json:"knowledge_base"`
	StatusUpdated bool          `json:"status_updated"`
}

// searchJSON answers a search.
type searchJSON struct {
	Results []searchHitJSON `json:"results"`
}

// chunkingJSON is a knowledge base's chunking_strategy.
type chunkingJSON struct {
	Strategy            string   `json:"strategy"`
	ChunkSize           int      `json:"chunk_size"`
	ChunkOverlap        int      `json:"chunk_overlap"`
	SplitBy             string   `json:"split_by"`
	RecursiveSeparators []string `json:"recursive_separators"`
	ContextualHeaders   bool     `json:"contextual_headers,omitempty"`
}

// embeddingJSON is a knowledge base's embedding_config.
type embeddingJSON struct {
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
}

// processingMetadataJSON is a run's progress (empty when idle).
type processingMetadataJSON struct {
	Phase           string `json:"phase,omitempty"`
	TotalChunks     int    `json:"total_chunks,omitempty"`
	ProcessedChunks int    `json:"processed_chunks,omitempty"`
	Message         string `json:"message,omitempty"`
}

// searchHitJSON is one chunk found, best first.
type searchHitJSON struct {
	FileID     string  `json:"file_id"`
	FileName   string  `json:"file_name"`
	ChunkIndex int     `json:"chunk_index"`
	Text       string  `json:"text"`
	Score      float64 `json:"score"`
}

// each maps a slice (nil stays nil, so that an empty list and an absent one encode as the
// feature gave them).
func each[S, D any](in []S, f func(S) D) []D {
	if in == nil {
		return nil
	}
	out := make([]D, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func fileView(f *domain.File) *fileJSON {
	tags := f.Tags
	if tags == nil {
		tags = []string{}
	}
	return &fileJSON{ID: f.ID, FileID: f.ID, OriginalFilename: f.Name, FileType: f.FileType, MediaType: f.MediaType,
		SizeBytes: f.Size, Status: f.Status, Tags: tags, ContentHash: f.ContentHash, Error: f.Error,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

func fileViews(fs []*domain.File) []*fileJSON { return each(fs, fileView) }

// pendingUploadView ignores tags: the view has the fields of the feature's answer.
func pendingUploadView(u *library.PendingUpload) *pendingUploadJSON {
	v := pendingUploadJSON(*u)
	return &v
}

// collectionView shows a collection with the status, progress and counts its files make of it.
func collectionView(c *library.Collection) *collectionJSON {
	sum := domain.SummarizeCollection(c.Files)
	return &collectionJSON{ID: c.ID, Name: c.Name, Description: c.Description, Status: sum.Status, Progress: sum.Progress,
		DataSourceCount: sum.Files, TotalSize: sum.Size, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

func collectionViews(cs []*library.Collection) []*collectionJSON { return each(cs, collectionView) }

// collectionDetailView lists the collection's files as datasources; a file is in a collection
// at most once, so its id names the datasource too.
func collectionDetailView(c *library.Collection) *collectionDetailJSON {
	v := &collectionDetailJSON{collectionJSON: *collectionView(c), Datasources: []collectionSourceJSON{}}
	for _, f := range c.Files {
		v.Datasources = append(v.Datasources, collectionSourceJSON{ID: f.ID, DataSource: f.ID, DataSourceName: f.Name,
			DataSourceType: f.FileType, DataSourceSize: f.Size, CreatedAt: f.CreatedAt})
	}
	return v
}

// bulkResultView counts the items: success when none failed, processed those that succeeded.
func bulkResultView(items []library.BulkItem) *bulkResultJSON {
	v := &bulkResultJSON{Results: make([]bulkItemJSON, len(items))}
	for i, it := range items {
		v.Results[i] = bulkItemJSON(it)
		if it.Status == library.ItemSucceeded {
			v.Processed++
		} else {
			v.Failed++
		}
	}
	v.Success = v.Failed == 0
	return v
}

// addFilesResultView says "added" of the items that succeeded.
func addFilesResultView(items []library.BulkItem) *addFilesResultJSON {
	v := &addFilesResultJSON{Results: make([]addFilesItemJSON, len(items))}
	for i, it := range items {
		v.Results[i] = addFilesItemJSON{FileID: it.FileID, Status: "added", Error: it.Error}
		if it.Status == library.ItemSucceeded {
			v.Added++
		} else {
			v.Results[i].Status = library.ItemFailed
			v.Failed++
		}
	}
	v.Success = v.Failed == 0
	return v
}

// kbListView shows a knowledge base's live datasources, sorted by id, each with its file's
// status, and sorted into ingested and failed ones.
func kbListView(kb *knowledge.KB) *kbListJSON {
	v := &kbListJSON{ID: kb.ID, Name: kb.Name, Description: kb.Description, ProcessingEngine: kb.Engine,
		Status: kb.Status, Progress: kb.Progress(), SuccessRate: kb.SuccessRate(), ProcessingMetadata: processingMetadataJSON(kb.Metadata),
		CreatedByName: kb.Owner, CreatedAt: kb.CreatedAt, UpdatedAt: kb.UpdatedAt, Error: kb.Error,
		Datasources: []datasourceJSON{}, IngestedDatasources: []datasourceJSON{}, FailedDatasources: []datasourceJSON{},
		DatasourceErrors: map[string]string{}, DatasourceSnapshots: map[string]snapshotJSON{}}
	ids := kb.LiveSources()
	for _, id := range ids {
		d := kb.Sources[id]
		ds := datasourceJSON{ID: id, Name: d.Name, Type: domain.DatasourceType, Status: domain.SourceStatus(kb.SourceFiles, id)}
		v.Datasources = append(v.Datasources, ds)
		switch {
		case d.Ingested():
			v.IngestedDatasources = append(v.IngestedDatasources, ds)
		case d.Status == domain.IngestFailed:
			v.FailedDatasources = append(v.FailedDatasources, ds)
			v.DatasourceErrors[id] = d.Error
		}
		v.DatasourceSnapshots[id] = snapshotJSON{ID: id, Name: d.Name, Type: domain.DatasourceType, IngestionStatus: d.Status,
			Chunks: d.Chunks, Attempts: d.Attempts, Error: d.Error, UpdatedAt: d.UpdatedAt}
	}
	v.DatasourceCount, v.TotalDatasources = len(ids), len(ids)
	return v
}

func kbListViews(kbs []*knowledge.KB) []*kbListJSON { return each(kbs, kbListView) }

func kbDetailView(kb *knowledge.KB) *kbDetailJSON {
	collections, selected := kb.Collections, kb.Files
	if collections == nil {
		collections = []string{}
	}
	if selected == nil {
		selected = []string{}
	}
	return &kbDetailJSON{kbListJSON: *kbListView(kb), DatasetName: "", NormalizedDatasetName: domain.NormalizeName(kb.Name),
		SelectedCollections: collections, SelectedDatasources: selected, ChunkingStrategy: chunkingJSON(kb.Chunking),
		EmbeddingConfig: embeddingJSON(kb.Embedding), LLMConfig: map[string]any{}, CompanyName: kb.Company, LastIngestedAt: kb.Completed}
}

func statusView(st *knowledge.KBStatus) *statusJSON {
	l := kbListView(st.KB)
	return &statusJSON{Success: true, Message: fmt.Sprintf("Status checked for knowledge base '%s'", st.KB.Name), StatusUpdated: st.Updated,
		KnowledgeBase: &kbStatusJSON{ID: l.ID, Name: l.Name, Status: l.Status, Progress: l.Progress,
			ProcessingEngine: l.ProcessingEngine, DatasourceCount: l.DatasourceCount, TotalDatasources: l.TotalDatasources,
			SuccessRate: l.SuccessRate, IngestedDatasources: l.IngestedDatasources, FailedDatasources: l.FailedDatasources,
			DatasourceErrors: l.DatasourceErrors, ProcessingMetadata: l.ProcessingMetadata, Error: l.Error, UpdatedAt: l.UpdatedAt}}
}

// searchView lists the hits, best first ([] when none).
func searchView(hits []domain.Hit) *searchJSON {
	v := &searchJSON{Results: make([]searchHitJSON, len(hits))}
	for i, h := range hits {
		v.Results[i] = searchHitJSON{FileID: h.FileID, FileName: h.FileName, ChunkIndex: h.ChunkIndex, Text: h.Text, Score: h.Score}
	}
	return v
}
