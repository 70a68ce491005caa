// Package library holds the use cases of a company's files and collections of files: uploads
// (whole, or presigned for large files), tags, statuses, bulk operations and collections. What
// is built from the files (knowledge bases, in shared/knowledge) stands above it: it reads files
// and collections here, and is told of a file's deletion first (Deps.Drop).
package library

import (
	"context"
	"io"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps files and collections. Missing records are KindNotFound errors.
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
