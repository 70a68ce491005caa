// Package authtest holds the one in-memory fake of auth.KeyStore, for the tests of the feature
// and of what is built on it, and StoreSuite, the contract both the fake and the DynamoDB adapter
// pass (shared/dynamo runs it against DynamoDB Local), so that the fake cannot drift from it.
//
// It does not import auth, so that auth's own (internal) tests can use it: KeyStore repeats
// auth.KeyStore's methods, and auth's tests assert that the two interfaces are one method set.
package authtest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// KeyStore is auth.KeyStore: keys addressed by the SHA-256 of their secret and found by id
// within their company.
type KeyStore interface {
	GetKeyByHash(ctx context.Context, hash string) (*domain.APIKey, error)
	GetKey(ctx context.Context, company, id string) (*domain.APIKey, error)
	PutKey(ctx context.Context, k *domain.APIKey) error
	ListKeys(ctx context.Context, company string) ([]*domain.APIKey, error)
	RevokeKey(ctx context.Context, k *domain.APIKey, at time.Time) (*domain.APIKey, error)
}

// Store keeps keys by hash in memory, with the DynamoDB adapter's conditions: a hash is stored
// once, a revocation writes only a key that is stored. Keys are copied in and out.
type Store struct {
	mu     sync.Mutex
	byHash map[string]*domain.APIKey
}

var _ KeyStore = (*Store)(nil)

// NewStore returns an empty store.
func NewStore() *Store { return &Store{byHash: map[string]*domain.APIKey{}} }

// GetKeyByHash implements auth.KeyStore.
func (s *Store) GetKeyByHash(_ context.Context, hash string) (*domain.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byHash[hash]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return clone(k), nil
}

// GetKey implements auth.KeyStore.
func (s *Store) GetKey(_ context.Context, company, id string) (*domain.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.byHash {
		if k.ID == id && k.Company == company {
			return clone(k), nil
		}
	}
	return nil, domain.Errorf(domain.KindNotFound, "API key %s not found", id)
}

// PutKey implements auth.KeyStore.
func (s *Store) PutKey(_ context.Context, k *domain.APIKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byHash[k.Hash]; ok {
		return fmt.Errorf("put key %s: %w", k.ID, domain.ErrConflict)
	}
	s.byHash[k.Hash] = clone(k)
	return nil
}

// ListKeys implements auth.KeyStore: newest first (by id among keys of one time).
func (s *Store) ListKeys(_ context.Context, company string) ([]*domain.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*domain.APIKey{}
	for _, k := range s.byHash {
		if k.Company == company {
			out = append(out, clone(k))
		}
	}
	slices.SortFunc(out, func(a, b *domain.APIKey) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// RevokeKey implements auth.KeyStore as the adapter does: it writes k (not what is stored)
// revoked at at, unless k says it was revoked before, when the key is stored.
func (s *Store) RevokeKey(_ context.Context, k *domain.APIKey, at time.Time) (*domain.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byHash[k.Hash]; !ok {
		return nil, domain.Errorf(domain.KindNotFound, "API key %s not found", k.ID)
	}
	c := clone(k)
	if c.RevokedAt == nil {
		c.RevokedAt = &at
	}
	s.byHash[k.Hash] = c
	return clone(c), nil
}

// CloneBudget is b with its own copies of its values.
func CloneBudget(b domain.Budget) domain.Budget {
	b.MonthlyTokens, b.MonthlyCostUSD = clonePtr(b.MonthlyTokens), clonePtr(b.MonthlyCostUSD)
	return b
}

// clonePtr points to a copy of *p; nil stays nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func clone(k *domain.APIKey) *domain.APIKey {
	c := *k
	c.Scopes = slices.Clone(k.Scopes)
	c.Ancestors = nil // the adapter stores none for an empty list (omitempty)
	if len(k.Ancestors) > 0 {
		c.Ancestors = slices.Clone(k.Ancestors)
	}
	c.ParentID, c.RevokedAt = clonePtr(k.ParentID), clonePtr(k.RevokedAt)
	c.Budget = CloneBudget(k.Budget)
	return &c
}
