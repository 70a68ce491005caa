package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/extract"
)

// Bounds of a file record's client-given parts.
const (
	// MaxFileNameLength bounds original_filename in characters (most file systems' limit).
	MaxFileNameLength = 255
	// MaxTags bounds a file's tags; MaxTagLength one tag, in characters.
	MaxTags      = 20
	MaxTagLength = 64
	// MaxMediaTypeLength bounds a presigned upload's declared media_type.
	MaxMediaTypeLength = 255
)

// detectBytes is how much of a file's head extract.Detect reads.
const detectBytes = 4 << 10

// Upload is a file sent whole in the request (multipart POST /api/v1/files/).
type Upload struct {
	Name string
	Data []byte
	// DeclaredType is the part's Content-Type. It is not trusted: media_type is judged by the
	// bytes, so a client cannot make an executable into a text file by calling it one.
	DeclaredType string
	Tags         []string
	// CollectionID, when set, names a collection of the caller's company the file joins.
	CollectionID string
}

// StartUpload begins a presigned upload of a file too large for the request
// (POST /api/v1/files/uploads/).
type StartUpload struct {
	Name      string
	Size      int64
	MediaType string // the Content-Type the client will PUT; application/octet-stream when empty
	Tags      []string
	// CollectionID, when set, names a collection of the caller's company the file joins at once
	// (the collection is pending until the upload completes).
	CollectionID string
}

// PendingUpload tells a client where to PUT a file's bytes.
type PendingUpload struct {
	FileID    string
	UploadURL string
	Method    string
	// Headers must go with the PUT exactly as given: S3 signs them.
	Headers   map[string]string
	ExpiresAt time.Time
}

// FileFilter selects files of a list; empty fields select all.
type FileFilter struct {
	Tag, Status, FileType string
	Offset, Limit         int
}

// objectKey is where a file's bytes live in S3. Only the service writes there.
func objectKey(company, id string) string { return "files/" + company + "/" + id }

// uploadKey is where a presigned upload's client PUTs the bytes; CompleteUpload copies them to
// objectKey. The bucket's lifecycle rule expires what stays there (see template.yaml).
func uploadKey(company, id string) string { return "uploads/" + company + "/" + id }

