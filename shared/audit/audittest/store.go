// Package audittest holds the in-memory fake of audit.Store for the tests of the features that
// record and of the handlers that list, and StoreSuite, the port's contract that the fake and
// the DynamoDB adapter (shared/dynamo's audit suite test, on DynamoDB Local) both pass.
package audittest

import (
	"context"
	"sort"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps entries in memory.
type Store struct {
	mu      sync.Mutex
	entries []domain.AuditEntry
	// Fail is returned by every call when set.
	Fail error
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{} }

// PutAuditEntry stores a copy of e.
func (f *Store) PutAuditEntry(_ context.Context, e *domain.AuditEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	f.entries = append(f.entries, *e)
	return nil
}

// ListAuditEntries pages through a company's entries that pass filter, newest first.
func (f *Store) ListAuditEntries(_ context.Context, company string, filter domain.AuditFilter, offset, limit int) ([]*domain.AuditEntry, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return nil, false, f.Fail
	}
	var all []*domain.AuditEntry
	for _, e := range f.entries {
		if e.Company != company || (filter.Action != "" && e.Action != filter.Action) || (filter.ActorKeyID != "" && e.ActorKeyID != filter.ActorKeyID) ||
			(!filter.From.IsZero() && e.CreatedAt.Before(filter.From)) || (!filter.To.IsZero() && !e.CreatedAt.Before(filter.To)) {
			continue
		}
		c := e
		all = append(all, &c)
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].ID > all[j].ID
	})
	if offset >= len(all) {
		return []*domain.AuditEntry{}, false, nil
	}
	end := min(offset+limit, len(all))
	return all[offset:end], end < len(all), nil
}

// Entries returns every stored entry in the order they were recorded, for assertions.
func (f *Store) Entries() []domain.AuditEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]domain.AuditEntry(nil), f.entries...)
}
