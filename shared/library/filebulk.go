package library

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

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

// FileBulkInput is one operation on many files: Operation delete, update_tags (Tags replace
// each file's tags) or change_status (Status active or archived), of FileIDs.
type FileBulkInput struct {
	Operation string
	FileIDs   []string
	Tags      []string
	Status    string
	shape     Shape
}

// UnmarshalJSON reads the body of POST /files/bulk/ ({operation, file_ids, parameters}):
// update_tags takes parameters.tags, change_status parameters.status, delete nothing.
func (in *FileBulkInput) UnmarshalJSON(b []byte) error {
	body, err := domain.DecodeObject(b)
	if err != nil {
		return err
	}
	*in = FileBulkInput{}
	in.Operation = decodeOperation(body, &in.shape, opDelete, opUpdateTags, opChangeStatus)
	in.FileIDs = decodeIDs(body, &in.shape)
	in.shape.AddAll("params", unknownKeys(body, "", "a bulk request has operation, file_ids and parameters", "operation", "file_ids", "parameters"))
	params := decodeParams(body, &in.shape)
	in.shape.AddAll("params", in.shape["parameters"])
	op, _ := checkOperation(in.Operation, in.shape, opDelete, opUpdateTags, opChangeStatus)
	switch op {
	case opUpdateTags:
		in.Tags = decodeTags(params, &in.shape)
		in.shape.AddAll("parameters.", unknownKeys(params, "parameters.", "update_tags takes parameters.tags", "tags"))
	case opDelete:
		in.shape.AddAll("parameters.", unknownKeys(params, "parameters.", "the delete operation takes no parameters"))
	case opChangeStatus:
		in.Status, _ = params["status"].(string)
		in.shape.AddAll("parameters.", unknownKeys(params, "parameters.", "change_status takes parameters.status", "status"))
	}
	return nil
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
	op, opErr := checkOperation(in.Operation, in.shape, opDelete, opUpdateTags, opChangeStatus)
	ids := in.FileIDs
	idsErr := checkIDs(ids, in.shape)
	var tags []string
	status := in.Status
	paramErrs := slices.Clone(in.shape["params"])
	switch op {
	case opUpdateTags:
		if e := in.shape["tags"]; len(e) > 0 {
			paramErrs = append(paramErrs, e...)
		} else {
			var tagErrs []domain.FieldError
			tags, tagErrs = cleanTags(in.Tags, "parameters.tags")
			paramErrs = append(paramErrs, tagErrs...)
		}
	case opChangeStatus:
		if status != domain.FileActive && status != domain.FileArchived {
			paramErrs = append(paramErrs, domain.FieldError{Field: "parameters.status", Message: fmt.Sprintf("is required: %q or %q", domain.FileActive, domain.FileArchived)})
		}
	}
	paramErrs = append(paramErrs, in.shape["parameters."]...)
	if opErr != nil || idsErr != nil || len(paramErrs) > 0 {
		return nil, joinInvalid(append([]domain.FieldError{derefField(opErr), derefField(idsErr)}, paramErrs...)...)
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

// decodeTags reads parameters.tags of update_tags.
func decodeTags(params map[string]any, s *Shape) []string {
	list, ok := params["tags"].([]any)
	if !ok {
		s.Add("tags", "parameters.tags", "is required: an array of strings (the tags that replace the files' tags)")
		return nil
	}
	tags := make([]string, len(list))
	for i, v := range list {
		if tags[i], ok = v.(string); !ok {
			s.Add("tags", "parameters.tags", fmt.Sprintf("must be an array of strings: item %d is %s", i, domain.JSONType(v)))
			return nil
		}
	}
	return tags
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

// unknownKeys names each key of m (sorted) that is not one of known, as a field error under
// prefix with the message "unknown field; " + what: a field a client means must never be
// silently ignored.
func unknownKeys(m map[string]any, prefix, what string, known ...string) []domain.FieldError {
	var errs []domain.FieldError
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, k) {
			errs = append(errs, domain.FieldError{Field: prefix + domain.Clip(k, 64), Message: "unknown field; " + what})
		}
	}
	return errs
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
