package sessions

import (
	"context"
	"fmt"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Keys keeps the companies' Idempotency-Keys (dynamo/idempotency.go): one record a key, claimed
// by one conditional write, so that of two requests with one key at once only one is served.
type Keys interface {
	// ClaimIdempotencyKey records r (pending) unless the key has a live record, which it
	// returns (nil once r is recorded); a pending record of r's fingerprint created before
	// staleBefore is claimed over.
	ClaimIdempotencyKey(ctx context.Context, r *domain.IdempotencyRecord, now, staleBefore time.Time) (*domain.IdempotencyRecord, error)
	// SettleIdempotencyKey records the answer over r's own pending record.
	SettleIdempotencyKey(ctx context.Context, r *domain.IdempotencyRecord) error
	// ReleaseIdempotencyKey deletes the pending record of key and fingerprint.
	ReleaseIdempotencyKey(ctx context.Context, company, key, fingerprint string) error
}

// KeyStale is how long a key stays pending before a retry of the same request takes it over:
// its first request died unanswered (the longest, a stream, ends within 5 minutes).
const KeyStale = 6 * time.Minute

// ClaimKey claims the caller's company's Idempotency-Key for a request of fingerprint. It returns
// nil when the request is to be served (then SettleKey records its answer, or ReleaseKey frees
// the key when it failed), or the record of the key's first request, whose answer is to be given
// again. The key is 1 to 255 printable ASCII characters (400 otherwise); one sent before with
// another request is a KindUnprocessable error (422), one whose first request is still being
// served a KindConflict error (409).
func (s *Service) ClaimKey(ctx context.Context, p domain.Principal, key, fingerprint string) (*domain.IdempotencyRecord, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	r := &domain.IdempotencyRecord{Company: p.Company, Key: key, Fingerprint: fingerprint, State: domain.KeyPending,
		CreatedAt: now, ExpiresAt: now.Add(domain.IdempotencyTTL)}
	old, err := s.store.ClaimIdempotencyKey(ctx, r, now, now.Add(-KeyStale))
	switch {
	case err != nil:
		return nil, fmt.Errorf("claim idempotency key: %w", err)
	case old == nil:
		return nil, nil
	case old.Fingerprint != fingerprint:
		return nil, domain.Errorf(domain.KindUnprocessable, "This Idempotency-Key was used with another request (method, path, query or body); use a new key for a new request")
	case old.State != domain.KeyDone:
		return nil, domain.Errorf(domain.KindConflict, "A request with this Idempotency-Key is still in progress; retry when it has finished")
	}
	return old, nil
}

// maxKeptAnswer bounds the answer kept to be given again (a DynamoDB item holds 400 KB).
const maxKeptAnswer = 350_000

// SettleKey records the answer of the request that claimed r's key: its status, and what gives
// it again (the execution it queued, or the body, when it is not too large to keep), kept
// domain.IdempotencyTTL from now unless r says until when. A failure
// to record leaves the key pending: a retry then waits KeyStale and is served again.
func (s *Service) SettleKey(ctx context.Context, r *domain.IdempotencyRecord) error {
	done := *r
	done.State = domain.KeyDone
	if done.ExpiresAt.IsZero() {
		now := s.now().UTC()
		done.CreatedAt, done.ExpiresAt = now, now.Add(domain.IdempotencyTTL)
	}
	if len(done.Body) > maxKeptAnswer {
		done.Body = nil
	}
	if err := s.store.SettleIdempotencyKey(context.WithoutCancel(ctx), &done); err != nil {
		if domain.KindOf(err) != domain.KindTooLarge || done.Body == nil {
			return fmt.Errorf("settle idempotency key: %w", err)
		}
		done.Body = nil
		if err := s.store.SettleIdempotencyKey(context.WithoutCancel(ctx), &done); err != nil {
			return fmt.Errorf("settle idempotency key: %w", err)
		}
	}
	return nil
}

// ReleaseKey frees a key whose request failed (nothing of it was kept), so that it may be sent
// again and served.
func (s *Service) ReleaseKey(ctx context.Context, p domain.Principal, key, fingerprint string) error {
	if err := s.store.ReleaseIdempotencyKey(context.WithoutCancel(ctx), p.Company, key, fingerprint); err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// checkKey refuses a key that is empty, longer than domain.MaxIdempotencyKey or not printable
// ASCII (RFC 8941's sf-string, which the draft's header is).
func checkKey(key string) error {
	if key == "" || len(key) > domain.MaxIdempotencyKey {
		return domain.Errorf(domain.KindInvalid, "The Idempotency-Key header must be 1 to %d characters", domain.MaxIdempotencyKey)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return domain.Errorf(domain.KindInvalid, "The Idempotency-Key header must be printable ASCII characters")
		}
	}
	return nil
}
