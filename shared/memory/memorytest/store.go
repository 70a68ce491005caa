// Package memorytest holds the in-memory fake of memory.Store for the tests of the feature and
// of the handlers built on it, and StoreSuite, the port's contract that the fake and the
// DynamoDB adapter (shared/dynamo's suite test, on DynamoDB Local) both pass: items found by
// company and id only, labels unique in a scope, writes conditional on UpdatedAt, lists by user,
// agent and shared scope, a user forgotten whole and nobody else, every write read at once but
// by the company-wide lists (ReadAfterWrite). The fake counts its calls and
// can fail every call (Fail).
package memorytest

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps records and blocks by id.
type Store struct {
	mu      sync.Mutex
	records map[string]*domain.MemoryRecord
	blocks  map[string]*domain.MemoryBlock
	// Fail is returned by every call when set.
	Fail error
	// Calls counts the calls by method name.
	Calls map[string]int
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{records: map[string]*domain.MemoryRecord{}, blocks: map[string]*domain.MemoryBlock{}, Calls: map[string]int{}}
}

// enter locks the store and counts the call; the caller unlocks.
func (f *Store) enter(method string) error {
	f.mu.Lock()
	f.Calls[method]++
	return f.Fail
}

// Records is every record stored, by id order (for tests to look at).
func (f *Store) Records() []*domain.MemoryRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*domain.MemoryRecord
	for _, r := range f.records {
		c := *r
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *domain.MemoryRecord) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func notFound(what, id string) error {
	return domain.Errorf(domain.KindNotFound, "%s %s not found", what, id)
}

// CreateMemoryRecord stores r (ids are unique: a taken one is a conflict).
func (f *Store) CreateMemoryRecord(_ context.Context, r *domain.MemoryRecord) error {
	defer f.mu.Unlock()
	if err := f.enter("CreateMemoryRecord"); err != nil {
		return err
	}
	if f.records[r.ID] != nil {
		return domain.ErrConflict
	}
	c := *r
	f.records[r.ID] = &c
	return nil
}

// GetMemoryRecord reads a record of company.
func (f *Store) GetMemoryRecord(_ context.Context, company, id string) (*domain.MemoryRecord, error) {
	defer f.mu.Unlock()
	if err := f.enter("GetMemoryRecord"); err != nil {
		return nil, err
	}
	r := f.records[id]
	if r == nil || r.Company != company {
		return nil, notFound("memory record", id)
	}
	c := *r
	return &c, nil
}

// UpdateMemoryRecord replaces prev by r if prev is what is stored.
func (f *Store) UpdateMemoryRecord(_ context.Context, r, prev *domain.MemoryRecord) error {
	defer f.mu.Unlock()
	if err := f.enter("UpdateMemoryRecord"); err != nil {
		return err
	}
	cur := f.records[prev.ID]
	if cur == nil || cur.Company != prev.Company {
		return notFound("memory record", prev.ID)
	}
	if !cur.UpdatedAt.Equal(prev.UpdatedAt) {
		return domain.ErrConflict
	}
	c := *r
	f.records[r.ID] = &c
	return nil
}

// DeleteMemoryRecord deletes r; a missing record is no error.
func (f *Store) DeleteMemoryRecord(_ context.Context, r *domain.MemoryRecord) error {
	defer f.mu.Unlock()
	if err := f.enter("DeleteMemoryRecord"); err != nil {
		return err
	}
	if cur := f.records[r.ID]; cur != nil && cur.Company == r.Company {
		delete(f.records, r.ID)
	}
	return nil
}

// selects reports whether an item of company, user and agent is in f's list of company.
func selects(company string, f domain.MemoryFilter, itemCompany, user, agent string) bool {
	return itemCompany == company && (f.UserID == "" || f.UserID == user) && (!f.AgentSet || f.AgentID == agent)
}

// page is items offset.. of at most limit, and whether more follow.
func page[T any](items []T, offset, limit int) ([]T, bool) {
	if offset > len(items) {
		offset = len(items)
	}
	items = items[offset:]
	if len(items) > limit {
		return items[:limit], true
	}
	return items, false
}

