package api

import (
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// The JSON views of the files, collections and knowledge-bases groups: the knowledge feature's
// read models as the contract (SPEC.md, openapi/) names their fields.

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
	ID                  string                    `json:"id"`
	Name                string                    `json:"name"`
	Description         string                    `json:"description"`
	ProcessingEngine    string                    `json:"processing_engine"`
	Status              string                    `json:"status"`
	Progress            int                       `json:"progress"`
	Datasources         []datasourceJSON          `json:"datasources"`
	DatasourceCount     int                       `json:"datasource_count"`
	TotalDatasources    int                       `json:"total_datasources"`
	IngestedDatasources []datasourceJSON          `json:"ingested_datasources"`
	FailedDatasources   []datasourceJSON          `json:"failed_datasources"`
	DatasourceErrors    map[string]string         `json:"datasource_errors"`
	DatasourceSnapshots map[string]snapshotJSON   `json:"datasource_snapshots"`
	SuccessRate         int                       `json:"success_rate"`
	ProcessingMetadata  domain.ProcessingMetadata `json:"processing_metadata"`
	CreatedByName       string                    `json:"created_by_name"`
	CreatedAt           time.Time                 `json:"created_at"`
	UpdatedAt           time.Time                 `json:"updated_at"`
	Error               string                    `json:"error,omitempty"`
}

// kbDetailJSON is a knowledge base in full (the contract's detail view).
type kbDetailJSON struct {
	kbListJSON
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

// kbStatusJSON is the knowledge base inside a check_status answer.
type kbStatusJSON struct {
	ID                  string                    `json:"id"`
	Name                string                    `json:"name"`
	Status              string                    `json:"status"`
	Progress            int                       `json:"progress"`
	ProcessingEngine    string                    `json:"processing_engine"`
	DatasourceCount     int                       `json:"datasource_count"`
	TotalDatasources    int                       `json:"total_datasources"`
	SuccessRate         int                       `json:"success_rate"`
	IngestedDatasources []datasourceJSON          `json:"ingested_datasources"`
	FailedDatasources   []datasourceJSON          `json:"failed_datasources"`
	DatasourceErrors    map[string]string         `json:"datasource_errors"`
	ProcessingMetadata  domain.ProcessingMetadata `json:"processing_metadata"`
	Error               string                    `json:"error,omitempty"`
	UpdatedAt           time.Time                 `json:"updated_at"`
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

// searchHitJSON is one chunk found, best first.
type searchHitJSON struct {
	FileID     string  `json:"file_id"`
	FileName   string  `json:"file_name"`
	ChunkIndex int     `json:"chunk_index"`
	Text       string  `json:"text"`
	Score      float64 `json:"score"`
}

// each maps a slice (nil stays nil, so that an empty list and an absent one encode as the
// feature built them).
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

// Struct conversions below ignore tags: each view has the fields of its read model.

func fileView(f *knowledge.FileView) *fileJSON { v := fileJSON(*f); return &v }

func fileViews(fs []*knowledge.FileView) []*fileJSON { return each(fs, fileView) }

func pendingUploadView(u *knowledge.PendingUpload) *pendingUploadJSON {
	v := pendingUploadJSON(*u)
	return &v
}

func collectionView(c *knowledge.CollectionView) *collectionJSON { v := collectionJSON(*c); return &v }

func collectionViews(cs []*knowledge.CollectionView) []*collectionJSON {
	return each(cs, collectionView)
}

func collectionDetailView(c *knowledge.CollectionDetail) *collectionDetailJSON {
	return &collectionDetailJSON{collectionJSON: collectionJSON(c.CollectionView),
		Datasources: each(c.Datasources, func(s knowledge.CollectionSource) collectionSourceJSON { return collectionSourceJSON(s) })}
}

func bulkResultView(r *knowledge.BulkResult) *bulkResultJSON {
	return &bulkResultJSON{Success: r.Success, Processed: r.Processed, Failed: r.Failed,
		Results: each(r.Results, func(it knowledge.BulkItem) bulkItemJSON { return bulkItemJSON(it) })}
}

func addFilesResultView(r *knowledge.AddFilesResult) *addFilesResultJSON {
	return &addFilesResultJSON{Success: r.Success, Added: r.Added, Failed: r.Failed,
		Results: each(r.Results, func(it knowledge.AddFilesItem) addFilesItemJSON { return addFilesItemJSON(it) })}
}

func datasourceViews(ds []knowledge.DatasourceView) []datasourceJSON {
	return each(ds, func(d knowledge.DatasourceView) datasourceJSON { return datasourceJSON(d) })
}

func kbListView(kb *knowledge.KBListView) *kbListJSON {
	v := &kbListJSON{ID: kb.ID, Name: kb.Name, Description: kb.Description, ProcessingEngine: kb.ProcessingEngine,
		Status: kb.Status, Progress: kb.Progress, Datasources: datasourceViews(kb.Datasources), DatasourceCount: kb.DatasourceCount,
		TotalDatasources: kb.TotalDatasources, IngestedDatasources: datasourceViews(kb.IngestedDatasources),
		FailedDatasources: datasourceViews(kb.FailedDatasources), DatasourceErrors: kb.DatasourceErrors,
		SuccessRate: kb.SuccessRate, ProcessingMetadata: kb.ProcessingMetadata, CreatedByName: kb.CreatedByName,
		CreatedAt: kb.CreatedAt, UpdatedAt: kb.UpdatedAt, Error: kb.Error}
	if kb.DatasourceSnapshots != nil {
		v.DatasourceSnapshots = make(map[string]snapshotJSON, len(kb.DatasourceSnapshots))
		for id, s := range kb.DatasourceSnapshots {
			v.DatasourceSnapshots[id] = snapshotJSON(s)
		}
	}
	return v
}

func kbListViews(kbs []*knowledge.KBListView) []*kbListJSON { return each(kbs, kbListView) }

func kbDetailView(kb *knowledge.KBDetail) *kbDetailJSON {
	return &kbDetailJSON{kbListJSON: *kbListView(&kb.KBListView), DatasetName: kb.DatasetName,
		NormalizedDatasetName: kb.NormalizedDatasetName, SelectedCollections: kb.SelectedCollections,
		SelectedDatasources: kb.SelectedDatasources, ChunkingStrategy: kb.ChunkingStrategy, EmbeddingConfig: kb.EmbeddingConfig,
		LLMConfig: kb.LLMConfig, CompanyName: kb.CompanyName, LastIngestedAt: kb.LastIngestedAt}
}

func statusView(st *knowledge.StatusView) *statusJSON {
	v := &statusJSON{Success: st.Success, Message: st.Message, StatusUpdated: st.StatusUpdated}
	if kb := st.KnowledgeBase; kb != nil {
		v.KnowledgeBase = &kbStatusJSON{ID: kb.ID, Name: kb.Name, Status: kb.Status, Progress: kb.Progress,
			ProcessingEngine: kb.ProcessingEngine, DatasourceCount: kb.DatasourceCount, TotalDatasources: kb.TotalDatasources,
			SuccessRate: kb.SuccessRate, IngestedDatasources: datasourceViews(kb.IngestedDatasources),
			FailedDatasources: datasourceViews(kb.FailedDatasources), DatasourceErrors: kb.DatasourceErrors,
			ProcessingMetadata: kb.ProcessingMetadata, Error: kb.Error, UpdatedAt: kb.UpdatedAt}
	}
	return v
}

func searchView(r *knowledge.SearchResult) *searchJSON {
	return &searchJSON{Results: each(r.Results, func(h knowledge.SearchHit) searchHitJSON { return searchHitJSON(h) })}
}
