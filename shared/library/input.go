package library

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// Shape is what decoding a request body found wrong with its JSON shape (unknown fields,
// missing values, values of the wrong JSON type), by key. The feature's validation reports these
// with the errors of values, field by field in the order the API has always listed them; an
// input built in Go has none.
type Shape map[string][]domain.FieldError

// Add records a field error of field under key.
func (s *Shape) Add(key, field, msg string) {
	if *s == nil {
		*s = Shape{}
	}
	(*s)[key] = append((*s)[key], domain.FieldError{Field: field, Message: msg})
}

// AddAll records field errors under key.
func (s *Shape) AddAll(key string, errs []domain.FieldError) {
	for _, e := range errs {
		s.Add(key, e.Field, e.Message)
	}
}

// First is the first error under key, or nil.
func (s Shape) First(key string) *domain.FieldError {
	if e := s[key]; len(e) > 0 {
		return &e[0]
	}
	return nil
}

// decodeOperation reads a bulk request's operation; a missing one or one not a string is a
// shape error naming ops.
func decodeOperation(body map[string]any, s *Shape, ops ...string) string {
	switch v := body["operation"].(type) {
	case string:
		return v
	case nil:
		s.Add("operation", "operation", fmt.Sprintf("must be one of %s (got none)", strings.Join(ops, ", ")))
	default:
		s.Add("operation", "operation", fmt.Sprintf("must be one of %s (got %s)", strings.Join(ops, ", "), domain.JSONType(v)))
	}
	return ""
}

// checkOperation validates a bulk request's operation, one of ops.
func checkOperation(op string, s Shape, ops ...string) (string, *domain.FieldError) {
	if e := s.First("operation"); e != nil {
		return "", e
	}
	if !slices.Contains(ops, op) {
		return "", &domain.FieldError{Field: "operation", Message: fmt.Sprintf("must be one of %s (got %q)", strings.Join(ops, ", "), domain.Clip(op, 64))}
	}
	return op, nil
}

// decodeIDs reads file_ids: an array of strings.
func decodeIDs(body map[string]any, s *Shape) []string {
	v := body["file_ids"]
	list, ok := v.([]any)
	switch {
	case v == nil:
		s.Add("file_ids", "file_ids", "is required: an array of file ids")
		return nil
	case !ok:
		s.Add("file_ids", "file_ids", fmt.Sprintf("must be an array of strings (file ids), got %s", domain.JSONType(v)))
		return nil
	}
	ids := make([]string, len(list))
	for i, x := range list {
		if ids[i], ok = x.(string); !ok {
			s.Add("file_ids[]", "file_ids", fmt.Sprintf("must be an array of strings (file ids): item %d is %s", i, domain.JSONType(x)))
			break
		}
	}
	return ids
}

// checkIDs validates file_ids: 1..MaxRequestIDs ids.
func checkIDs(ids []string, s Shape) *domain.FieldError {
	if e := s.First("file_ids"); e != nil {
		return e
	}
	bad := func(format string, args ...any) *domain.FieldError {
		return &domain.FieldError{Field: "file_ids", Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case len(ids) == 0:
		return bad("must hold at least one file id")
	case len(ids) > MaxRequestIDs:
		return bad("holds %d ids; send at most %d per request", len(ids), MaxRequestIDs)
	}
	return s.First("file_ids[]")
}

// decodeParams reads a bulk request's parameters object (nil if absent or not an object).
func decodeParams(body map[string]any, s *Shape) map[string]any {
	params, ok := body["parameters"].(map[string]any)
	if !ok && body["parameters"] != nil {
		s.Add("parameters", "parameters", "must be an object, got "+domain.JSONType(body["parameters"]))
	}
	return params
}

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
