package api

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/images"
)

// UploadMaxBodyBytes bounds an upload request: the image limit plus room for the form.
const UploadMaxBodyBytes = 4 << 20

// BaseURL gives the public base of the /media/ URLs for a request (scheme, host and any path
// prefix, no trailing slash): from configuration or from what the platform vouches for, such
// as the API Gateway stage, never from the request's own Host header, which a client can set
// to anything. Empty means that none is known.
type BaseURL func(r *http.Request) string

// StaticBaseURL is a BaseURL that is the same for every request.
func StaticBaseURL(base string) BaseURL {
	base = strings.TrimRight(base, "/")
	return func(*http.Request) string { return base }
}

// ImageService is what the images group calls; images.Service is the implementation.
type ImageService interface {
	Upload(ctx context.Context, data []byte) (*images.Uploaded, error)
	Open(ctx context.Context, name string) ([]byte, string, error)
}

// NewImages is the handler of the images group: uploads (authenticated) and the temporary
// /media/ URLs they answer with (public: the random name is the capability). base prefixes
// those URLs.
func NewImages(svc ImageService, base BaseURL, opts Options) *Group {
	g := newGroup(opts)
	if base == nil {
		base = StaticBaseURL("")
	}
	h := &imageHandlers{svc: svc, base: base}
	g.handle(http.MethodPost, "/api/v1/images/upload/", false, h.upload)
	g.handle(http.MethodGet, "/media/{name}", true, h.media)
	return g
}

type imageHandlers struct {
	svc  ImageService
	base BaseURL
}

func (h *imageHandlers) upload(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionsWrite); err != nil {
		return err
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return domain.Invalid([]domain.FieldError{{Field: "image", Message: "send multipart/form-data with the file in part \"image\""}})
	}
	if r.ContentLength > UploadMaxBodyBytes {
		return domain.Errorf(domain.KindTooLarge, "Request body is larger than the limit of %d bytes", UploadMaxBodyBytes)
	}
	r.Body = http.MaxBytesReader(w, r.Body, UploadMaxBodyBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return domain.Invalid([]domain.FieldError{{Field: "image", Message: "malformed multipart body"}})
	}
	var data []byte
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return uploadReadError(err)
		}
		if part.FormName() != "image" {
			_, _ = io.Copy(io.Discard, part)
			continue
		}
		if data, err = io.ReadAll(io.LimitReader(part, images.MaxBytes+1)); err != nil {
			return uploadReadError(err)
		}
		if len(data) > images.MaxBytes {
			return domain.Errorf(domain.KindTooLarge, "The image is larger than the limit of %d bytes", images.MaxBytes)
		}
		break
	}
	if data == nil {
		return domain.Invalid([]domain.FieldError{{Field: "image", Message: "is required: a file part named \"image\""}})
	}
	if _, err := images.Check(data); err != nil {
		return err
	}
	base := strings.TrimRight(h.base(r), "/")
	if base == "" {
		// A deployment without PUBLIC_BASE_URL outside API Gateway: nothing to build the URL on.
		return errors.New("upload: no public base URL for /media/ (set PUBLIC_BASE_URL)")
	}
	up, err := h.svc.Upload(r.Context(), data)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, imageUploadJSON{URL: base + images.MediaPath + up.Name, MediaType: up.MediaType, Size: up.Size})
	return nil
}

func uploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return domain.Errorf(domain.KindTooLarge, "Request body is larger than the limit of %d bytes", UploadMaxBodyBytes)
	}
	return domain.Invalid([]domain.FieldError{{Field: "image", Message: "malformed multipart body"}})
}

func (h *imageHandlers) media(w http.ResponseWriter, r *http.Request) error {
	data, mt, err := h.svc.Open(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", mt)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	return nil
}
