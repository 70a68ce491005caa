// Package memory is memory across sessions (docs/memory.md): the blocks and records agents keep
// of the end users they serve, scoped to company + user + agent (or shared across a company's
// agents), with the API's reads and writes, the engine's recall and tools, and the extraction of
// facts after a turn, which runs from a queue, never on the reply's path.
package memory

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store is the storage of memory items (dynamo.Store implements it). Records and blocks of one
// user share a partition; an item is found by company and id.
type Store interface {
	CreateMemoryRecord(ctx context.Context, r *domain.MemoryRecord) error
	GetMemoryRecord(ctx context.Context, company, id string) (*domain.MemoryRecord, error)
	// UpdateMemoryRecord replaces prev by r if nobody wrote it since prev was read (conflict).
	UpdateMemoryRecord(ctx context.Context, r, prev *domain.MemoryRecord) error
	DeleteMemoryRecord(ctx context.Context, r *domain.MemoryRecord) error
	ListMemoryRecords(ctx context.Context, company string, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryRecord, bool, error)

	// CreateMemoryBlock is a conflict when its scope has a block of the same label.
	CreateMemoryBlock(ctx context.Context, b *domain.MemoryBlock) error
	GetMemoryBlock(ctx context.Context, company, id string) (*domain.MemoryBlock, error)
	UpdateMemoryBlock(ctx context.Context, b, prev *domain.MemoryBlock) error
	DeleteMemoryBlock(ctx context.Context, b *domain.MemoryBlock) error
	ListMemoryBlocks(ctx context.Context, company string, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryBlock, bool, error)
	// ScopeMemoryBlocks reads every block of one scope, label order: one Query, the recall path.
	ScopeMemoryBlocks(ctx context.Context, s domain.MemoryScope) ([]*domain.MemoryBlock, error)

	// ForgetMemoryUser deletes every record and block of a user of company and returns how many
	// of each it deleted; a user with none is 0, 0 and no error.
	ForgetMemoryUser(ctx context.Context, company, userID string) (records, blocks int, err error)
}

// Index is the vector index records are searched in (vectors.Store implements it): the same
// OpenSearch k-NN indices as knowledge bases, a record being one chunk whose knowledge base is
// its user's key (UserKey) and whose file is the record.
type Index interface {
	EnsureIndex(ctx context.Context, model string, dims int) (string, error)
	Put(ctx context.Context, index string, chunks []domain.Chunk) error
	Refresh(ctx context.Context, index string) error
	Search(ctx context.Context, index string, q domain.VectorQuery) ([]domain.Hit, error)
	DeleteFile(ctx context.Context, index, company, kbID, fileID string) (int, error)
	DeleteKB(ctx context.Context, index, company, kbID string) (int, error)
	AllIndices() string
}

// Embedders gives the embedder of a configuration (embeddings.Providers implements it); memory
// uses the deployment's default (the zero domain.Embedding).
type Embedders interface {
	Embedder(ctx context.Context, cfg domain.Embedding) (domain.Embedder, error)
}

// Models resolves a provider name ("" the deployment default) to a model, for extraction
// (engine.ModelSet implements it).
type Models interface {
	Model(provider string) (domain.Model, error)
}

// Queue sends extraction jobs (sqs.Queue implements it).
type Queue interface {
	Send(ctx context.Context, body, group string) error
}

// Deps are the feature's adapters. Index and Embedders are needed by records (the API's and
// the engine's), Models by extraction, Queue to enqueue extraction.
type Deps struct {
	Store     Store
	Index     Index
	Embedders Embedders
	Models    Models
	Queue     Queue
	Now       func() time.Time // nil: time.Now
	NewID     func() string    // nil: UUIDv7 (ids sort by creation)
}

// Service is the memory feature.
type Service struct {
	d Deps
}

// New builds the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.NewID == nil {
		d.NewID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	return &Service{d: d}
}
