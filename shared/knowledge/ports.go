// Package knowledge holds the use cases of files, collections and knowledge bases: uploads,
// collections of files, knowledge bases ingested in the background (extract → chunk → embed →
// index, one SQS job per file) and their search. It declares the interfaces it needs; the
// adapters (dynamo, s3, sqs, vectors, embeddings) implement them in domain terms.
package knowledge

import (
	"context"
	"io"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps files, collections and knowledge bases. Missing records are KindNotFound errors.
type Store interface {
	// CreateFile stores a new file (KindConflict if its id is taken).
	CreateFile(ctx context.Context, f *domain.File) error
	// UpdateFile replaces a file if it still exists (KindNotFound otherwise: a change racing a
	// delete never brings it back) and its UpdatedAt is still prev (KindConflict otherwise).
	UpdateFile(ctx context.Context, f *domain.File, prev time.Time) error
	GetFile(ctx context.Context, id string) (*domain.File, error)
	// GetFiles reads the files of ids that exist, by id, whatever their company (a batch read).
	GetFiles(ctx context.Context, ids []string) (map[string]*domain.File, error)
	// ListFiles reads one page of a company's files, newest first: at most limit records after
	// the cursor after ("" from the newest) and the cursor of the next page ("" at the end). Its
	// cost is the page's, not the company's.
	ListFiles(ctx context.Context, company, after string, limit int) ([]*domain.File, string, error)
	DeleteFile(ctx context.Context, id string) error

	PutCollection(ctx context.Context, c *domain.Collection) error
	GetCollection(ctx context.Context, id string) (*domain.Collection, error)
	// ListCollections reads one page of a company's collections, newest first, as ListFiles.
	ListCollections(ctx context.Context, company, after string, limit int) ([]*domain.Collection, string, error)
	DeleteCollection(ctx context.Context, id string) error
	// UpdateCollection replaces a collection if its UpdatedAt is still prev (optimistic
	// concurrency: KindConflict otherwise, and the caller reads again).
	UpdateCollection(ctx context.Context, c *domain.Collection, prev time.Time) error

	PutKB(ctx context.Context, kb *domain.KnowledgeBase) error
	GetKB(ctx context.Context, id string) (*domain.KnowledgeBase, error)
	// ListKBs reads one page of a company's knowledge bases, newest first, as ListFiles.
	ListKBs(ctx context.Context, company, after string, limit int) ([]*domain.KnowledgeBase, string, error)
	DeleteKB(ctx context.Context, id string) error
	// UpdateKB replaces a knowledge base if its RunID is still runID (KindConflict otherwise):
	// a run that was superseded (sync, delete) can never write over its successor.
	UpdateKB(ctx context.Context, kb *domain.KnowledgeBase, runID string) error
	// UpdateSource sets one datasource of the run runID in one atomic write (other workers
	// update other datasources of the same record at the same time) and returns the record as
	// it is after the write. KindConflict if the run is no longer current; KindNotFound if the
	// knowledge base is gone.
	UpdateSource(ctx context.Context, kbID, runID string, d *domain.Datasource) (*domain.KnowledgeBase, error)
}

// Blobs keeps file bytes (S3).
type Blobs interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
	// Get reads at most limit bytes (KindTooLarge beyond) and the stored content type.
	Get(ctx context.Context, key string, limit int64) ([]byte, string, error)
	// Open streams a stored object with what S3 says of it (KindNotFound when there is none).
	Open(ctx context.Context, key string) (io.ReadCloser, domain.Object, error)
	// Head says what S3 says of a stored object (KindNotFound when there is none).
	Head(ctx context.Context, key string) (domain.Object, error)
	// Copy copies the object at from to to if from's ETag is still etag (KindConflict
	// otherwise, KindNotFound if it is gone), keeping its content type: a server-side copy.
	Copy(ctx context.Context, from, to, etag string) error
	Delete(ctx context.Context, key string) error
	// PresignPut returns a URL a client can PUT exactly size bytes of contentType to, valid for ttl.
	PresignPut(ctx context.Context, key string, size int64, contentType string, ttl time.Duration) (string, error)
}

// Queue sends ingestion jobs (the SQS ingestion queue; its event source mapping invokes the
// ingestion function with them).
type Queue interface {
	// Send enqueues one message; group is the FIFO message group ("" on a standard queue).
	Send(ctx context.Context, body, group string) error
}

// Index is the vector index (OpenSearch k-NN): one index per embedding space, every chunk
// tagged with its knowledge base and company.
type Index interface {
	EnsureIndex(ctx context.Context, model string, dims int) (string, error)
	Put(ctx context.Context, index string, chunks []domain.Chunk) error
	Refresh(ctx context.Context, index string) error
	DeleteFile(ctx context.Context, index, company, kbID, fileID string) (int, error)
	DeleteKB(ctx context.Context, index, company, kbID string) (int, error)
	Search(ctx context.Context, index string, q domain.VectorQuery) ([]domain.Hit, error)
}

// Embedder turns texts into vectors of one embedding space: the port declared in domain, which
// the embedding adapters implement without importing this package.
type Embedder = domain.Embedder

// Embedders resolves a knowledge base's embedding_config (filling defaults; field errors under
// embedding_config.*) and builds its embedder.
type Embedders interface {
	Resolve(cfg domain.Embedding) (domain.Embedding, []domain.FieldError)
	Embedder(ctx context.Context, cfg domain.Embedding) (Embedder, error)
}
