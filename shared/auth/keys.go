package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// Key lifetime bounds.
const (
	DefaultKeyTTL = 90 * 24 * time.Hour
	MaxKeyTTL     = 2 * 365 * 24 * time.Hour
	MaxRateLimit  = 1_000_000
	keyPrefix     = "ak_"
)

// NewKey describes a key to create.
type NewKey struct {
	Name      string
	Owner     string
	Company   string
	TTL       time.Duration
	Scopes    []string
	RateLimit int
}

// CreateKey stores a new key and returns it with its secret, which is shown this once only.
func (s *Service) CreateKey(ctx context.Context, in NewKey) (*domain.APIKey, string, error) {
	var errs []domain.FieldError
	if strings.TrimSpace(in.Owner) == "" {
		errs = append(errs, domain.FieldError{Field: "owner", Message: "must not be empty"})
	}
	if strings.TrimSpace(in.Company) == "" {
		errs = append(errs, domain.FieldError{Field: "company", Message: "must not be empty"})
	}
	if in.TTL == 0 {
		in.TTL = DefaultKeyTTL
	}
	if in.TTL < time.Second || in.TTL > MaxKeyTTL {
		errs = append(errs, domain.FieldError{Field: "ttl", Message: fmt.Sprintf("must be between 1 second and %s", MaxKeyTTL)})
	}
	for i, sc := range in.Scopes {
		if !slices.Contains(domain.KnownScopes, sc) {
			errs = append(errs, domain.FieldError{Field: fmt.Sprintf("scopes.%d", i), Message: fmt.Sprintf("unknown scope %q; known: %s", sc, strings.Join(domain.KnownScopes, ", "))})
		}
	}
	if in.RateLimit < 0 || in.RateLimit > MaxRateLimit {
		errs = append(errs, domain.FieldError{Field: "rate_limit", Message: fmt.Sprintf("must be between 0 (no limit) and %d requests per minute", MaxRateLimit)})
	}
	if len(in.Name) > domain.MaxNameLength {
		errs = append(errs, domain.FieldError{Field: "name", Message: "is too long"})
	}
	if len(errs) > 0 {
		return nil, "", domain.Invalid(errs)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, "", fmt.Errorf("random key: %w", err)
	}
	secret := keyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	now := s.now().UTC().Truncate(time.Second)
	k := &domain.APIKey{
		ID: uuid.NewString(), Name: in.Name, Prefix: secret[:10], Hash: HashKey(secret),
		Owner: in.Owner, Company: in.Company, Scopes: slices.Clone(in.Scopes), RateLimit: in.RateLimit,
		ExpiresAt: now.Add(in.TTL), CreatedAt: now,
	}
	if k.Scopes == nil {
		k.Scopes = []string{}
	}
	if err := s.keys.PutKey(ctx, k); err != nil {
		return nil, "", fmt.Errorf("store key: %w", err)
	}
	return k, secret, nil
}

// ListKeys lists a company's keys, newest first; secrets are never included.
func (s *Service) ListKeys(ctx context.Context, company string) ([]*domain.APIKey, error) {
	return s.keys.ListKeys(ctx, company)
}

// RevokeKey invalidates a key of the company at once (on this instance; elsewhere within the
// cache TTL).
func (s *Service) RevokeKey(ctx context.Context, company, id string) error {
	if _, err := uuid.Parse(id); err != nil {
		return domain.Errorf(domain.KindNotFound, "API key %q not found", id)
	}
	k, err := s.keys.RevokeKey(ctx, company, id, s.now().UTC())
	if err != nil {
		return err
	}
	s.Forget(k.Hash)
	return nil
}

// IssueToken exchanges the caller's key for a short-lived bearer token.
func (s *Service) IssueToken(ctx context.Context, p domain.Principal) (string, time.Duration, error) {
	if s.tokens == nil {
		return "", 0, fmt.Errorf("tokens not configured")
	}
	return s.tokens.Issue(ctx, p)
}
