package library

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// shape is what the edge's decoder found wrong with a body's JSON shape: keys the input does not
// have and values of the wrong JSON type, worded and in the order the API has always listed
// them. Embedded in an input, it takes them (TakeShape) so that the feature reports them with
// the errors of the values, field by field; an input built in Go has none.
type shape struct {
	unknown, wrong []domain.FieldError
}

// TakeShape keeps the errors of the body's shape, for Validate.
func (s *shape) TakeShape(unknown, wrong []domain.FieldError) { s.unknown, s.wrong = unknown, wrong }

// wrongAt is the first value of the wrong type at field, or nil.
func (s shape) wrongAt(field string) *domain.FieldError {
	for i, e := range s.wrong {
		if e.Field == field {
			return &s.wrong[i]
		}
	}
	return nil
}

// unknownIn lists the unknown keys of the object at prefix ("parameters."), or with prefix ""
// those of the body itself (the others).
func (s shape) unknownIn(prefix string, nested ...string) []domain.FieldError {
	var out []domain.FieldError
	for _, e := range s.unknown {
		in := prefix != "" && strings.HasPrefix(e.Field, prefix)
		if prefix == "" {
			in = !slices.ContainsFunc(nested, func(p string) bool { return strings.HasPrefix(e.Field, p) })
		}
		if in {
			out = append(out, e)
		}
	}
	return out
}

// validOperation is a bulk request's operation, one of ops (a field error when it is not).
func validOperation(op *string, s shape, ops ...string) (string, *domain.FieldError) {
	if e := s.wrongAt("operation"); e != nil {
		return "", e
	}
	list := strings.Join(ops, ", ")
	switch {
	case op == nil:
		return "", &domain.FieldError{Field: "operation", Message: fmt.Sprintf("must be one of %s (got none)", list)}
	case !slices.Contains(ops, *op):
		return "", &domain.FieldError{Field: "operation", Message: fmt.Sprintf("must be one of %s (got %q)", list, domain.Clip(*op, 64))}
	}
	return *op, nil
}

// validIDs validates file_ids: an array of 1..MaxRequestIDs strings. An array that is not one
// is named first, and one of the wrong items after its count.
func validIDs(ids []string, s shape) *domain.FieldError {
	e := s.wrongAt("file_ids")
	switch {
	case e != nil && ids == nil:
		return e
	case ids == nil:
		return &domain.FieldError{Field: "file_ids", Message: "is required: an array of file ids"}
	case len(ids) == 0:
		return &domain.FieldError{Field: "file_ids", Message: "must hold at least one file id"}
	case len(ids) > MaxRequestIDs:
		return &domain.FieldError{Field: "file_ids", Message: fmt.Sprintf("holds %d ids; send at most %d per request", len(ids), MaxRequestIDs)}
	}
	return e
}
