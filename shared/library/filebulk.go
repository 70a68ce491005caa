package library

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// Bulk operations on files.
const (
	opDelete       = "delete"
	opUpdateTags   = "update_tags"
	opChangeStatus = "change_status"
)

// Reasons of failed items of bulk and add-files results. Unknown ids and ids of another
// company fail alike, so ids cannot be probed.
const (
	reasonNotFound  = "file not found"
	reasonMalformed = "not a file id"
	reasonDuplicate = "duplicate: the id occurs earlier in this request"
)

// fileOps are the operations of a file bulk request.
var fileOps = []string{opDelete, opUpdateTags, opChangeStatus}

// FileBulkInput is one operation on many files: POST /files/bulk/ {operation, file_ids,
// parameters}, Operation delete, update_tags (parameters.tags replace each file's tags) or
// change_status (parameters.status active or archived) of FileIDs.
type FileBulkInput struct {
	Operation    *string         `json:"operation" want:"one of delete, update_tags, change_status" got:"paren"`
	FileIDs      []string        `json:"file_ids" want:"an array of strings (file ids)" items:"first"`
	Parameters   *FileBulkParams `json:"parameters"`
	domain.Shape `json:"-"`      // the body's shape errors, not a key of it
}

// FileBulkParams are the parameters of a file bulk request: update_tags takes Tags,
// change_status Status, delete none (a parameter sent to an operation that does not take it is
// an unknown field, null too).
type FileBulkParams struct {
	Tags   domain.Optional[[]string] `json:"tags" want:"an array of strings" items:"first"`
	Status domain.Optional[string]   `json:"status"`
}

// UnknownField words what a file bulk request has, and the parameters its operation takes.
func (in *FileBulkInput) UnknownField(object, _ string) string {
	if object == "parameters" {
		op, _ := validOperation(in.Operation, domain.Shape{}, fileOps...)
		return takesParams(op)
	}
	return "a bulk request has operation, file_ids and parameters"
}

// takesParams words the parameters op takes ("" for no operation).
func takesParams(op string) string {
	switch op {
	case opDelete:
		return "the delete operation takes no parameters"
	case opUpdateTags:
		return "update_tags takes parameters.tags"
	case opChangeStatus:
		return "change_status takes parameters.status"
	}
	return ""
}

// params checks the parameters of op: the errors of its values first, then the parameters it
// does not take (sorted), and the valid tags and status.
func (in *FileBulkInput) params(op string) (tags []string, status string, errs []domain.FieldError) {
	var p FileBulkParams
	if in.Parameters != nil {
		p = *in.Parameters
	}
	unknown := in.UnknownIn("parameters")
	other := func(set bool, name string) {
		if set {
			unknown = append(unknown, domain.FieldError{Field: "parameters." + name, Message: "unknown field; " + takesParams(op)})
		}
	}
	switch op {
	case opDelete:
		other(p.Tags.Set, "tags")
		other(p.Status.Set, "status")
	case opUpdateTags:
		switch e := in.WrongAt("parameters.tags"); {
		case p.Tags.Value == nil: // absent, null or not an array
			errs = append(errs, domain.FieldError{Field: "parameters.tags", Message: "is required: an array of strings (the tags that replace the files' tags)"})
		case e != nil:
			errs = append(errs, *e)
		default:
			var tagErrs []domain.FieldError
			tags, tagErrs = cleanTags(p.Tags.Value, "parameters.tags")
			errs = append(errs, tagErrs...)
		}
		other(p.Status.Set, "status")
	case opChangeStatus:
		if status = p.Status.Value; status != domain.FileActive && status != domain.FileArchived {
			errs = append(errs, domain.FieldError{Field: "parameters.status", Message: fmt.Sprintf("is required: %q or %q", domain.FileActive, domain.FileArchived)})
		}
		other(p.Tags.Set, "tags")
	default:
		return nil, "", nil // no operation: its parameters are not checked
	}
	slices.SortStableFunc(unknown, func(a, b domain.FieldError) int { return strings.Compare(a.Field, b.Field) })
	return tags, status, append(errs, unknown...)
}

