package domain

import (
	"slices"
	"strings"
)

// Shape is what the edge's decoder found wrong with a request body's JSON shape: keys the input
// does not have (Unknown) and values of the wrong JSON type (Wrong), worded and in the order the
// API has always listed them. Embedded in an input, it takes them (TakeShape) so that the
// feature reports them with the errors of the values, field by field; an input built in Go has
// none.
type Shape struct {
	Unknown, Wrong []FieldError
}

// TakeShape keeps the errors of the body's shape, for the feature's validation.
func (s *Shape) TakeShape(unknown, wrong []FieldError) { s.Unknown, s.Wrong = unknown, wrong }

// WrongAt is the value of the wrong type at field, or nil.
func (s Shape) WrongAt(field string) *FieldError {
	for i, e := range s.Wrong {
		if e.Field == field {
			return &s.Wrong[i]
		}
	}
	return nil
}

// UnknownIn lists the unknown keys of the object at prefix ("parameters."), or with prefix ""
// those of the body itself outside the nested prefixes.
func (s Shape) UnknownIn(prefix string, nested ...string) []FieldError {
	var out []FieldError
	for _, e := range s.Unknown {
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
