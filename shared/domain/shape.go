package domain

// Shape is what the edge's decoder found wrong with a request body's JSON shape: keys the input
// does not have (Unknown) and values of the wrong JSON type (Wrong), worded and in the order the
// API has always listed them. Embedded in an input, it takes them (TakeShape) so that the
// feature reports them with the errors of the values, field by field; an input built in Go has
// none.
type Shape struct {
	Unknown, Wrong []FieldError
	// Objects is the object of each of Unknown: its dotted path, "" for the body (apart, as a
	// key may hold a dot).
	Objects []string
}

// TakeObjects keeps the object of each unknown key.
func (s *Shape) TakeObjects(objects []string) { s.Objects = objects }

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

// UnknownIn lists the unknown keys of the object at the dotted path object ("" for the body).
func (s Shape) UnknownIn(object string) []FieldError {
	var out []FieldError
	for i, e := range s.Unknown {
		if i < len(s.Objects) && s.Objects[i] == object {
			out = append(out, e)
		}
	}
	return out
}