// BulkFiles runs one operation on many files:
//   - delete: as DeleteFile, for each file;
//   - update_tags: Tags replaces each file's tags;
//   - change_status: Status `active` or `archived`. An archived file stays in its
//     collections and knowledge bases (its chunks stay indexed) but every search leaves it
//     out; `active` brings it back. Only active and archived files change status.
//
// Every id gets one item, in request order: ItemSucceeded, or ItemFailed with the reason
// (unknown or another company's id, malformed id, repeated id, a status that cannot change).
func (s *Service) BulkFiles(ctx context.Context, p domain.Principal, in FileBulkInput) ([]BulkItem, error) {
	op, opErr := validOperation(in.Operation, in.Shape, fileOps...)
	ids := in.FileIDs
	idsErr := validIDs(ids, in.Shape)
	extra := in.UnknownIn("")
	if e := in.WrongAt("parameters"); e != nil {
		extra = append(extra, *e)
	}
	tags, status, paramErrs := in.params(op)
	extra = append(extra, paramErrs...)
	if opErr != nil || idsErr != nil || len(extra) > 0 {
		return nil, joinInvalid(append([]domain.FieldError{derefField(opErr), derefField(idsErr)}, extra...)...)
	}

	items, valid := screenIDs(ids)
	files, err := s.FilesOf(ctx, p.Company, valid)
	if err != nil {
		return nil, err
	}
	var targets []*domain.File
	for i := range items {
		if items[i].Status != "" {
			continue
		}
		if f := files[items[i].FileID]; f != nil {
			targets = append(targets, f)
		} else {
			items[i].Status, items[i].Error = ItemFailed, reasonNotFound
		}
	}
	failed := map[string]error{}
	switch op {
	case opDelete:
		failed = s.deleteFiles(ctx, p.Company, targets)
	case opUpdateTags:
		for _, f := range targets {
			if !slices.Equal(f.Tags, tags) {
				f.Tags = tags
				failed[f.ID] = s.putFile(ctx, f)
			}
		}
	case opChangeStatus:
		for _, f := range targets {
			switch f.Status {
			case status:
			case domain.FileActive, domain.FileArchived:
				f.Status = status
				failed[f.ID] = s.putFile(ctx, f)
			default:
				failed[f.ID] = domain.Errorf(domain.KindConflict, "only active or archived files change status; this one is %s", f.Status)
			}
		}
	}
	for i := range items {
		if items[i].Status != "" {
			continue
		}
		items[i].Status = ItemSucceeded
		if err := failed[items[i].FileID]; err != nil {
			items[i].Status, items[i].Error = ItemFailed, reason(err)
		}
	}
	return items, nil
}

// putFile writes a changed file record if nobody changed or deleted it since it was read.
func (s *Service) putFile(ctx context.Context, f *domain.File) error {
	prev := f.UpdatedAt
	f.UpdatedAt = s.now()
	if err := s.d.Store.UpdateFile(ctx, f, prev); err != nil {
		return fmt.Errorf("update file %s: %w", f.ID, err)
	}
	return nil
}

// reason is the client-safe reason of a failed item: a domain error's message, else a generic
// one (the cause is internal).
func reason(err error) string {
	var de *domain.Error
	if errors.As(err, &de) && de.Kind != domain.KindInternal {
		return de.Message
	}
	return "an internal error occurred; retry this file"
}

// screenIDs makes one result item per id in order: malformed and repeated ids failed, the
// others with an empty Status for the caller to decide; valid lists those others.
func screenIDs(ids []string) (items []BulkItem, valid []string) {
	seen := map[string]bool{}
	items = make([]BulkItem, len(ids))
	for i, id := range ids {
		items[i].FileID = id
		switch {
		case !domain.IsID(id):
			items[i].Status, items[i].Error = ItemFailed, reasonMalformed
		case seen[id]:
			items[i].Status, items[i].Error = ItemFailed, reasonDuplicate
		default:
			seen[id] = true
			valid = append(valid, id)
		}
	}
	return items, valid
}

func derefField(fe *domain.FieldError) domain.FieldError {
	if fe == nil {
		return domain.FieldError{}
	}
	return *fe
}

// joinInvalid is the invalid_request_error of the non-empty field errors.
func joinInvalid(errs ...domain.FieldError) error {
	var out []domain.FieldError
	for _, e := range errs {
		if e.Field != "" {
			out = append(out, e)
		}
	}
	return domain.Invalid(out)
}
