package knowledge

import (
	"context"
	"errors"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Upload limits.
const (
	// MaxUploadBytes is the largest file part of a multipart POST /api/v1/files/: API Gateway
	// and Lambda carry at most 6 MB of request payload, which a binary body base64-encodes to
	// (4/3 of its size) together with the multipart framing; 4 MB of file leave room for both.
	MaxUploadBytes = 4 << 20
	// MaxPresignedBytes is the largest file of a presigned upload (POST /api/v1/files/uploads/):
	// the bytes go to S3 directly, so only what one ingestion may read bounds them.
	MaxPresignedBytes = 512 << 20
	// PresignTTL is how long a presigned upload URL stays valid.
	PresignTTL = 15 * time.Minute
)

// Splitter cuts a text into chunks (shared/chunk plugged in by the composition root).
type Splitter interface {
	Split(text string) []string
}

// Deps are the ports the feature runs on.
type Deps struct {
	Store     Store
	Blobs     Blobs
	Queue     Queue // nil refuses knowledge base creation and sync (no ingestion queue configured)
	Index     Index
	Embedders Embedders
	// NewSplitter builds the splitter of a chunking_strategy, validating it: a KindInvalid error
	// whose field errors name the fields without prefix (chunk_size, chunk_overlap, …).
	NewSplitter func(domain.Chunking) (Splitter, error)
	Now         func() time.Time // time.Now when nil
}

// Limits bound the feature's work; zero values mean the documented defaults.
type Limits struct {
	// MaxDatasources is the most files one knowledge base may hold (default 1000: every
	// datasource lives in the knowledge base's DynamoDB item, which holds at most 400 KB).
	MaxDatasources int
	// MaxCollectionFiles is the most files one collection may hold (default 1000: its file ids
	// live in the collection's DynamoDB item, and a knowledge base takes at most MaxDatasources).
	MaxCollectionFiles int
	// RunDeadline is how long a run may go without finishing before a read settles it as failed
	// (default 1 h: far past every redelivery of every job of a run).
	RunDeadline time.Duration
	// MaxExtractBytes bounds the bytes an ingestion reads of one file (default MaxPresignedBytes).
	MaxExtractBytes int64
	// ChunksPerJob is how many chunks one file job embeds and indexes before it hands the rest
	// of the file to a continuation job (default 2,000), so that no job nears Lambda's 15 minutes.
	ChunksPerJob int
	// EmbedBatch is how many chunks go to the embedder per call (default 64).
	EmbedBatch int
	// MaxFileChunks is the most chunks one file may make (default 10,000); a file over it is a
	// failed datasource saying so.
	MaxFileChunks int
	// MaxKBChunks is the most chunks the files of one knowledge base may make together (default
	// 200,000); a file that would take its run past it is a failed datasource saying so.
	MaxKBChunks int
	// StatusWindow is how recently a status change makes check_status report status_updated
	// (default 60 s).
	StatusWindow time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxDatasources <= 0 {
		l.MaxDatasources = 1000
	}
	if l.MaxCollectionFiles <= 0 {
		l.MaxCollectionFiles = 1000
	}
	if l.RunDeadline <= 0 {
		l.RunDeadline = time.Hour
	}
	if l.MaxExtractBytes <= 0 {
		l.MaxExtractBytes = MaxPresignedBytes
	}
	if l.ChunksPerJob <= 0 {
		l.ChunksPerJob = 2000
	}
	if l.EmbedBatch <= 0 {
		l.EmbedBatch = 64
	}
	if l.MaxFileChunks <= 0 {
		l.MaxFileChunks = 10000
	}
	if l.MaxKBChunks <= 0 {
		l.MaxKBChunks = 200000
	}
	if l.StatusWindow <= 0 {
		l.StatusWindow = time.Minute
	}
	return l
}

// Service holds the use cases of files, collections and knowledge bases.
type Service struct {
	d Deps
	l Limits
}

// New returns the service over its ports.
func New(d Deps, l Limits) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{d: d, l: l.withDefaults()}
}

func (s *Service) now() time.Time { return s.d.Now().UTC() }

// notFound is the answer for an id that does not exist or belongs to another company.
func notFound(what string) error {
	return domain.Errorf(domain.KindNotFound, "%s not found", what)
}

// file loads a file of the principal's company; malformed, unknown and foreign ids are 404.
func (s *Service) file(ctx context.Context, p domain.Principal, id string) (*domain.File, error) {
	if !domain.IsID(id) {
		return nil, notFound("File")
	}
	f, err := s.d.Store.GetFile(ctx, id)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && f.Company != p.Company) {
		return nil, notFound("File")
	}
	return f, err
}

// collection loads a collection of the principal's company; malformed, unknown and foreign ids
// are 404.
func (s *Service) collection(ctx context.Context, p domain.Principal, id string) (*domain.Collection, error) {
	if !domain.IsID(id) {
		return nil, notFound("Collection")
	}
	c, err := s.d.Store.GetCollection(ctx, id)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && c.Company != p.Company) {
		return nil, notFound("Collection")
	}
	return c, err
}

// kb loads a knowledge base of the principal's company; malformed, unknown and foreign ids are
// 404.
func (s *Service) kb(ctx context.Context, p domain.Principal, id string) (*domain.KnowledgeBase, error) {
	if !domain.IsID(id) {
		return nil, notFound("Knowledge base")
	}
	kb, err := s.d.Store.GetKB(ctx, id)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && kb.Company != p.Company) {
		return nil, notFound("Knowledge base")
	}
	return kb, err
}

// page cuts one page of a list: items [offset, offset+limit) and whether more follow.
func page[T any](items []T, offset, limit int) ([]T, bool) {
	if offset >= len(items) {
		return []T{}, false
	}
	items = items[offset:]
	if limit > 0 && len(items) > limit {
		return items[:limit], true
	}
	return items, false
}
