package knowledge

import (
	"context"
	"errors"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
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
	// Events tells the company's webhooks when an ingestion run completes or fails, wherever it
	// ends: in the ingestion functions, or in a request (a read settling an overdue run, a sync
	// that cannot be queued, a file delete removing a run's last open datasource); nil tells none.
	Events Events
	// Usage counts the embedding tokens of ingestion and of searches through the API into the
	// company's usage counters; nil counts none. (An agent's retrieval reports its tokens in
	// RetrievalResult, and the execute counts them in its own write.)
	Usage UsageCounter
	// Reranker orders the hits of a search whose rerank option is on (Bedrock's Rerank API);
	// nil: none configured, and such a search is a 400 saying how to configure one.
	Reranker Reranker
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
		l.MaxExtractBytes = library.MaxPresignedBytes
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

// Service holds the use cases of knowledge bases, and serves those of the files and collections
// they are built from (the embedded library.Service, which tells this one of a file's deletion
// first).
type Service struct {
	*library.Service
	d Deps
	l Limits
}

// New returns the service over its ports.
func New(d Deps, l Limits) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	s := &Service{d: d, l: l.withDefaults()}
	s.Service = library.New(library.Deps{Store: d.Store, Blobs: d.Blobs, Drop: s.dropFile, Now: d.Now},
		library.Limits{MaxCollectionFiles: s.l.MaxCollectionFiles})
	return s
}

func (s *Service) now() time.Time { return s.d.Now().UTC() }

// notFound is the answer for an id that does not exist or belongs to another company.
func notFound(what string) error { return library.NotFound(what) }

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

// countEmbedding adds tokens embedding tokens to the company's usage counter of today, under
// keyID (empty for ingestion, which no key runs) and no agent: one call. Its failure is
// not the caller's (what it counted was done): the report then counts short.
func (s *Service) countEmbedding(ctx context.Context, company, keyID string, tokens int) {
	if s.d.Usage == nil || tokens <= 0 || company == "" {
		return
	}
	_ = s.d.Usage.CountUsage(context.WithoutCancel(ctx), domain.UsageEntry{Company: company, Day: s.now().Truncate(24 * time.Hour),
		KeyID: keyID, UsageCount: domain.UsageCount{EmbeddingTokens: int64(tokens)}})
}
