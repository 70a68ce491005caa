package api

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// FileFormBytes is the room a file upload's body has beyond the file itself: the multipart
// framing and the form fields (tags, collection_id).
const FileFormBytes = 64 << 10

// FileUploadMaxBodyBytes bounds a multipart file upload: the file limit plus the form.
const FileUploadMaxBodyBytes = library.MaxUploadBytes + FileFormBytes

// maxFormField bounds one form field of an upload (tags, collection_id).
const maxFormField = 16 << 10

// FileService is what the files endpoints call (the knowledge feature's files; a fake in
// handler tests).
type FileService interface {
	Upload(ctx context.Context, p domain.Principal, in library.Upload) (*domain.File, error)
	StartUpload(ctx context.Context, p domain.Principal, in library.StartUpload) (*library.PendingUpload, error)
	CompleteUpload(ctx context.Context, p domain.Principal, fileID string) (*domain.File, error)
	ListFiles(ctx context.Context, p domain.Principal, f library.FileFilter) ([]*domain.File, bool, error)
	GetFile(ctx context.Context, p domain.Principal, id string) (*domain.File, error)
	DeleteFile(ctx context.Context, p domain.Principal, id string) error
	BulkFiles(ctx context.Context, p domain.Principal, in library.FileBulkInput) ([]library.BulkItem, error)
}

// NewFiles is the handler of the files endpoint group: uploads (multipart, or presigned for
// large files), the file records, their deletion and bulk operations.
func NewFiles(svc FileService, opts Options) *Group {
	g := newGroup(opts)
	h := &fileHandlers{svc: svc, g: g}
	g.handle(http.MethodPost, "/api/v1/files/", false, h.upload)
	g.handle(http.MethodGet, "/api/v1/files/", false, listPage(domain.ScopeKnowledgeRead, func(r *http.Request, offset, limit int) ([]*fileJSON, bool, error) {
		q := r.URL.Query()
		files, more, err := svc.ListFiles(r.Context(), principal(r), library.FileFilter{
			Tag: q.Get("tag"), Status: q.Get("status"), FileType: q.Get("file_type"), Offset: offset, Limit: limit})
		return fileViews(files), more, err
	}))
	g.handle(http.MethodPost, "/api/v1/files/uploads/", false, h.startUpload)
	g.handle(http.MethodPost, "/api/v1/files/bulk/", false, h.bulk)
	g.handle(http.MethodGet, "/api/v1/files/{file_id}/", false, getByID(domain.ScopeKnowledgeRead, "file_id", viewed(svc.GetFile, fileView)))
	g.handle(http.MethodDelete, "/api/v1/files/{file_id}/", false, deleteByID(domain.ScopeKnowledgeWrite, "file_id", svc.DeleteFile))
	g.handle(http.MethodPost, "/api/v1/files/{file_id}/complete/", false, h.complete)
	return g
}

type fileHandlers struct {
	svc FileService
	g   *Group
}

