package sessionstest

import (
	"context"
	"fmt"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// ClaimIdempotencyKey implements sessions.Store with the adapter's conditions.
func (s *Store) ClaimIdempotencyKey(_ context.Context, r *domain.IdempotencyRecord, now, staleBefore time.Time) (*domain.IdempotencyRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.Company + "/" + r.Key
	if old, ok := s.keys[id]; ok && !old.ExpiresAt.Before(now.Truncate(time.Second)) &&
		(old.State != domain.KeyPending || old.Fingerprint != r.Fingerprint || !old.CreatedAt.Before(staleBefore)) {
		c := *old
		return &c, nil
	}
	c := *r
	s.keys[id] = &c
	return nil, nil
}

// SettleIdempotencyKey implements sessions.Store.
func (s *Store) SettleIdempotencyKey(_ context.Context, r *domain.IdempotencyRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.Company + "/" + r.Key
	if old, ok := s.keys[id]; !ok || old.State != domain.KeyPending || old.Fingerprint != r.Fingerprint {
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Idempotency-Key %q is not pending", r.Key)}
	}
	c := *r
	s.keys[id] = &c
	return nil
}

// ReleaseIdempotencyKey implements sessions.Store.
func (s *Store) ReleaseIdempotencyKey(_ context.Context, company, key, fingerprint string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := company + "/" + key
	if old, ok := s.keys[id]; ok && old.State == domain.KeyPending && old.Fingerprint == fingerprint {
		delete(s.keys, id)
	}
	return nil
}
