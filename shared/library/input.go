package library

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// validOperation is a bulk request's operation, one of ops (a field error when it is not).
func validOperation(op *string, s domain.Shape, ops ...string) (string, *domain.FieldError) {
	if e := s.WrongAt("operation"); e != nil {
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
func validIDs(ids []string, s domain.Shape) *domain.FieldError {
	e := s.WrongAt("file_ids")
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
