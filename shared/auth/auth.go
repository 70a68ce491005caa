// Package auth authenticates callers by API key or bearer token, enforces per-key rate limits and
// manages a company's keys.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// KeyStore keeps API keys, addressed by the SHA-256 of their secret.
type KeyStore interface {
	GetKeyByHash(ctx context.Context, hash string) (*domain.APIKey, error)
	PutKey(ctx context.Context, k *domain.APIKey) error
	ListKeys(ctx context.Context, company string) ([]*domain.APIKey, error)
	RevokeKey(ctx context.Context, company, id string, at time.Time) (*domain.APIKey, error)
}

// Limiter counts a key's requests in fixed windows, shared by every instance.
type Limiter interface {
	// Hit adds one request to the window and reports the new count; over the limit it returns an
	// error of kind KindRateLimited and leaves the count alone.
	Hit(ctx context.Context, keyID string, window time.Time, limit int, expires time.Time) (int, error)
}

// RateWindow is the length of a rate-limit window: rate_limit is requests per minute.
const RateWindow = time.Minute

// Rate describes the caller's rate-limit window after this request; Limit 0 means no limit.
type Rate struct {
	Limit     int
	Remaining int
	Reset     time.Time
}

// Service authenticates requests. Key lookups are cached per instance for CacheTTL so that a hot
// path costs no DynamoDB read; a revoked key keeps working on other instances for at most that long.
type Service struct {
	keys    KeyStore
	limiter Limiter
	tokens  *Tokens
	ttl     time.Duration
	now     func() time.Time

	mu    sync.Mutex
	cache map[string]cacheEntry
}

type cacheEntry struct {
	key     *domain.APIKey // nil: the hash is unknown
	fetched time.Time
}

// NewService builds the authenticator.
func NewService(keys KeyStore, limiter Limiter, tokens *Tokens, cacheTTL time.Duration) *Service {
	return &Service{keys: keys, limiter: limiter, tokens: tokens, ttl: cacheTTL, now: time.Now, cache: map[string]cacheEntry{}}
}

// HashKey is how a key's secret is stored: hex SHA-256. Keys are 256-bit random values, so a
// fast hash is enough; nothing about the secret can be recovered from it.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Authenticate checks the x-api-key header or, failing that, an Authorization bearer token.
func (s *Service) Authenticate(ctx context.Context, apiKey, authorization string) (domain.Principal, error) {
	if apiKey == "" {
		if tok, ok := strings.CutPrefix(authorization, "Bearer "); ok && s.tokens != nil {
			return s.tokens.Verify(ctx, strings.TrimSpace(tok))
		}
		return domain.Principal{}, domain.ErrBadKey
	}
	if len(apiKey) > 256 {
		return domain.Principal{}, domain.ErrBadKey
	}
	k, err := s.lookup(ctx, HashKey(apiKey))
	if err != nil {
		return domain.Principal{}, err
	}
	if k == nil || k.RevokedAt != nil {
		return domain.Principal{}, domain.ErrBadKey
	}
	if !s.now().Before(k.ExpiresAt) {
		return domain.Principal{}, domain.ErrExpiredKey
	}
	return k.Principal(), nil
}

func (s *Service) lookup(ctx context.Context, hash string) (*domain.APIKey, error) {
	now := s.now()
	s.mu.Lock()
	e, ok := s.cache[hash]
	s.mu.Unlock()
	if ok && now.Sub(e.fetched) < s.ttl {
		return e.key, nil
	}
	k, err := s.keys.GetKeyByHash(ctx, hash)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return nil, fmt.Errorf("look up api key: %w", err)
	}
	s.mu.Lock()
	if len(s.cache) > 10_000 {
		clear(s.cache)
	}
	s.cache[hash] = cacheEntry{key: k, fetched: now}
	s.mu.Unlock()
	return k, nil
}

// Forget drops a key from this instance's cache, so that a revocation made here applies at once.
func (s *Service) Forget(hash string) {
	s.mu.Lock()
	delete(s.cache, hash)
	s.mu.Unlock()
}

// Limit counts the request against the principal's per-minute limit.
func (s *Service) Limit(ctx context.Context, p domain.Principal) (Rate, error) {
	if p.RateLimit <= 0 || s.limiter == nil {
		return Rate{}, nil
	}
	now := s.now()
	window := now.Truncate(RateWindow)
	r := Rate{Limit: p.RateLimit, Reset: window.Add(RateWindow)}
	n, err := s.limiter.Hit(ctx, p.KeyID, window, p.RateLimit, r.Reset.Add(RateWindow))
	if err != nil {
		if domain.KindOf(err) == domain.KindRateLimited {
			return r, domain.ErrRateLimited
		}
		return r, fmt.Errorf("rate limit: %w", err)
	}
	r.Remaining = max(p.RateLimit-n, 0)
	return r, nil
}