// Upload stores a file sent whole: its bytes in S3, then its record (status active; media_type
// and file_type judged by the bytes), then its place in the collection it names. Every check
// comes before the first write, so refused input stores nothing.
func (s *Service) Upload(ctx context.Context, p domain.Principal, in Upload) (*domain.File, error) {
	var errs []domain.FieldError
	name, msg := fileName(in.Name)
	if msg != "" {
		errs = append(errs, domain.FieldError{Field: "file", Message: msg})
	}
	if len(in.Data) == 0 {
		errs = append(errs, domain.FieldError{Field: "file", Message: "is empty: send a file with content"})
	}
	tags, tagErrs := cleanTags(in.Tags, "tags")
	if errs = append(errs, tagErrs...); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	if len(in.Data) > MaxUploadBytes {
		return nil, domain.Errorf(domain.KindTooLarge, "The file is larger than the upload limit of %d bytes; upload larger files with POST /api/v1/files/uploads/", MaxUploadBytes)
	}
	coll, err := s.targetCollection(ctx, p, in.CollectionID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	f := &domain.File{ID: uuid.NewString(), Company: p.Company, Owner: p.Owner, Name: name, Status: domain.FileActive,
		Tags: tags, CreatedAt: now, UpdatedAt: now}
	f.ObjectKey = objectKey(p.Company, f.ID)
	fp := newFingerprint()
	_, _ = fp.Write(in.Data) // never fails
	fp.judge(f)
	if err := s.d.Blobs.Put(ctx, f.ObjectKey, in.Data, f.MediaType); err != nil {
		return nil, fmt.Errorf("store file %s: %w", f.ID, err)
	}
	if err := s.d.Store.CreateFile(ctx, f); err != nil {
		return nil, fmt.Errorf("record file %s: %w", f.ID, err)
	}
	if err := s.joinCollection(ctx, coll, f); err != nil {
		return nil, err
	}
	return f, nil
}

// StartUpload records a file as uploading and answers a presigned PUT for its bytes (size
// 1..MaxPresignedBytes, valid for PresignTTL). CompleteUpload makes it active.
func (s *Service) StartUpload(ctx context.Context, p domain.Principal, in StartUpload) (*PendingUpload, error) {
	var errs []domain.FieldError
	name, msg := fileName(in.Name)
	if msg != "" {
		errs = append(errs, domain.FieldError{Field: "name", Message: msg})
	}
	if in.Size < 1 {
		errs = append(errs, domain.FieldError{Field: "size", Message: "must be at least 1: the file's size in bytes"})
	}
	media, msg := mediaType(in.MediaType)
	if msg != "" {
		errs = append(errs, domain.FieldError{Field: "media_type", Message: msg})
	}
	tags, tagErrs := cleanTags(in.Tags, "tags")
	if errs = append(errs, tagErrs...); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	if in.Size > MaxPresignedBytes {
		return nil, domain.Errorf(domain.KindTooLarge, "size: %d bytes is over the limit of a presigned upload, %d bytes (%d MiB)",
			in.Size, MaxPresignedBytes, MaxPresignedBytes>>20)
	}
	coll, err := s.targetCollection(ctx, p, in.CollectionID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	f := &domain.File{ID: uuid.NewString(), Company: p.Company, Owner: p.Owner, Name: name, Status: domain.FileUploading,
		MediaType: media, FileType: string(extract.FileOther), Size: in.Size, Tags: tags, CreatedAt: now, UpdatedAt: now}
	f.ObjectKey = objectKey(p.Company, f.ID)
	url, err := s.d.Blobs.PresignPut(ctx, uploadKey(f.Company, f.ID), f.Size, media, PresignTTL)
	if err != nil {
		return nil, fmt.Errorf("presign file %s: %w", f.ID, err)
	}
	if err := s.d.Store.CreateFile(ctx, f); err != nil {
		return nil, fmt.Errorf("record file %s: %w", f.ID, err)
	}
	if err := s.joinCollection(ctx, coll, f); err != nil {
		return nil, err
	}
	return &PendingUpload{FileID: f.ID, UploadURL: url, Method: "PUT", ExpiresAt: now.Add(PresignTTL),
		Headers: map[string]string{"Content-Type": media, "Content-Length": strconv.FormatInt(f.Size, 10)}}, nil
}

// CompleteUpload checks a presigned upload's object and makes the file active. The client PUTs
// to a staging key (uploads/…); completing streams the staged bytes once (hashing them and
// judging their type, never holding them in memory), copies them server-side to the file's key
// on the condition that their ETag is still the one read, records the file and deletes the
// staged object. Ingestion reads only the file's key, which no URL can write, so once a file is
// complete its bytes, content_hash and type cannot change: a later PUT to the still-valid URL
// writes a staged object nothing reads (and the bucket's lifecycle rule expires it).
//   - An active or archived file answers its record unchanged: completing twice is harmless.
//   - No object yet: 409, the record unchanged, while the URL is valid; once it has expired the
//     file is settled as `error` (so that no file, and no collection, waits forever) and the
//     409 says to start a new upload.
//   - An object of another size or content type than the upload was started for (a PUT that
//     bypassed the signed headers, which real S3 refuses but a local stand-in may not): 400;
//     the object is deleted and the file stays uploading, so the client may PUT again while the
//     URL is valid.
//   - Bytes replaced while completing: 409, complete again.
//   - A file in `error`: 409 with its reason.
func (s *Service) CompleteUpload(ctx context.Context, p domain.Principal, fileID string) (*domain.File, error) {
	f, err := s.file(ctx, p, fileID)
	if err != nil {
		return nil, err
	}
	switch f.Status {
	case domain.FileActive, domain.FileArchived:
		return f, nil
	case domain.FileError:
		return nil, domain.Errorf(domain.KindConflict, "The upload failed: %s", f.Error)
	}
	expires := f.CreatedAt.Add(PresignTTL)
	staged := uploadKey(f.Company, f.ID)
	body, obj, err := s.d.Blobs.Open(ctx, staged)
	if errors.Is(err, domain.ErrNotFound) {
		if s.now().Before(expires) {
			return nil, domain.Errorf(domain.KindConflict, "No bytes were uploaded yet: upload the bytes with PUT to upload_url first (valid until %s), then complete", expires.Format(time.RFC3339))
		}
		prev := f.UpdatedAt
		f.Status, f.Error, f.UpdatedAt = domain.FileError, "the upload URL expired before the bytes were uploaded; delete the file and start a new upload", s.now()
		if err := s.d.Store.UpdateFile(ctx, f, prev); err != nil {
			return nil, fmt.Errorf("settle file %s: %w", f.ID, err)
		}
		return nil, domain.Errorf(domain.KindConflict, "The upload failed: %s", f.Error)
	}
	if err != nil {
		return nil, fmt.Errorf("read file %s: %w", f.ID, err)
	}
	defer func() { _ = body.Close() }()
	refuse := func(what string) error {
		if err := s.d.Blobs.Delete(ctx, staged); err != nil {
			return fmt.Errorf("delete refused object of file %s: %w", f.ID, err)
		}
		return domain.Errorf(domain.KindInvalid, "The uploaded object %s; it was deleted: PUT exactly %d bytes with Content-Type %s to upload_url (valid until %s) and complete again",
			what, f.Size, f.MediaType, expires.Format(time.RFC3339))
	}
	if obj.Size != f.Size {
		return nil, refuse(fmt.Sprintf("has %d bytes, not the %d the upload was started for", obj.Size, f.Size))
	}
	if !sameMediaType(obj.ContentType, f.MediaType) {
		return nil, refuse(fmt.Sprintf("has Content-Type %q, not the %q the upload was started for", domain.Clip(obj.ContentType, 64), f.MediaType))
	}
	fp := newFingerprint()
	n, err := io.Copy(fp, io.LimitReader(body, f.Size+1))
	if err != nil {
		return nil, fmt.Errorf("read file %s: %w", f.ID, err)
	}
	if n != f.Size {
		return nil, refuse(fmt.Sprintf("has %d bytes, not the %d the upload was started for", n, f.Size))
	}
	if err := s.d.Blobs.Copy(ctx, staged, f.ObjectKey, obj.ETag); errors.Is(err, domain.ErrConflict) {
		return nil, domain.Errorf(domain.KindConflict, "The uploaded bytes were replaced while the upload was being completed; complete again")
	} else if err != nil {
		return nil, fmt.Errorf("copy file %s: %w", f.ID, err)
	}
	prev := f.UpdatedAt
	fp.judge(f)
	f.Status, f.UpdatedAt = domain.FileActive, s.now()
	if err := s.d.Store.UpdateFile(ctx, f, prev); err != nil {
		return nil, fmt.Errorf("record file %s: %w", f.ID, err)
	}
	// The file is complete whatever happens to the staged copy; the lifecycle rule removes it
	// if this delete fails.
	_ = s.d.Blobs.Delete(ctx, staged)
	return f, nil
}

// fingerprint reads a file's bytes once, as a stream, for what they say of the file: their
// SHA-256, their count and their head (what extract.Detect reads).
type fingerprint struct {
	hash hash.Hash
	head []byte
	n    int64
}

func newFingerprint() *fingerprint { return &fingerprint{hash: sha256.New()} }

func (fp *fingerprint) Write(p []byte) (int, error) {
	_, _ = fp.hash.Write(p) // a hash never fails
	if k := detectBytes - len(fp.head); k > 0 {
		fp.head = append(fp.head, p[:min(k, len(p))]...)
	}
	fp.n += int64(len(p))
	return len(p), nil
}

// judge sets what the bytes read say of a file: media type, class, size and hash.
func (fp *fingerprint) judge(f *domain.File) {
	t := extract.Detect(f.Name, fp.head)
	f.MediaType, f.FileType, f.Size, f.ContentHash = t.MediaType, string(t.FileType), fp.n, hex.EncodeToString(fp.hash.Sum(nil))
}

// sameMediaType reports whether a stored object's Content-Type is the one an upload signed.
func sameMediaType(stored, signed string) bool {
	return strings.EqualFold(strings.TrimSpace(stored), strings.TrimSpace(signed))
}

// ListFiles lists the company's files, newest first, filtered and paged: it reads the page's
// records (and, with a filter, those it passes over), not the company's whole list.
func (s *Service) ListFiles(ctx context.Context, p domain.Principal, f FileFilter) ([]*domain.File, bool, error) {
	var errs []domain.FieldError
	if f.Status != "" && !slices.Contains(domain.FileStatuses, f.Status) {
		errs = append(errs, domain.FieldError{Field: "status", Message: fmt.Sprintf("must be one of %s (got %q)", strings.Join(domain.FileStatuses, ", "), domain.Clip(f.Status, 64))})
	}
	if f.FileType != "" && !slices.Contains(domain.FileTypes, f.FileType) {
		errs = append(errs, domain.FieldError{Field: "file_type", Message: fmt.Sprintf("must be one of %s (got %q)", strings.Join(domain.FileTypes, ", "), domain.Clip(f.FileType, 64))})
	}
	if len(errs) > 0 {
		return nil, false, domain.Invalid(errs)
	}
	tag := strings.TrimSpace(f.Tag)
	var keep func(*domain.File) (bool, error)
	if f.Status != "" || f.FileType != "" || tag != "" {
		keep = func(file *domain.File) (bool, error) {
			return (f.Status == "" || file.Status == f.Status) && (f.FileType == "" || file.FileType == f.FileType) &&
				(tag == "" || slices.Contains(file.Tags, tag)), nil
		}
	}
	files, more, err := Collect(ctx, func(ctx context.Context, after string, n int) ([]*domain.File, string, error) {
		return s.d.Store.ListFiles(ctx, p.Company, after, n)
	}, keep, f.Offset, f.Limit)
	if err != nil {
		return nil, false, fmt.Errorf("list files: %w", err)
	}
	return files, more, nil
}

// GetFile reads a file of the company.
func (s *Service) GetFile(ctx context.Context, p domain.Principal, id string) (*domain.File, error) {
	f, err := s.file(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// DeleteFile removes a file: its chunks leave every knowledge base first, then it leaves its
// collections, then its bytes go, and its record last. A failure at any step leaves the record,
// so the delete can be repeated, and never a record-less file with chunks still searchable.
func (s *Service) DeleteFile(ctx context.Context, p domain.Principal, id string) error {
	f, err := s.file(ctx, p, id)
	if err != nil {
		return err
	}
	if errs := s.deleteFiles(ctx, p.Company, []*domain.File{f}); errs[f.ID] != nil {
		return errs[f.ID]
	}
	return nil
}

// deleteFiles deletes files of one company in the order DeleteFile describes, with one
// ListCollections and one collection update per collection that holds any of them. It returns
// the error of each file that could not be deleted (the others are gone).
func (s *Service) deleteFiles(ctx context.Context, company string, files []*domain.File) map[string]error {
	failed := map[string]error{}
	dropped := map[string]bool{}
	for _, f := range files {
		if err := s.d.Drop(ctx, f); err != nil {
			failed[f.ID] = fmt.Errorf("drop file %s from its knowledge bases: %w", f.ID, err)
			continue
		}
		dropped[f.ID] = true
	}
	if len(dropped) > 0 {
		colls, err := s.allCollections(ctx, company)
		if err != nil {
			for id := range dropped {
				failed[id] = err
			}
			clear(dropped)
		}
		for _, c := range colls {
			if !slices.ContainsFunc(c.FileIDs, func(id string) bool { return dropped[id] }) {
				continue
			}
			_, err := s.changeCollection(ctx, c, func(c *domain.Collection) bool {
				n := len(c.FileIDs)
				c.FileIDs = slices.DeleteFunc(c.FileIDs, func(id string) bool { return dropped[id] })
				return len(c.FileIDs) != n
			})
			if errors.Is(err, domain.ErrNotFound) {
				continue // deleted meanwhile
			}
			if err != nil {
				for _, id := range c.FileIDs {
					if dropped[id] {
						failed[id] = fmt.Errorf("remove from collection %s: %w", c.ID, err)
						delete(dropped, id)
					}
				}
			}
		}
	}
	for _, f := range files {
		if !dropped[f.ID] {
			continue
		}
		if err := errors.Join(s.d.Blobs.Delete(ctx, f.ObjectKey), s.d.Blobs.Delete(ctx, uploadKey(f.Company, f.ID))); err != nil {
			failed[f.ID] = fmt.Errorf("delete bytes of file %s: %w", f.ID, err)
			continue
		}
		if err := s.d.Store.DeleteFile(ctx, f.ID); err != nil {
			failed[f.ID] = fmt.Errorf("delete file %s: %w", f.ID, err)
		}
	}
	return failed
}

// fileName checks a client's file name and keeps its base name (no directories: "../../x.txt"
// and "C:\docs\x.txt" are "x.txt"). It answers the message of a field error when the name is
// unusable.
func fileName(name string) (string, string) {
	if !utf8.ValidString(name) || strings.ContainsFunc(name, unsafeRune) {
		return "", "has a file name with control or format characters (such as U+202E, which shows \"\u202etxt.exe\" as \"exe.txt\") or invalid UTF-8"
	}
	slashed := strings.TrimSpace(strings.ReplaceAll(name, `\`, "/"))
	base := strings.TrimSpace(path.Base(slashed))
	switch {
	case strings.HasSuffix(slashed, "/") || base == "." || base == ".." || !domain.HasVisible(base):
		return "", "needs a file name (the name of the file, such as report.pdf)"
	case utf8.RuneCountInString(base) > MaxFileNameLength:
		return "", fmt.Sprintf("has a file name longer than %d characters", MaxFileNameLength)
	}
	return base, ""
}

// unsafeRune reports the characters a name may not hold: controls (Cc) and format characters
// (Cf: bidirectional overrides and isolates, zero-width characters), which make a name read as
// something it is not.
func unsafeRune(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// mediaType checks a declared media type; empty is application/octet-stream.
func mediaType(v string) (string, string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return extract.MediaUnknown, ""
	}
	if len(v) > MaxMediaTypeLength {
		return "", fmt.Sprintf("must be at most %d characters", MaxMediaTypeLength)
	}
	if _, _, err := mime.ParseMediaType(v); err != nil || !strings.Contains(v, "/") {
		return "", fmt.Sprintf("must be a media type such as application/pdf (got %q)", domain.Clip(v, 64))
	}
	return v, ""
}

// cleanTags trims tags, drops empty ones and duplicates (keeping the first), and bounds their
// number and length; field names the errors.
func cleanTags(in []string, field string) ([]string, []domain.FieldError) {
	tags := []string{}
	for _, t := range in {
		t = strings.TrimSpace(t)
		switch {
		case t == "" || slices.Contains(tags, t):
			continue
		case !utf8.ValidString(t) || strings.ContainsFunc(t, unsafeRune):
			return nil, []domain.FieldError{{Field: field, Message: "must be text without control or format characters"}}
		case utf8.RuneCountInString(t) > MaxTagLength:
			return nil, []domain.FieldError{{Field: field, Message: fmt.Sprintf("has a tag longer than %d characters (%q)", MaxTagLength, domain.Clip(t, 80))}}
		}
		tags = append(tags, t)
	}
	if len(tags) > MaxTags {
		return nil, []domain.FieldError{{Field: field, Message: fmt.Sprintf("has %d tags; a file has at most %d", len(tags), MaxTags)}}
	}
	return tags, nil
}
