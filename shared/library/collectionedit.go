package library

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// CollectionUpdate is a change of a collection: PATCH /collections/{id}/ {name?, description?}.
// A field left out is left as it is; null description clears it; name cannot be null. The
// rules of each value are those of creation. A collection's files change through its files and
// bulk requests, never here.
type CollectionUpdate struct {
	Name         domain.Optional[string] `json:"name"`
	Description  domain.Optional[string] `json:"description"`
	domain.Shape `json:"-"`              // the body's shape errors, not a key of it
}

// UnknownField words what a collection's change has.
func (*CollectionUpdate) UnknownField(string, string) string {
	return "a collection's change has name and description (its files change through files/ and bulk/)"
}

// check validates the fields given, in the order of the body's fields.
func (in *CollectionUpdate) check() []domain.FieldError {
	errs := slices.Clone(in.Unknown)
	switch e := in.WrongAt("name"); {
	case e != nil:
		errs = append(errs, *e)
	case in.Name.Null:
		errs = append(errs, domain.FieldError{Field: "name", Message: "must be a string, not null (leave it out to keep it)"})
	case !in.Name.Set:
	case !domain.HasVisible(in.Name.Value):
		errs = append(errs, domain.FieldError{Field: "name", Message: "must have a visible character"})
	case utf8.RuneCountInString(strings.TrimSpace(in.Name.Value)) > domain.MaxNameLength:
		errs = append(errs, domain.FieldError{Field: "name", Message: fmt.Sprintf("must be at most %d characters", domain.MaxNameLength)})
	}
	if e := in.WrongAt("description"); e != nil {
		errs = append(errs, *e)
	} else if utf8.RuneCountInString(in.Description.Value) > MaxDescriptionLength {
		errs = append(errs, domain.FieldError{Field: "description", Message: fmt.Sprintf("must be at most %d characters", MaxDescriptionLength)})
	}
	return errs
}

// UpdateCollection changes a collection's name and description and answers it with its files.
// It is one conditional write of the collection (read again and redone when a concurrent change
// of its files won, so neither is lost); a change that changes nothing writes nothing. Knowledge
// bases name their collections by id: a new name changes nothing but the label.
func (s *Service) UpdateCollection(ctx context.Context, p domain.Principal, id string, in CollectionUpdate) (*Collection, error) {
	if errs := in.check(); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	c, err := s.Collection(ctx, p, id)
	if err != nil {
		return nil, err
	}
	c, err = s.changeCollection(ctx, c, func(c *domain.Collection) bool {
		name, desc := c.Name, c.Description
		if in.Name.Set {
			name = strings.TrimSpace(in.Name.Value)
		}
		if in.Description.Set {
			desc = in.Description.Value // "" when null
		}
		changed := name != c.Name || desc != c.Description
		c.Name, c.Description = name, desc
		return changed
	})
	if err != nil {
		return nil, err
	}
	files, err := s.FilesOf(ctx, p.Company, c.FileIDs)
	if err != nil {
		return nil, err
	}
	return withFiles(c, files), nil
}