// ListMemoryRecords lists as the adapter does: a user's grouped by agent, each oldest first;
// a company's oldest first.
func (f *Store) ListMemoryRecords(_ context.Context, company string, flt domain.MemoryFilter, offset, limit int) ([]*domain.MemoryRecord, bool, error) {
	defer f.mu.Unlock()
	if err := f.enter("ListMemoryRecords"); err != nil {
		return nil, false, err
	}
	var out []*domain.MemoryRecord
	for _, r := range f.records {
		if selects(company, flt, r.Company, r.UserID, r.AgentID) {
			c := *r
			out = append(out, &c)
		}
	}
	slices.SortFunc(out, func(a, b *domain.MemoryRecord) int {
		if flt.UserID != "" {
			if c := cmp.Compare(a.AgentID, b.AgentID); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	items, more := page(out, offset, limit)
	return items, more, nil
}

func sameScope(b *domain.MemoryBlock, company, user, agent string) bool {
	return b.Company == company && b.UserID == user && b.AgentID == agent
}

// CreateMemoryBlock stores b; a block of its label in its scope is a conflict.
func (f *Store) CreateMemoryBlock(_ context.Context, b *domain.MemoryBlock) error {
	defer f.mu.Unlock()
	if err := f.enter("CreateMemoryBlock"); err != nil {
		return err
	}
	for _, o := range f.blocks {
		if sameScope(o, b.Company, b.UserID, b.AgentID) && o.Label == b.Label {
			return domain.ErrConflict
		}
	}
	if f.blocks[b.ID] != nil {
		return domain.ErrConflict
	}
	c := *b
	f.blocks[b.ID] = &c
	return nil
}

// GetMemoryBlock reads a block of company.
func (f *Store) GetMemoryBlock(_ context.Context, company, id string) (*domain.MemoryBlock, error) {
	defer f.mu.Unlock()
	if err := f.enter("GetMemoryBlock"); err != nil {
		return nil, err
	}
	b := f.blocks[id]
	if b == nil || b.Company != company {
		return nil, notFound("memory block", id)
	}
	c := *b
	return &c, nil
}

// UpdateMemoryBlock replaces prev by b if prev is what is stored.
func (f *Store) UpdateMemoryBlock(_ context.Context, b, prev *domain.MemoryBlock) error {
	defer f.mu.Unlock()
	if err := f.enter("UpdateMemoryBlock"); err != nil {
		return err
	}
	cur := f.blocks[prev.ID]
	if cur == nil || cur.Company != prev.Company {
		return notFound("memory block", prev.ID)
	}
	if !cur.UpdatedAt.Equal(prev.UpdatedAt) {
		return domain.ErrConflict
	}
	c := *b
	f.blocks[b.ID] = &c
	return nil
}

// DeleteMemoryBlock deletes b; a missing block is no error.
func (f *Store) DeleteMemoryBlock(_ context.Context, b *domain.MemoryBlock) error {
	defer f.mu.Unlock()
	if err := f.enter("DeleteMemoryBlock"); err != nil {
		return err
	}
	if cur := f.blocks[b.ID]; cur != nil && cur.Company == b.Company {
		delete(f.blocks, b.ID)
	}
	return nil
}

// ListMemoryBlocks lists as the adapter does: a user's grouped by agent, each in label order;
// a company's oldest first.
func (f *Store) ListMemoryBlocks(_ context.Context, company string, flt domain.MemoryFilter, offset, limit int) ([]*domain.MemoryBlock, bool, error) {
	defer f.mu.Unlock()
	if err := f.enter("ListMemoryBlocks"); err != nil {
		return nil, false, err
	}
	var out []*domain.MemoryBlock
	for _, b := range f.blocks {
		if selects(company, flt, b.Company, b.UserID, b.AgentID) {
			c := *b
			out = append(out, &c)
		}
	}
	slices.SortFunc(out, func(a, b *domain.MemoryBlock) int {
		if flt.UserID != "" {
			return cmp.Or(cmp.Compare(a.AgentID, b.AgentID), cmp.Compare(a.Label, b.Label))
		}
		return cmp.Compare(a.ID, b.ID)
	})
	items, more := page(out, offset, limit)
	return items, more, nil
}

// ScopeMemoryBlocks reads a scope's blocks, label order.
func (f *Store) ScopeMemoryBlocks(_ context.Context, s domain.MemoryScope) ([]*domain.MemoryBlock, error) {
	defer f.mu.Unlock()
	if err := f.enter("ScopeMemoryBlocks"); err != nil {
		return nil, err
	}
	out := []*domain.MemoryBlock{}
	for _, b := range f.blocks {
		if sameScope(b, s.Company, s.UserID, s.AgentID) {
			c := *b
			out = append(out, &c)
		}
	}
	slices.SortFunc(out, func(a, b *domain.MemoryBlock) int { return cmp.Compare(a.Label, b.Label) })
	return out, nil
}

// ForgetMemoryUser deletes a user's records and blocks.
func (f *Store) ForgetMemoryUser(_ context.Context, company, userID string) (records, blocks int, err error) {
	defer f.mu.Unlock()
	if err := f.enter("ForgetMemoryUser"); err != nil {
		return 0, 0, err
	}
	for id, r := range f.records {
		if r.Company == company && r.UserID == userID {
			delete(f.records, id)
			records++
		}
	}
	for id, b := range f.blocks {
		if b.Company == company && b.UserID == userID {
			delete(f.blocks, id)
			blocks++
		}
	}
	return records, blocks, nil
}
