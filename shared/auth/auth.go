// Package auth authenticates callers by API key or bearer token, enforces the keys' and the
// companies' rate limits and monthly budgets, and manages a company's keys and limits.
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

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/domain"
)

// KeyStore keeps API keys, addressed by the SHA-256 of their secret and found by id within their
// company.
type KeyStore interface {
	GetKeyByHash(ctx context.Context, hash string) (*domain.APIKey, error)
	GetKey(ctx context.Context, company, id string) (*domain.APIKey, error)
	PutKey(ctx context.Context, k *domain.APIKey) error
	ListKeys(ctx context.Context, company string) ([]*domain.APIKey, error)
	// RevokeKey stores k as revoked at at and returns the stored key.
	RevokeKey(ctx context.Context, k *domain.APIKey, at time.Time) (*domain.APIKey, error)
}

// Limiter counts requests in fixed windows, shared by every instance, and keeps what they and
// the monthly budgets are held to: the companies' limits and the month's usage counters.
type Limiter interface {
	// Hit adds one request to the window of id (a key's id, or companyRateID) and reports the new
	// count; over the limit it returns an error of kind KindRateLimited and leaves the count alone.
	Hit(ctx context.Context, id string, window time.Time, limit int, expires time.Time) (int, error)
	// CompanyLimits reads a company's limits; a company that set none has the zero Limits.
	CompanyLimits(ctx context.Context, company string) (domain.Limits, error)
	// UpdateCompanyLimits applies a change (by keyID, at at) and returns the limits as they are.
	UpdateCompanyLimits(ctx context.Context, company string, c domain.LimitsChange, keyID string, at time.Time) (domain.Limits, error)
	// MonthUsage reads the usage counters of month's UTC month: keyID's when it is not empty, the
	// company's when ofCompany.
	MonthUsage(ctx context.Context, company, keyID string, ofCompany bool, month time.Time) (key, co domain.UsageCount, err error)
}

// RateWindow is the length of a rate-limit window: rate_limit is requests per minute.
const RateWindow = time.Minute

// Rate describes the caller's rate-limit windows after this request: each policy in force (the
// key's, the company's), and in Limit and Remaining the one with the fewest requests left. Limit
// 0 means no limit. The windows are the same minutes for every policy, so they reset together.
type Rate struct {
	Limit     int
	Remaining int
	Reset     time.Time
	Policies  []Quota
}

// Service authenticates requests. Key lookups, by secret or by id, are cached per instance for
// CacheTTL so that a hot path costs no DynamoDB read. Every request, by key or by bearer token,
// checks the key and the keys that created it through that cache, so a revocation ends the key,
// its tokens and the keys it created at once on the instance that made it and within CacheTTL on
// every other.
type Service struct {
	keys    KeyStore
	limiter Limiter
	tokens  *Tokens
	ttl     time.Duration
	now     func() time.Time
	audit   audit.Recorder // nil: keys cannot be created or revoked over the API (WithAudit)

	mu     sync.Mutex
	cache  map[string]cacheEntry  // by hashRef and by idRef: one entry per key under both
	limits map[string]limitsEntry // companies' limits, by company
}

type cacheEntry struct {
	key     *domain.APIKey // nil: the hash is unknown
	fetched time.Time
}

// maxCacheEntries bounds the cache; past it the cache starts over.
const maxCacheEntries = 10_000

func hashRef(hash string) string      { return "h/" + hash }
func idRef(company, id string) string { return "i/" + company + "/" + id }

// NewService builds the authenticator.
func NewService(keys KeyStore, limiter Limiter, tokens *Tokens, cacheTTL time.Duration) *Service {
	return &Service{keys: keys, limiter: limiter, tokens: tokens, ttl: cacheTTL, now: time.Now, cache: map[string]cacheEntry{},
		limits: map[string]limitsEntry{}}
}

// WithAudit makes s record the keys callers create and revoke over the API. Without it those
// calls fail before they change anything: no key changes unrecorded.
func (s *Service) WithAudit(r audit.Recorder) *Service {
	s.audit = r
	return s
}

