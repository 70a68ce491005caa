package library

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// A collection's status, progress and counts are derived on every read from its files, never
// stored (domain.SummarizeCollection).

// Bounds of collections and of the id lists of requests.
const (
	// MaxDescriptionLength bounds a collection's description in characters.
	MaxDescriptionLength = 2000
	// MaxRequestIDs bounds file_ids of one bulk or add-files request.
	MaxRequestIDs = 100
)

// Bulk operations on collections.
const (
	opAddFiles    = "add_files"
	opRemoveFiles = "remove_files"
)

// updateAttempts is how often a collection update is tried when concurrent writes keep winning.
const updateAttempts = 5

// CollectionInput is a collection to create: POST /collections/ {name, description?}.
type CollectionInput struct {
	Name         *string    `json:"name"`
	Description  string     `json:"description"`
	domain.Shape `json:"-"` // the body's shape errors, not a key of it
}

// UnknownField words what a collection's body has.
func (*CollectionInput) UnknownField(string, string) string {
	return "a collection has name and description"
}

// check validates a collection's name and description.
func (in *CollectionInput) check() []domain.FieldError {
	errs := slices.Clone(in.Unknown)
	if e := in.WrongAt("name"); e != nil {
		errs = append(errs, *e)
	} else if in.Name == nil {
		errs = append(errs, domain.FieldError{Field: "name", Message: "is required"})
	} else if !domain.HasVisible(*in.Name) {
		errs = append(errs, domain.FieldError{Field: "name", Message: "must have a visible character"})
	} else if utf8.RuneCountInString(strings.TrimSpace(*in.Name)) > domain.MaxNameLength {
		errs = append(errs, domain.FieldError{Field: "name", Message: fmt.Sprintf("must be at most %d characters", domain.MaxNameLength)})
	}
	if e := in.WrongAt("description"); e != nil {
		errs = append(errs, *e)
	} else if utf8.RuneCountInString(in.Description) > MaxDescriptionLength {
		errs = append(errs, domain.FieldError{Field: "description", Message: fmt.Sprintf("must be at most %d characters", MaxDescriptionLength)})
	}
	return errs
}

// CreateCollection creates an empty collection: status pending, progress 0, counts 0.
func (s *Service) CreateCollection(ctx context.Context, p domain.Principal, in CollectionInput) (*Collection, error) {
	if errs := in.check(); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	name, desc := *in.Name, in.Description
	now := s.now()
	c := &domain.Collection{ID: uuid.NewString(), Company: p.Company, Owner: p.Owner, Name: strings.TrimSpace(name),
		Description: desc, FileIDs: []string{}, CreatedAt: now, UpdatedAt: now}
	if err := s.d.Store.PutCollection(ctx, c); err != nil {
		return nil, fmt.Errorf("create collection: %w", err)
	}
	return &Collection{Collection: c}, nil
}

// ListCollections lists the company's collections with their files, newest first, a page at a
// time.
func (s *Service) ListCollections(ctx context.Context, p domain.Principal, offset, limit int) ([]*Collection, bool, error) {
	colls, more, err := Collect(ctx, func(ctx context.Context, after string, n int) ([]*domain.Collection, string, error) {
		return s.d.Store.ListCollections(ctx, p.Company, after, n)
	}, nil, offset, limit)
	if err != nil {
		return nil, false, fmt.Errorf("list collections: %w", err)
	}
	var ids []string
	for _, c := range colls {
		ids = append(ids, c.FileIDs...)
	}
	files, err := s.FilesOf(ctx, p.Company, ids)
	if err != nil {
		return nil, false, err
	}
	out := make([]*Collection, len(colls))
	for i, c := range colls {
		out[i] = withFiles(c, files)
	}
	return out, more, nil
}

// GetCollection reads a collection with its files, in the order they were added.
func (s *Service) GetCollection(ctx context.Context, p domain.Principal, id string) (*Collection, error) {
	c, err := s.Collection(ctx, p, id)
	if err != nil {
		return nil, err
	}
	files, err := s.FilesOf(ctx, p.Company, c.FileIDs)
	if err != nil {
		return nil, err
	}
	return withFiles(c, files), nil
}

// CollectionFiles lists a collection's files in the order they were added, a page at a time.
func (s *Service) CollectionFiles(ctx context.Context, p domain.Principal, id string, offset, limit int) ([]*domain.File, bool, error) {
	c, err := s.Collection(ctx, p, id)
	if err != nil {
		return nil, false, err
	}
	ids, more := page(c.FileIDs, offset, limit)
	files, err := s.FilesOf(ctx, p.Company, ids)
	if err != nil {
		return nil, false, err
	}
	out := []*domain.File{}
	for _, fid := range ids {
		if f := files[fid]; f != nil {
			out = append(out, f)
		}
	}
	return out, more, nil
}

