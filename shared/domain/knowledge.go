package domain

import "time"

// Knowledge: files, collections of files, and knowledge bases built from them (chunked, embedded
// and indexed in OpenSearch k-NN by the ingestion worker). All three belong to a company: every
// key of the company may read and change them (a team's shared knowledge), and lists show the
// company's records. Another company's ids answer 404, never 403, so ids cannot be probed.

// File statuses. A file is `uploading` from a presigned upload's start until `complete`,
// `active` once its bytes are stored, `archived` when taken out of search (its chunks stay
// indexed but every search filters it out; `change_status` to `active` brings it back), and
// `error` when a presigned upload completed with bytes that cannot be kept.
const (
	FileUploading = "uploading"
	FileActive    = "active"
	FileArchived  = "archived"
	FileError     = "error"
)

// FileStatuses lists the statuses a list filter may name.
var FileStatuses = []string{FileUploading, FileActive, FileArchived, FileError}

// FileTypes are the classes of file_type (Atthene's).
var FileTypes = []string{"document", "image", "video", "audio", "archive", "code", "data", "other"}

// Object is what blob storage says of a stored object.
type Object struct {
	Size        int64
	ContentType string
	// ETag names the object's bytes: a copy or read conditioned on it fails if they changed.
	ETag string
}

// File is an uploaded file. Its bytes are in S3 under ObjectKey.
type File struct {
	ID          string
	Company     string
	Owner       string
	Name        string
	FileType    string
	MediaType   string
	Size        int64
	Status      string
	Tags        []string
	ContentHash string // hex SHA-256 of the bytes; "" until stored
	ObjectKey   string
	Error       string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Collection statuses (derived from the files on read: `pending` while empty or while a file is
// still uploading, `completed` when every file is stored, `failed` when a file is in error;
// `running` is the public API's and never reported: a collection does no processing itself).
const (
	CollectionPending   = "pending"
	CollectionRunning   = "running"
	CollectionCompleted = "completed"
	CollectionFailed    = "failed"
)

// Collection is a named set of files.
type Collection struct {
	ID          string
	Company     string
	Owner       string
	Name        string
	Description string
	FileIDs     []string // in the order they were added
	// TotalSize is not kept up to date: views compute data_source_count and total_size from the
	// files on read, which they load anyway for the derived status.
	TotalSize int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Knowledge base statuses: pending → running → completed | failed. A sync or a resumed run goes
// from completed or failed back to running.
const (
	KBPending   = "pending"
	KBRunning   = "running"
	KBCompleted = "completed"
	KBFailed    = "failed"
)

// KBStatuses lists the statuses a list filter may name.
var KBStatuses = []string{KBPending, KBRunning, KBCompleted, KBFailed}

// EngineOpenSearch is the one processing_engine.
const EngineOpenSearch = "opensearch"

// Ingestion statuses of one datasource of a knowledge base.
const (
	IngestPending   = "pending"   // queued, not yet attempted
	IngestRunning   = "running"   // a worker is on it (attempt counts up on redelivery)
	IngestIngested  = "ingested"  // its chunks are indexed
	IngestUnchanged = "unchanged" // a sync found the same content hash and kept its chunks
	IngestFailed    = "failed"    // Error says why, in words a user can act on
	IngestRemoved   = "removed"   // the file left the sources (or was deleted); its chunks are gone
)

// Chunking is a knowledge base's chunking_strategy.
type Chunking struct {
	Strategy            string
	ChunkSize           int
	ChunkOverlap        int
	SplitBy             string
	RecursiveSeparators []string
	// ContextualHeaders embeds each chunk after a header naming its file and section
	// ("<file> — <heading>"); the chunk's text, stored and returned, stays its own.
	ContextualHeaders bool
}

// Embedding is a knowledge base's embedding_config.
type Embedding struct {
	Provider   string
	Model      string
	Dimensions int
}

// Datasource is one file of a knowledge base and what its latest ingestion made of it.
type Datasource struct {
	FileID      string
	Name        string
	Status      string // Ingest*
	Error       string
	ContentHash string // of the ingested content
	// ContextualHeaders says its chunks were embedded with contextual headers: a sync
	// re-embeds the file when the knowledge base's Chunking.ContextualHeaders differs.
	ContextualHeaders bool
	Chunks            int
	Attempts          int // deliveries of its jobs in the current run
	// Phase, TotalChunks and ProcessedChunks report a running datasource's progress (one write
	// per job, never per chunk); the knowledge base's processing_metadata sums them.
	Phase           string
	TotalChunks     int
	ProcessedChunks int
	// Residue says the index may hold chunks of the file from an earlier run (another version,
	// or an attempt cut short): its first job deletes them before indexing.
	Residue   bool
	UpdatedAt *time.Time
}

// Done reports whether the datasource reached a terminal status in the current run.
func (d *Datasource) Done() bool {
	switch d.Status {
	case IngestIngested, IngestUnchanged, IngestFailed, IngestRemoved:
		return true
	}
	return false
}

// ProcessingMetadata reports a run's progress (all zero when idle).
type ProcessingMetadata struct {
	Phase           string
	TotalChunks     int
	ProcessedChunks int
	Message         string
}

// KnowledgeBase is a searchable index of files. Its chunks live in one OpenSearch index per
// embedding space (Index), filtered by the knowledge base's id.
type KnowledgeBase struct {
	ID          string
	Company     string
	Owner       string
	Name        string
	Description string
	Engine      string
	Collections []string
	Files       []string
	Chunking    Chunking
	Embedding   Embedding
	Index       string // the OpenSearch index of its embedding space
	Status      string
	// Sources are the datasources of the current (or last) run, by file id.
	Sources  map[string]*Datasource
	Metadata ProcessingMetadata
	// RunID names the current run; workers write only while it is theirs. RunDeadline is when
	// a run that has not finished is settled as failed (the worker died past every redelivery).
	RunID string
	// SourcesRun is the run whose start job resolved Sources (a redelivered start job of the
	// same run only sends the jobs of datasources still pending).
	SourcesRun  string
	RunStarted  *time.Time
	RunDeadline *time.Time
	// Completed is when a run last completed: a search before the first is a 409.
	Completed *time.Time
	Error     string // why the run failed as a whole
	// StatusChanged is when Status last changed (check_status's status_updated compares it).
	StatusChanged time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Progress is the share of datasources of the run that reached a terminal status, 0–100.
func (kb *KnowledgeBase) Progress() int {
	if kb.Status == KBCompleted {
		return 100
	}
	total, done := 0, 0
	for _, d := range kb.Sources {
		if d.Status == IngestRemoved {
			continue
		}
		total++
		if d.Done() {
			done++
		}
	}
	if total == 0 {
		return 0
	}
	return done * 100 / total
}

// SuccessRate is the ingested (or unchanged) share of the datasources in percent.
func (kb *KnowledgeBase) SuccessRate() int {
	total, ok := 0, 0
	for _, d := range kb.Sources {
		if d.Status == IngestRemoved {
			continue
		}
		total++
		if d.Status == IngestIngested || d.Status == IngestUnchanged {
			ok++
		}
	}
	if total == 0 {
		return 0
	}
	return ok * 100 / total
}

// RetrievalStrategy is how a search ranks chunks.
type RetrievalStrategy string

// The retrieval strategies.
const (
	StrategyDense     RetrievalStrategy = "dense"      // k-NN on the embedding (default); score (1+cos)/2
	StrategyBM25      RetrievalStrategy = "bm25"       // BM25 over the chunk text, standard + english analyses; unbounded score
	StrategyHybrid    RetrievalStrategy = "hybrid"     // reciprocal rank fusion of BM25 and k-NN; its score scaled to 0..1
	StrategyHybridRRF RetrievalStrategy = "hybrid_rrf" // the same ranking; the raw RRF score, ≤ 2/61
)

// Strategies lists the valid strategies, the default first.
var Strategies = []RetrievalStrategy{StrategyDense, StrategyBM25, StrategyHybrid, StrategyHybridRRF}

// Chunk is one indexed piece of a file in a knowledge base.
type Chunk struct {
	KBID        string
	Company     string
	FileID      string
	FileName    string
	ChunkIndex  int
	Text        string
	Tags        []string
	ContentHash string // of the file content the chunk was cut from
	Vector      []float32
}

// VectorQuery is one search of one or more knowledge bases that share an index.
type VectorQuery struct {
	KBIDs    []string // at least one
	Company  string   // required: every query is confined to one company
	Vector   []float32
	Text     string
	TopK     int
	Strategy RetrievalStrategy // "" is dense
	// MinScore drops hits below it where scores are on a 0..1 scale (dense, hybrid); it is
	// ignored for bm25 and hybrid_rrf.
	MinScore *float64
	FileIDs  []string // only these files, if any
	Tags     []string // only chunks with one of these tags, if any
	// ExcludeFileIDs are left out (archived or deleting files), whatever the index holds.
	ExcludeFileIDs []string
}

// Hit is one chunk found, best first.
type Hit struct {
	ID         string
	KBID       string
	FileID     string
	FileName   string
	ChunkIndex int
	Text       string
	Tags       []string
	Score      float64
}
