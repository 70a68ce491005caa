package knowledge

import (
	"context"
	"errors"
	"fmt"
	"maps"
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

// Statuses of bulk result items.
const (
	statusSuccess = "success"
	statusFailed  = "failed"
)

// Reasons of failed items of bulk and add-files results. Unknown ids and ids of another
// company fail alike, so ids cannot be probed.
const (
	reasonNotFound  = "file not found"
	reasonMalformed = "not a file id"
	reasonDuplicate = "duplicate: the id occurs earlier in this request"
)

// BulkFiles runs one operation on many files ({operation, file_ids, parameters}):
//   - delete: as DeleteFile, for each file;
//   - update_tags: parameters.tags (an array of strings) replaces each file's tags;
//   - change_status: parameters.status `active` or `archived`. An archived file stays in its
//     collections and knowledge bases (its chunks stay indexed) but every search leaves it
//     out; `active` brings it back. Only active and archived files change status.
//
// Every id gets one result, in request order: `success`, or `failed` with the reason (unknown
// or another company's id, malformed id, repeated id, a status that cannot change). success is
// true when none failed; processed counts the items that succeeded.
func (s *Service) BulkFiles(ctx context.Context, p domain.Principal, body map[string]any) (*BulkResult, error) {
	op, opErr := operation(body, opDelete, opUpdateTags, opChangeStatus)
	ids, idsErr := requestIDs(body)
	var tags []string
	var status string
	paramErrs := unknownKeys(body, "", "a bulk request has operation, file_ids and parameters", "operation", "file_ids", "parameters")
	params, ok := body["parameters"].(map[string]any)
	if !ok && body["parameters"] != nil {
		paramErrs = append(paramErrs, domain.FieldError{Field: "parameters", Message: "must be an object, got " + domain.JSONType(body["parameters"])})
	}
	switch op {
	case opUpdateTags:
		tags, paramErrs = bulkTags(params, paramErrs)
		paramErrs = append(paramErrs, unknownKeys(params, "parameters.", "update_tags takes parameters.tags", "tags")...)
	case opDelete:
		paramErrs = append(paramErrs, unknownKeys(params, "parameters.", "the delete operation takes no parameters")...)
	case opChangeStatus:
		status, ok = params["status"].(string)
		if !ok || (status != domain.FileActive && status != domain.FileArchived) {
			paramErrs = append(paramErrs, domain.FieldError{Field: "parameters.status", Message: fmt.Sprintf("is required: %q or %q", domain.FileActive, domain.FileArchived)})
		}
		paramErrs = append(paramErrs, unknownKeys(params, "parameters.", "change_status takes parameters.status", "status")...)
	}
	if opErr != nil || idsErr != nil || len(paramErrs) > 0 {
		return nil, joinInvalid(append([]domain.FieldError{derefField(opErr), derefField(idsErr)}, paramErrs...)...)
	}

	items, valid := screenIDs(ids)
	files, err := s.files(ctx, p.Company, valid)
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
			items[i].Status, items[i].Error = statusFailed, reasonNotFound
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
		items[i].Status = statusSuccess
		if err := failed[items[i].FileID]; err != nil {
			items[i].Status, items[i].Error = statusFailed, reason(err)
		}
	}
	return bulkResult(items), nil
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

// bulkTags reads parameters.tags of update_tags.
func bulkTags(params map[string]any, errs []domain.FieldError) ([]string, []domain.FieldError) {
	list, ok := params["tags"].([]any)
	if !ok {
		return nil, append(errs, domain.FieldError{Field: "parameters.tags", Message: "is required: an array of strings (the tags that replace the files' tags)"})
	}
	in := make([]string, len(list))
	for i, v := range list {
		if in[i], ok = v.(string); !ok {
			return nil, append(errs, domain.FieldError{Field: "parameters.tags", Message: fmt.Sprintf("must be an array of strings: item %d is %s", i, domain.JSONType(v))})
		}
	}
	tags, tagErrs := cleanTags(in, "parameters.tags")
	return tags, append(errs, tagErrs...)
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

// operation reads the operation of a bulk request, one of ops.
func operation(body map[string]any, ops ...string) (string, *domain.FieldError) {
	op, ok := body["operation"].(string)
	if !ok || !slices.Contains(ops, op) {
		got := "none"
		if body["operation"] != nil {
			got = domain.JSONType(body["operation"])
			if ok {
				got = fmt.Sprintf("%q", domain.Clip(op, 64))
			}
		}
		return "", &domain.FieldError{Field: "operation", Message: fmt.Sprintf("must be one of %s (got %s)", strings.Join(ops, ", "), got)}
	}
	return op, nil
}

// requestIDs reads file_ids: an array of 1..MaxRequestIDs strings.
func requestIDs(body map[string]any) ([]string, *domain.FieldError) {
	bad := func(format string, args ...any) ([]string, *domain.FieldError) {
		return nil, &domain.FieldError{Field: "file_ids", Message: fmt.Sprintf(format, args...)}
	}
	v, present := body["file_ids"]
	list, ok := v.([]any)
	switch {
	case !present || v == nil:
		return bad("is required: an array of file ids")
	case !ok:
		return bad("must be an array of strings (file ids), got %s", domain.JSONType(v))
	case len(list) == 0:
		return bad("must hold at least one file id")
	case len(list) > MaxRequestIDs:
		return bad("holds %d ids; send at most %d per request", len(list), MaxRequestIDs)
	}
	ids := make([]string, len(list))
	for i, x := range list {
		if ids[i], ok = x.(string); !ok {
			return bad("must be an array of strings (file ids): item %d is %s", i, domain.JSONType(x))
		}
	}
	return ids, nil
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
			items[i].Status, items[i].Error = statusFailed, reasonMalformed
		case seen[id]:
			items[i].Status, items[i].Error = statusFailed, reasonDuplicate
		default:
			seen[id] = true
			valid = append(valid, id)
		}
	}
	return items, valid
}

// bulkResult counts the items.
func bulkResult(items []BulkItem) *BulkResult {
	res := &BulkResult{Results: items}
	for _, it := range items {
		if it.Status == statusSuccess {
			res.Processed++
		} else {
			res.Failed++
		}
	}
	res.Success = res.Failed == 0
	return res
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
