package api

import (
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

// NewImages is the handler of the images group: uploads (authenticated) and the temporary
// /media/ URLs they answer with (public: the random name is the capability). baseURL prefixes
// those URLs; empty derives it from each request.
func NewImages(svc *images.Service, baseURL string, opts Options) *Group {
	g := newGroup(opts)
	h := &imageHandlers{svc: svc, base: strings.TrimRight(baseURL, "/")}
	g.handle(http.MethodPost, "/api/v1/images/upload/", false, h.upload)
	g.handle(http.MethodGet, "/media/{name}", true, h.media)
	return g
}

type imageHandlers struct {
	svc  *images.Service
	base string
}

func (h *imageHandlers) upload(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessions); err != nil {
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
	up, err := h.svc.Upload(r.Context(), data)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"url": h.baseURL(r) + images.MediaPath + up.Name, "media_type": up.MediaType, "size": up.Size})
	return nil
}

func uploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return domain.Errorf(domain.KindTooLarge, "Request body is larger than the limit of %d bytes", UploadMaxBodyBytes)
	}
	return domain.Invalid([]domain.FieldError{{Field: "image", Message: "malformed multipart body"}})
}

// baseURL is the configured public base, or the scheme and host this request came in on.
func (h *imageHandlers) baseURL(r *http.Request) string {
	if h.base != "" {
		return h.base
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
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
