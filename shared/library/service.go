package library

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

// Deps are the ports the feature runs on.
type Deps struct {
	Store Store
	Blobs Blobs
	// Drop takes a file out of everything built from it (the knowledge bases) before the file
	// is deleted; nil when nothing is built from files.
	Drop func(ctx context.Context, f *domain.File) error
	Now  func() time.Time // time.Now when nil
}

// Limits bound the feature's work; zero values mean the documented defaults.
type Limits struct {
	// MaxCollectionFiles is the most files one collection may hold (default 1000: its file ids
	// live in the collection's DynamoDB item, and a knowledge base takes at most 1000 files).
	MaxCollectionFiles int
}

// Service holds the use cases of files and collections.
type Service struct {
	d Deps
	l Limits
}

// New returns the service over its ports.
func New(d Deps, l Limits) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Drop == nil {
		d.Drop = func(context.Context, *domain.File) error { return nil }
	}
	if l.MaxCollectionFiles <= 0 {
		l.MaxCollectionFiles = 1000
	}
	return &Service{d: d, l: l}
}

func (s *Service) now() time.Time { return s.d.Now().UTC() }

// NotFound is the answer for an id that does not exist or belongs to another company.
func NotFound(what string) error {
	return domain.Errorf(domain.KindNotFound, "%s not found", what)
}

// file loads a file of the principal's company; malformed, unknown and foreign ids are 404.
func (s *Service) file(ctx context.Context, p domain.Principal, id string) (*domain.File, error) {
	if !domain.IsID(id) {
		return nil, NotFound("File")
	}
	f, err := s.d.Store.GetFile(ctx, id)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && f.Company != p.Company) {
		return nil, NotFound("File")
	}
	return f, err
}

// Collection loads a collection record of the principal's company; malformed, unknown and
// foreign ids are 404.
func (s *Service) Collection(ctx context.Context, p domain.Principal, id string) (*domain.Collection, error) {
	if !domain.IsID(id) {
		return nil, NotFound("Collection")
	}
	c, err := s.d.Store.GetCollection(ctx, id)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && c.Company != p.Company) {
		return nil, NotFound("Collection")
	}
	return c, err
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
