package knowledge

import (
	"context"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// Store keeps files, collections (library.Store) and knowledge bases. Missing records are
// KindNotFound errors.
type Store interface {
	library.Store

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

// Blobs keeps file bytes (S3): ingestion reads what the library stored.
type Blobs = library.Blobs

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
	// Legacy reports whether index predates the current mapping: a sync moves a knowledge base
	// out of such an index into EnsureIndex's.
	Legacy(index string) bool
	Put(ctx context.Context, index string, chunks []domain.Chunk) error
	Refresh(ctx context.Context, index string) error
	DeleteFile(ctx context.Context, index, company, kbID, fileID string) (int, error)
	DeleteKB(ctx context.Context, index, company, kbID string) (int, error)
	Search(ctx context.Context, index string, q domain.VectorQuery) ([]domain.Hit, error)
	// Chunks reads a file's chunks of a knowledge base at positions from to from+limit-1, in
	// document order, without vectors (the company's only).
	Chunks(ctx context.Context, index, company, kbID, fileID string, from, limit int) ([]domain.Chunk, error)
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

// UsageCounter adds to the company's usage counters (shared/usage's report reads them): the
// embedding tokens of each ingestion job and of each search through the API, one call each.
type UsageCounter interface {
	CountUsage(ctx context.Context, e domain.UsageEntry) error
}

// countedEmbedder is an embedder that says how many tokens the provider counted (the
// shared/embeddings providers); another is counted with its Tokens.
type countedEmbedder interface {
	EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error)
}

// embed embeds texts and says how many tokens that took: the provider's count where it gives
// one, else the embedder's Tokens of each text up to what it reads. Tokens embedded before an
// error still count (they were billed).
func embed(ctx context.Context, emb Embedder, texts []string) ([][]float32, int, error) {
	if c, ok := emb.(countedEmbedder); ok {
		return c.EmbedCounted(ctx, texts)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	for _, t := range texts {
		k := emb.Tokens(t)
		if m := emb.MaxTokens(); m > 0 {
			k = min(k, m)
		}
		n += k
	}
	return vecs, n, nil
}
