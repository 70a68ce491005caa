package dynamo

import (
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// The stored forms of files, collections and knowledge bases (the data attribute of their items,
// and the entries of a knowledge base's sources map). Their keys are the ones the items were
// first written with; records_test.go holds them to those bytes.

// fileRecord is the stored form of a file.
type fileRecord struct {
	ID          string    `json:"id"`
	Company     string    `json:"company"`
	Owner       string    `json:"owner"`
	Name        string    `json:"original_filename"`
	FileType    string    `json:"file_type"`
	MediaType   string    `json:"media_type"`
	Size        int64     `json:"size_bytes"`
	Status      string    `json:"status"`
	Tags        []string  `json:"tags"`
	ContentHash string    `json:"content_hash"`
	ObjectKey   string    `json:"object_key"`
	Error       string    `json:"error,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func newFileRecord(f *domain.File) fileRecord { return fileRecord(*f) }

func (r *fileRecord) file() *domain.File {
	f := domain.File(*r)
	return &f
}

// collectionRecord is the stored form of a collection.
type collectionRecord struct {
	ID          string    `json:"id"`
	Company     string    `json:"company"`
	Owner       string    `json:"owner"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	FileIDs     []string  `json:"file_ids"`
	TotalSize   int64     `json:"total_size"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func newCollectionRecord(c *domain.Collection) collectionRecord { return collectionRecord(*c) }

func (r *collectionRecord) collection() *domain.Collection {
	c := domain.Collection(*r)
	return &c
}

// kbRecord is the stored form of a knowledge base without its datasources, which the sources
// map holds (Sources is always written as null).
type kbRecord struct {
	ID            string                   `json:"id"`
	Company       string                   `json:"company"`
	Owner         string                   `json:"owner"`
	Name          string                   `json:"name"`
	Description   string                   `json:"description"`
	Engine        string                   `json:"processing_engine"`
	Collections   []string                 `json:"selected_collections"`
	Files         []string                 `json:"selected_datasources"`
	Chunking      chunkingRecord           `json:"chunking_strategy"`
	Embedding     embeddingRecord          `json:"embedding_config"`
	Index         string                   `json:"index"`
	Status        string                   `json:"status"`
	Sources       map[string]*sourceRecord `json:"sources"`
	Metadata      processingRecord         `json:"processing_metadata"`
	RunID         string                   `json:"run_id"`
	SourcesRun    string                   `json:"sources_run,omitempty"`
	RunStarted    *time.Time               `json:"run_started,omitempty"`
	RunDeadline   *time.Time               `json:"run_deadline,omitempty"`
	Completed     *time.Time               `json:"completed,omitempty"`
	Error         string                   `json:"error,omitempty"`
	StatusChanged time.Time                `json:"status_changed"`
	CreatedAt     time.Time                `json:"created_at"`
	UpdatedAt     time.Time                `json:"updated_at"`
}

func newKBRecord(kb *domain.KnowledgeBase) kbRecord {
	return kbRecord{ID: kb.ID, Company: kb.Company, Owner: kb.Owner, Name: kb.Name, Description: kb.Description, Engine: kb.Engine,
		Collections: kb.Collections, Files: kb.Files, Chunking: chunkingRecord(kb.Chunking), Embedding: embeddingRecord(kb.Embedding),
		Index: kb.Index, Status: kb.Status, Metadata: processingRecord(kb.Metadata), RunID: kb.RunID, SourcesRun: kb.SourcesRun,
		RunStarted: kb.RunStarted, RunDeadline: kb.RunDeadline, Completed: kb.Completed, Error: kb.Error,
		StatusChanged: kb.StatusChanged, CreatedAt: kb.CreatedAt, UpdatedAt: kb.UpdatedAt}
}

// knowledgeBase is the record without datasources (decodeKB adds them from the sources map).
func (r *kbRecord) knowledgeBase() *domain.KnowledgeBase {
	return &domain.KnowledgeBase{ID: r.ID, Company: r.Company, Owner: r.Owner, Name: r.Name, Description: r.Description, Engine: r.Engine,
		Collections: r.Collections, Files: r.Files, Chunking: domain.Chunking(r.Chunking), Embedding: domain.Embedding(r.Embedding),
		Index: r.Index, Status: r.Status, Metadata: domain.ProcessingMetadata(r.Metadata), RunID: r.RunID, SourcesRun: r.SourcesRun,
		RunStarted: r.RunStarted, RunDeadline: r.RunDeadline, Completed: r.Completed, Error: r.Error,
		StatusChanged: r.StatusChanged, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// chunkingRecord is the stored form of a chunking strategy.
type chunkingRecord struct {
	Strategy            string   `json:"strategy"`
	ChunkSize           int      `json:"chunk_size"`
	ChunkOverlap        int      `json:"chunk_overlap"`
	SplitBy             string   `json:"split_by"`
	RecursiveSeparators []string `json:"recursive_separators"`
	ContextualHeaders   bool     `json:"contextual_headers,omitempty"`
}

// embeddingRecord is the stored form of an embedding configuration.
type embeddingRecord struct {
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
}

// processingRecord is the stored form of a run's progress.
type processingRecord struct {
	Phase           string `json:"phase,omitempty"`
	TotalChunks     int    `json:"total_chunks,omitempty"`
	ProcessedChunks int    `json:"processed_chunks,omitempty"`
	Message         string `json:"message,omitempty"`
}

// sourceRecord is the stored form of a datasource: the JSON of one entry of the sources map,
// without its file id, which is the entry's key (the writers leave FileID empty).
type sourceRecord struct {
	FileID            string     `json:"file_id,omitempty"`
	Name              string     `json:"name"`
	Status            string     `json:"status"`
	Error             string     `json:"error,omitempty"`
	ContentHash       string     `json:"content_hash,omitempty"`
	ContextualHeaders bool       `json:"contextual_headers,omitempty"`
	Chunks            int        `json:"chunks"`
	Attempts          int        `json:"attempts"`
	Phase             string     `json:"phase,omitempty"`
	TotalChunks       int        `json:"total_chunks,omitempty"`
	ProcessedChunks   int        `json:"processed_chunks,omitempty"`
	Residue           bool       `json:"residue,omitempty"`
	UpdatedAt         *time.Time `json:"updated_at,omitempty"`
}
