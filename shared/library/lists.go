package library

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// pageSize is the most records one store list page asks for (the adapter's bound too).
const pageSize = 1000

// filteredPage is how many records a page asks for at least when a filter may leave some out.
const filteredPage = 100

// Lister reads one page of a company list, newest first, as the Store's List methods do.
type Lister[T any] func(ctx context.Context, after string, limit int) ([]T, string, error)

// Collect reads a company list a page at a time from the newest, keeping the records keep
// accepts (nil keeps all), until it has the page [offset, offset+limit) and knows whether more
// follow (limit < 1: everything). It reads what the page needs, not the company's whole list:
// offset+limit+1 records without a filter, and those a filter looks through with one.
func Collect[T any](ctx context.Context, list Lister[T], keep func(T) (bool, error), offset, limit int) ([]T, bool, error) {
	offset = max(offset, 0)
	var kept []T
	after := ""
	for {
		n := pageSize
		if limit > 0 {
			n = offset + limit + 1 - len(kept)
			if keep != nil {
				n = max(n, filteredPage)
			}
			n = min(n, pageSize)
		}
		recs, next, err := list(ctx, after, n)
		if err != nil {
			return nil, false, err
		}
		for _, r := range recs {
			if keep != nil {
				ok, err := keep(r)
				if err != nil {
					return nil, false, err
				}
				if !ok {
					continue
				}
			}
			kept = append(kept, r)
		}
		if next == "" || (limit > 0 && len(kept) > offset+limit) {
			out, more := page(kept, offset, limit)
			return out, more, nil
		}
		after = next
	}
}

// allCollections reads every collection of a company (the rare operations that must look at
// each, such as taking a deleted file out of the ones that hold it).
func (s *Service) allCollections(ctx context.Context, company string) ([]*domain.Collection, error) {
	colls, _, err := Collect(ctx, func(ctx context.Context, after string, n int) ([]*domain.Collection, string, error) {
		return s.d.Store.ListCollections(ctx, company, after, n)
	}, nil, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	return colls, nil
}

// FilesOf loads the company's files among ids, by id, with one batch read per 100 ids (never a
// list of the company's files). Malformed, unknown and foreign ids are absent from the map.
func (s *Service) FilesOf(ctx context.Context, company string, ids []string) (map[string]*domain.File, error) {
	out := map[string]*domain.File{}
	var want []string
	seen := map[string]bool{}
	for _, id := range ids {
		if domain.IsID(id) && !seen[id] {
			seen[id] = true
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	got, err := s.d.Store.GetFiles(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("get files: %w", err)
	}
	for id, f := range got {
		if f.Company == company {
			out[id] = f
		}
	}
	return out, nil
}
