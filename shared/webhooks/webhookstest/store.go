// Package webhookstest holds the in-memory fake of webhooks.Store for the tests of the feature
// and of the handlers built on it, and StoreSuite, the port's contract that the fake and the
// DynamoDB adapter (shared/dynamo's suite test, on DynamoDB Local) both pass: a bound on the
// webhooks of a company, writes and deletes conditional on UpdatedAt, companies kept apart.
package webhookstest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps webhooks by company and id.
type Store struct {
	mu    sync.Mutex
	hooks map[string]*domain.Webhook // by company + "/" + id
	// Fail is returned by every call when set.
	Fail error
	// Lists counts ListWebhooks calls.
	Lists int
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{hooks: map[string]*domain.Webhook{}} }

// clone is w as DynamoDB gives it back: no memory shared with the caller, times in UTC.
func clone(w *domain.Webhook) *domain.Webhook {
	c := *w
	c.Events = slices.Clone(w.Events)
	if c.Events == nil {
		c.Events = []string{}
	}
	c.PreviousUntil, c.CreatedAt, c.UpdatedAt = w.PreviousUntil.UTC(), w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	return &c
}

// CreateWebhook implements webhooks.Store.
func (f *Store) CreateWebhook(_ context.Context, w *domain.Webhook, max int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	n := 0
	for _, o := range f.hooks {
		if o.Company == w.Company {
			n++
		}
	}
	if n >= max {
		return fmt.Errorf("webhooks of %s: %w", w.Company, domain.ErrWebhookLimit)
	}
	if _, ok := f.hooks[w.Company+"/"+w.ID]; ok {
		return fmt.Errorf("create webhook %s: %w", w.ID, domain.ErrConflict)
	}
	f.hooks[w.Company+"/"+w.ID] = clone(w)
	return nil
}

// GetWebhook implements webhooks.Store.
func (f *Store) GetWebhook(_ context.Context, company, id string) (*domain.Webhook, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return nil, f.Fail
	}
	w, ok := f.hooks[company+"/"+id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return clone(w), nil
}

// ListWebhooks implements webhooks.Store.
func (f *Store) ListWebhooks(_ context.Context, company string) ([]*domain.Webhook, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Lists++
	if f.Fail != nil {
		return nil, f.Fail
	}
	out := []*domain.Webhook{}
	for _, w := range f.hooks {
		if w.Company == company {
			out = append(out, clone(w))
		}
	}
	return out, nil
}

// UpdateWebhook implements webhooks.Store.
func (f *Store) UpdateWebhook(_ context.Context, w, prev *domain.Webhook) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	cur, ok := f.hooks[prev.Company+"/"+prev.ID]
	switch {
	case !ok:
		return domain.ErrNotFound
	case !cur.UpdatedAt.Equal(prev.UpdatedAt):
		return domain.ErrConflict
	}
	f.hooks[w.Company+"/"+w.ID] = clone(w)
	return nil
}

// DeleteWebhook implements webhooks.Store: only a webhook unchanged since w was read.
func (f *Store) DeleteWebhook(_ context.Context, w *domain.Webhook) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	cur, ok := f.hooks[w.Company+"/"+w.ID]
	switch {
	case !ok:
		return domain.ErrNotFound
	case !cur.UpdatedAt.Equal(w.UpdatedAt):
		return domain.ErrConflict
	}
	delete(f.hooks, w.Company+"/"+w.ID)
	return nil
}