// upload stores one file sent as multipart/form-data: the part "file" (its file name and
// declared Content-Type go with it) and the optional fields "tags" (comma-separated, may repeat)
// and "collection_id". The body is read through a limit, so nothing beyond it is buffered.
func (h *fileHandlers) upload(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return fileField("send multipart/form-data with the file in part \"file\" (curl -F file=@report.pdf)")
	}
	if r.ContentLength > FileUploadMaxBodyBytes {
		return fileTooLarge()
	}
	r.Body = http.MaxBytesReader(w, r.Body, FileUploadMaxBodyBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return fileField("malformed multipart body")
	}
	var in library.Upload
	var seen, collection bool
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fileReadError(err)
		}
		switch part.FormName() {
		case "file":
			if seen {
				return fileField("send one part named \"file\", not several")
			}
			seen = true
			in.Name, in.DeclaredType = part.FileName(), part.Header.Get("Content-Type")
			data, err := io.ReadAll(io.LimitReader(part, library.MaxUploadBytes+1))
			if err != nil {
				return fileReadError(err)
			}
			if len(data) > library.MaxUploadBytes {
				return fileTooLarge()
			}
			in.Data = data
		case "tags":
			v, err := formValue(part, "tags")
			if err != nil {
				return err
			}
			in.Tags = append(in.Tags, splitTags(v)...)
		case "collection_id":
			if collection {
				return domain.Invalid([]domain.FieldError{{Field: "collection_id", Message: "send at most one collection_id"}})
			}
			collection = true
			if in.CollectionID, err = formValue(part, "collection_id"); err != nil {
				return err
			}
			in.CollectionID = strings.TrimSpace(in.CollectionID)
		default:
			if _, err := io.Copy(io.Discard, part); err != nil {
				return fileReadError(err)
			}
		}
	}
	if !seen {
		return fileField("is required: a file part named \"file\"")
	}
	if len(in.Data) == 0 {
		return fileField("is empty: send a file with content")
	}
	f, err := h.svc.Upload(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, fileView(f))
	return nil
}

// formValue reads a form field of an upload: text of at most maxFormField bytes, valid UTF-8
// without NUL characters.
func formValue(part *multipart.Part, field string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
	if err != nil {
		return "", fileReadError(err)
	}
	switch {
	case len(b) > maxFormField:
		return "", domain.Invalid([]domain.FieldError{{Field: field, Message: "is longer than 16 KiB"}})
	case !utf8.Valid(b) || strings.ContainsRune(string(b), 0):
		return "", domain.Invalid([]domain.FieldError{{Field: field, Message: "must be UTF-8 text without NUL characters"}})
	}
	return string(b), nil
}

// splitTags reads a comma-separated tags field: each tag trimmed, empty ones dropped.
func splitTags(v string) []string {
	var tags []string
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

func fileField(msg string) error {
	return domain.Invalid([]domain.FieldError{{Field: "file", Message: msg}})
}

func fileTooLarge() error {
	return domain.Errorf(domain.KindTooLarge, "The file is larger than the upload limit of %d bytes (the request body at most %d); upload larger files with POST /api/v1/files/uploads/",
		library.MaxUploadBytes, FileUploadMaxBodyBytes)
}

func fileReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fileTooLarge()
	}
	return fileField("malformed multipart body")
}

// startUploadRequest is the body of POST /api/v1/files/uploads/.
type startUploadRequest struct {
	Name         *string  `json:"name"`
	Size         *int64   `json:"size"`
	MediaType    string   `json:"media_type"`
	Tags         []string `json:"tags"`
	CollectionID string   `json:"collection_id"`
}

// startUpload begins a presigned upload: the answer names the URL to PUT the bytes to.
func (h *fileHandlers) startUpload(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	var req startUploadRequest
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &req); err != nil {
		return err
	}
	var errs []domain.FieldError
	if req.Name == nil {
		errs = append(errs, domain.FieldError{Field: "name", Message: "is required"})
	}
	if req.Size == nil {
		errs = append(errs, domain.FieldError{Field: "size", Message: "is required: the file's size in bytes"})
	}
	if len(errs) > 0 {
		return domain.Invalid(errs)
	}
	up, err := h.svc.StartUpload(r.Context(), principal(r), library.StartUpload{Name: *req.Name, Size: *req.Size,
		MediaType: req.MediaType, Tags: req.Tags, CollectionID: req.CollectionID})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, pendingUploadView(up))
	return nil
}

// complete finishes a presigned upload once the client has PUT the bytes.
func (h *fileHandlers) complete(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	f, err := h.svc.CompleteUpload(r.Context(), principal(r), r.PathValue("file_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fileView(f))
	return nil
}

// bulk runs one operation (delete, update_tags, change_status) on many files.
func (h *fileHandlers) bulk(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	var in library.FileBulkInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	res, err := h.svc.BulkFiles(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, bulkResultView(res))
	return nil
}
