// Package images stores uploaded images for a day and reads them back for execute requests, so
// clients pass a short URL instead of base64 data.
package images

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// Limits and layout of uploaded images. Objects under tmp/ expire by the bucket's lifecycle rule.
const (
	MaxBytes  = 3_750_000 // Bedrock's per-image limit
	keyPrefix = "tmp/images/"
	// MediaPath is where uploaded images are served: {base_url}/media/<name>.
	MediaPath = "/media/"
)

// Blobs keeps objects by key.
type Blobs interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
	Get(ctx context.Context, key string, limit int64) ([]byte, string, error)
}

// nameRE matches the names Upload gives: a random UUID and the extension of the image's type.
// Compiled on first use, not at every function's init.
var nameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(` + strings.Join(domain.ImageExts(), "|") + `)$`)
})

// Service uploads and opens images.
type Service struct{ blobs Blobs }

// New builds the images service.
func New(blobs Blobs) *Service { return &Service{blobs: blobs} }

// Uploaded describes a stored image.
type Uploaded struct {
	Name      string
	MediaType string
	Size      int
}

// Check tells whether data can be uploaded: a png, jpeg, gif or webp image (by its bytes, not by
// what the client claims) of at most MaxBytes. It returns the image's media type.
func Check(data []byte) (string, error) {
	if len(data) == 0 {
		return "", domain.Invalid([]domain.FieldError{{Field: "image", Message: "is empty"}})
	}
	if len(data) > MaxBytes {
		return "", domain.Errorf(domain.KindTooLarge, "The image is larger than the limit of %d bytes", MaxBytes)
	}
	mt, ok := Sniff(data)
	if !ok {
		return "", domain.Invalid([]domain.FieldError{{Field: "image", Message: fmt.Sprintf("must be a png, jpeg, gif or webp image (got %s)", mt)}})
	}
	return mt, nil
}

// Sniff is the media type of data judged by its bytes alone, and whether it is one of the image
// types accepted here (png, jpeg, gif, webp).
func Sniff(data []byte) (string, bool) {
	mt := sniff(data)
	_, ok := domain.ImageFormat(mt)
	return mt, ok
}

// Upload checks data (see Check) and stores it under a fresh random name.
func (s *Service) Upload(ctx context.Context, data []byte) (*Uploaded, error) {
	mt, err := Check(data)
	if err != nil {
		return nil, err
	}
	ext, _ := domain.ImageExt(mt) // Check took only image types
	name := uuid.NewString() + "." + ext
	if err := s.blobs.Put(ctx, keyPrefix+name, data, mt); err != nil {
		return nil, fmt.Errorf("store image: %w", err)
	}
	return &Uploaded{Name: name, MediaType: mt, Size: len(data)}, nil
}

// Open reads an uploaded image by name; unknown, malformed and expired names are not found.
func (s *Service) Open(ctx context.Context, name string) ([]byte, string, error) {
	if !nameRE().MatchString(name) {
		return nil, "", domain.Errorf(domain.KindNotFound, "Image %q not found", domain.Clip(name, 64))
	}
	data, mt, err := s.blobs.Get(ctx, keyPrefix+name, MaxBytes)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, "", domain.Errorf(domain.KindNotFound, "Image %s not found (uploaded images expire after a day)", name)
	}
	if err != nil {
		return nil, "", fmt.Errorf("open image %s: %w", name, err)
	}
	if _, ok := domain.ImageFormat(mt); !ok {
		mt = sniff(data)
	}
	return data, mt, nil
}

// MediaName returns the image name when rawURL points at an uploaded image (path /media/<name>).
func MediaName(path string) (string, bool) {
	name, ok := strings.CutPrefix(path, MediaPath)
	name = strings.TrimSuffix(name, "/")
	return name, ok && nameRE().MatchString(name)
}

func sniff(data []byte) string {
	mt := http.DetectContentType(data)
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	return mt
}