// HashKey is how a key's secret is stored: hex SHA-256. Keys are 256-bit random values, so a
// fast hash is enough; nothing about the secret can be recovered from it.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Authenticate checks the x-api-key header or, failing that, an Authorization bearer token. A
// token is only as good as the key it was issued for: the key is looked up (through the cache)
// on every use.
func (s *Service) Authenticate(ctx context.Context, apiKey, authorization string) (domain.Principal, error) {
	if apiKey == "" {
		if tok, ok := strings.CutPrefix(authorization, "Bearer "); ok && s.tokens != nil {
			return s.authenticateToken(ctx, strings.TrimSpace(tok))
		}
		return domain.Principal{}, domain.ErrBadKey
	}
	if len(apiKey) > 256 {
		return domain.Principal{}, domain.ErrBadKey
	}
	k, err := s.lookupHash(ctx, HashKey(apiKey))
	if err != nil {
		return domain.Principal{}, err
	}
	if err := s.check(ctx, k); err != nil {
		return domain.Principal{}, err
	}
	return k.Principal(), nil
}

func (s *Service) authenticateToken(ctx context.Context, token string) (domain.Principal, error) {
	claimed, err := s.tokens.Verify(ctx, token)
	if err != nil {
		return domain.Principal{}, err
	}
	k, err := s.lookupID(ctx, claimed.Company, claimed.KeyID)
	if err != nil {
		return domain.Principal{}, err
	}
	if err := s.check(ctx, k); err != nil {
		return domain.Principal{}, err
	}
	p := k.Principal()
	p.ViaToken = true
	return p, nil
}

// check refuses a revoked or expired key and a key whose creator, or its creator and so on, is
// revoked. Each ancestor is one cached lookup by id.
func (s *Service) check(ctx context.Context, k *domain.APIKey) error {
	if k.RevokedAt != nil {
		return domain.ErrBadKey
	}
	if !s.now().Before(k.ExpiresAt) {
		return domain.ErrExpiredKey
	}
	for _, id := range k.Ancestors {
		a, err := s.lookupID(ctx, k.Company, id)
		if err != nil {
			return err
		}
		if a.RevokedAt != nil {
			return domain.ErrBadKey
		}
	}
	return nil
}

// cached returns the entry under ref if it is younger than the TTL.
func (s *Service) cached(ref string) (cacheEntry, bool) {
	s.mu.Lock()
	e, ok := s.cache[ref]
	s.mu.Unlock()
	return e, ok && s.now().Sub(e.fetched) < s.ttl
}

// remember caches k under both of its references; a nil k is remembered as an unknown hash.
func (s *Service) remember(hash string, k *domain.APIKey, fetched time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache) > maxCacheEntries {
		clear(s.cache)
	}
	e := cacheEntry{key: k, fetched: fetched}
	s.cache[hashRef(hash)] = e
	if k != nil {
		s.cache[idRef(k.Company, k.ID)] = e
	}
}

// lookupHash finds a key by the hash of its secret; an unknown secret is domain.ErrBadKey, and is
// cached too, so that guessing costs no reads.
func (s *Service) lookupHash(ctx context.Context, hash string) (*domain.APIKey, error) {
	if e, ok := s.cached(hashRef(hash)); ok {
		if e.key == nil {
			return nil, domain.ErrBadKey
		}
		return e.key, nil
	}
	now := s.now()
	k, err := s.keys.GetKeyByHash(ctx, hash)
	if errors.Is(err, domain.ErrNotFound) {
		s.remember(hash, nil, now)
		return nil, domain.ErrBadKey
	}
	if err != nil {
		return nil, fmt.Errorf("look up api key: %w", err)
	}
	s.remember(hash, k, now)
	return k, nil
}

// lookupID finds a key by id; an unknown one is domain.ErrBadKey. Unlike an unknown secret, an
// unknown id is not cached: ids come from signed tokens and stored keys, so a miss can only be
// the index catching up with a new key.
func (s *Service) lookupID(ctx context.Context, company, id string) (*domain.APIKey, error) {
	if e, ok := s.cached(idRef(company, id)); ok && e.key != nil {
		return e.key, nil
	}
	now := s.now()
	k, err := s.keys.GetKey(ctx, company, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.ErrBadKey
	}
	if err != nil {
		return nil, fmt.Errorf("look up api key %s: %w", id, err)
	}
	s.remember(k.Hash, k, now)
	return k, nil
}
