package api

import (
	"context"
	"net/http"

	"github.com/agentorch/agentorch/shared/domain"
)

// The handlers that every group writes the same way: read one record, delete one, list a page.
// Each checks the scope first; the feature checks the caller's access to the record.

// getByID answers 200 with what get returns for the route's {param}.
func getByID[T any](scope, param string, get func(ctx context.Context, p domain.Principal, id string) (T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := require(r, scope); err != nil {
			return err
		}
		v, err := get(r.Context(), principal(r), r.PathValue(param))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// deleteByID answers 204, with no body, once del has deleted the route's {param}.
func deleteByID(scope, param string, del func(ctx context.Context, p domain.Principal, id string) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := require(r, scope); err != nil {
			return err
		}
		if err := del(r.Context(), principal(r), r.PathValue(param)); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// listPage answers a page of a list (limit and offset as pageParams reads them) as writeList
// writes it; list reads the rest of the request (path values, filters) from r.
func listPage[T any](scope string, list func(r *http.Request, offset, limit int) ([]T, bool, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := require(r, scope); err != nil {
			return err
		}
		pg, err := pageParams(r)
		if err != nil {
			return err
		}
		items, more, err := list(r, pg.offset, pg.limit)
		if err != nil {
			return err
		}
		return writeList(w, r, pg, items, more)
	}
}

// viewed is get with its result shown as view shows it.
func viewed[T, V any](get func(ctx context.Context, p domain.Principal, id string) (T, error), view func(T) V) func(context.Context, domain.Principal, string) (V, error) {
	return func(ctx context.Context, p domain.Principal, id string) (V, error) {
		v, err := get(ctx, p, id)
		if err != nil {
			var zero V
			return zero, err
		}
		return view(v), nil
	}
}

// viewedList is list with each element shown as view shows it.
func viewedList[T, V any](list func(r *http.Request, offset, limit int) ([]T, bool, error), view func(T) V) func(*http.Request, int, int) ([]V, bool, error) {
	return func(r *http.Request, offset, limit int) ([]V, bool, error) {
		items, more, err := list(r, offset, limit)
		if err != nil {
			return nil, false, err
		}
		return each(items, view), more, nil
	}
}