// FileIDsInput names the files to add to a collection: POST /collections/{id}/files/
// {file_ids}.
type FileIDsInput struct {
	FileIDs      []string   `json:"file_ids" want:"an array of strings (file ids)" items:"first"`
	domain.Shape `json:"-"` // the body's shape errors, not a key of it
}

// UnknownField words what adding files takes.
func (*FileIDsInput) UnknownField(string, string) string { return "adding files takes file_ids" }

// AddFiles adds files of the company to a collection, one item per id in request order. A file
// already in it counts as added and changes nothing (so a retried request answers the same);
// unknown, foreign, malformed and repeated ids fail, as do ids beyond the collection's capacity.
func (s *Service) AddFiles(ctx context.Context, p domain.Principal, id string, in FileIDsInput) ([]BulkItem, error) {
	ids := in.FileIDs
	if idsErr := validIDs(ids, in.Shape); idsErr != nil || len(in.Unknown) > 0 {
		return nil, joinInvalid(append([]domain.FieldError{derefField(idsErr)}, in.Unknown...)...)
	}
	c, err := s.Collection(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return s.addToCollection(ctx, p, c, ids)
}

// CollectionBulkInput is a bulk change of a collection's files: POST /collections/{id}/bulk/
// {operation, file_ids, parameters}, Operation add_files or remove_files of FileIDs; neither
// operation takes parameters.
type CollectionBulkInput struct {
	Operation    *string    `json:"operation" want:"one of add_files, remove_files" got:"paren"`
	FileIDs      []string   `json:"file_ids" want:"an array of strings (file ids)" items:"first"`
	Parameters   *struct{}  `json:"parameters"`
	domain.Shape `json:"-"` // the body's shape errors, not a key of it
}

// UnknownField words what a collection's bulk request has, and that its operation takes no
// parameters.
func (in *CollectionBulkInput) UnknownField(object, _ string) string {
	if object == "parameters" {
		op, _ := validOperation(in.Operation, domain.Shape{}, opAddFiles, opRemoveFiles)
		return op + " takes no parameters"
	}
	return "a collection's bulk request has operation, file_ids and parameters"
}

// BulkCollection adds or removes many files. Adding is AddFiles; removing fails for ids not in
// the collection.
func (s *Service) BulkCollection(ctx context.Context, p domain.Principal, id string, in CollectionBulkInput) ([]BulkItem, error) {
	op, opErr := validOperation(in.Operation, in.Shape, opAddFiles, opRemoveFiles)
	ids := in.FileIDs
	idsErr := validIDs(ids, in.Shape)
	var params []domain.FieldError
	if e := in.WrongAt("parameters"); e != nil {
		params = append(params, *e)
	}
	extra := slices.Concat(in.UnknownIn(""), params, in.UnknownIn("parameters"))
	if opErr != nil || idsErr != nil || len(extra) > 0 {
		return nil, joinInvalid(append([]domain.FieldError{derefField(opErr), derefField(idsErr)}, extra...)...)
	}
	c, err := s.Collection(ctx, p, id)
	if err != nil {
		return nil, err
	}
	var items []BulkItem
	if op == opAddFiles {
		items, err = s.addToCollection(ctx, p, c, ids)
	} else {
		items, err = s.removeFromCollection(ctx, c, ids)
	}
	if err != nil {
		return nil, err
	}
	return items, nil
}

// DeleteCollection removes a collection; its files remain, and so do knowledge bases built
// from it (they keep what they ingested).
func (s *Service) DeleteCollection(ctx context.Context, p domain.Principal, id string) error {
	c, err := s.Collection(ctx, p, id)
	if err != nil {
		return err
	}
	if err := s.d.Store.DeleteCollection(ctx, c.ID); err != nil {
		return fmt.Errorf("delete collection %s: %w", c.ID, err)
	}
	return nil
}

// addToCollection adds the files of ids that exist in the company to c, in one update (read
// again and redone on a concurrent change). Items with Status "success" were added (or were in
// it already).
func (s *Service) addToCollection(ctx context.Context, p domain.Principal, c *domain.Collection, ids []string) ([]BulkItem, error) {
	items, valid := screenIDs(ids)
	files, err := s.FilesOf(ctx, p.Company, valid)
	if err != nil {
		return nil, err
	}
	eligible := make([]bool, len(items))
	for i := range items {
		if items[i].Status == "" && files[items[i].FileID] == nil {
			items[i].Status, items[i].Error = ItemFailed, reasonNotFound
		}
		eligible[i] = items[i].Status == ""
	}
	_, err = s.changeCollection(ctx, c, func(c *domain.Collection) bool {
		n := len(c.FileIDs)
		for i := range items {
			if !eligible[i] {
				continue
			}
			items[i].Status, items[i].Error = ItemSucceeded, ""
			switch fid := items[i].FileID; {
			case slices.Contains(c.FileIDs, fid):
			case len(c.FileIDs) >= s.l.MaxCollectionFiles:
				items[i].Status = ItemFailed
				items[i].Error = fmt.Sprintf("the collection is full: it holds at most %d files", s.l.MaxCollectionFiles)
			default:
				c.FileIDs = append(c.FileIDs, fid)
			}
		}
		return len(c.FileIDs) != n
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// removeFromCollection takes the files of ids out of c in one update; ids not in it fail.
func (s *Service) removeFromCollection(ctx context.Context, c *domain.Collection, ids []string) ([]BulkItem, error) {
	items, _ := screenIDs(ids)
	eligible := make([]bool, len(items))
	for i := range items {
		eligible[i] = items[i].Status == ""
	}
	_, err := s.changeCollection(ctx, c, func(c *domain.Collection) bool {
		n := len(c.FileIDs)
		for i := range items {
			if !eligible[i] {
				continue
			}
			items[i].Status, items[i].Error = ItemSucceeded, ""
			if k := slices.Index(c.FileIDs, items[i].FileID); k >= 0 {
				c.FileIDs = slices.Delete(c.FileIDs, k, k+1)
			} else {
				items[i].Status, items[i].Error = ItemFailed, "file not in the collection"
			}
		}
		return len(c.FileIDs) != n
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// targetCollection loads the collection an upload names ("" is none): the caller's, with room
// for one more file.
func (s *Service) targetCollection(ctx context.Context, p domain.Principal, id string) (*domain.Collection, error) {
	if id == "" {
		return nil, nil
	}
	c, err := s.Collection(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if len(c.FileIDs) >= s.l.MaxCollectionFiles {
		return nil, s.fullError()
	}
	return c, nil
}

func (s *Service) fullError() error {
	return domain.Errorf(domain.KindConflict, "The collection already holds %d files, the most a collection may hold", s.l.MaxCollectionFiles)
}

// joinCollection adds a newly stored file to the collection of its upload (nil: none). When
// that fails, the file is taken back (record and bytes), so the refused upload leaves nothing.
func (s *Service) joinCollection(ctx context.Context, c *domain.Collection, f *domain.File) error {
	if c == nil {
		return nil
	}
	full := false
	_, err := s.changeCollection(ctx, c, func(c *domain.Collection) bool {
		full = len(c.FileIDs) >= s.l.MaxCollectionFiles
		if full {
			return false
		}
		c.FileIDs = append(c.FileIDs, f.ID)
		return true
	})
	switch {
	case err == nil && !full:
		return nil
	case errors.Is(err, domain.ErrNotFound):
		err = NotFound("Collection") // deleted meanwhile
	case err == nil:
		err = s.fullError()
	}
	// Best effort: a leftover is an unlisted object or a file outside the collection, and the
	// client is told the upload failed either way.
	_ = s.d.Store.DeleteFile(ctx, f.ID)
	_ = s.d.Blobs.Delete(ctx, f.ObjectKey)
	return err
}

// changeCollection applies change to a copy of c and, if change reports a change, writes it on
// the condition that nobody wrote c since it was read; on a conflict it reads the collection
// again and repeats (change must therefore decide afresh each time). It returns the collection
// as stored.
func (s *Service) changeCollection(ctx context.Context, c *domain.Collection, change func(*domain.Collection) bool) (*domain.Collection, error) {
	for attempt := 1; ; attempt++ {
		next := *c
		next.FileIDs = slices.Clone(c.FileIDs)
		if !change(&next) {
			return c, nil
		}
		prev := c.UpdatedAt
		if next.UpdatedAt = s.now(); !next.UpdatedAt.After(prev) {
			next.UpdatedAt = prev.Add(time.Microsecond)
		}
		err := s.d.Store.UpdateCollection(ctx, &next, prev)
		switch {
		case err == nil:
			return &next, nil
		case errors.Is(err, domain.ErrNotFound):
			return nil, NotFound("Collection")
		case !errors.Is(err, domain.ErrConflict):
			return nil, fmt.Errorf("update collection %s: %w", c.ID, err)
		case attempt == updateAttempts:
			return nil, domain.Wrap(domain.KindConflict, err, "The collection is being changed by other requests at the same time; retry")
		}
		fresh, err := s.d.Store.GetCollection(ctx, c.ID)
		if errors.Is(err, domain.ErrNotFound) {
			return nil, NotFound("Collection")
		}
		if err != nil {
			return nil, fmt.Errorf("read collection %s: %w", c.ID, err)
		}
		c = fresh
	}
}

// withFiles is c with those of its files that files holds (the others were deleted meanwhile),
// in the order they were added; files may hold more than c's.
func withFiles(c *domain.Collection, files map[string]*domain.File) *Collection {
	out := &Collection{Collection: c, Files: []*domain.File{}}
	for _, id := range c.FileIDs {
		if f := files[id]; f != nil {
			out.Files = append(out.Files, f)
		}
	}
	return out
}
