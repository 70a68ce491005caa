package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/domain"
)

// Key lifetime and delegation bounds.
const (
	DefaultKeyTTL = 90 * 24 * time.Hour
	MaxKeyTTL     = 2 * 365 * 24 * time.Hour
	MaxRateLimit  = 1_000_000
	// MaxKeyDepth is how many keys may stand between a key and the operator's key at the root of
	// its chain. Each is one more cached lookup when a key is checked.
	MaxKeyDepth = 3
	// ScopeAdmin is domain.ScopeAdmin, for the scripts that create operator keys.
	ScopeAdmin = domain.ScopeAdmin
	keyPrefix  = "ak_"
)

// NewKey describes a key to create.
type NewKey struct {
	Name    string
	Owner   string
	Company string
	// TTL is the lifetime from now; ExpiresAt is an expiry instead. With neither the key lives
	// DefaultKeyTTL (or, when another key creates it, until that key expires if that is sooner).
	TTL       time.Duration
	ExpiresAt time.Time
	Scopes    []string
	RateLimit int
	// Budget is the key's monthly budget (limits.monthly_tokens, limits.monthly_cost_usd).
	Budget domain.Budget
}

// CreateKey stores a new operator key (from scripts/apikey or the dev server, which hold the
// table's credentials) and returns it with its secret, which is shown this once only. It has no
// parent: only revoking it ends it.
func (s *Service) CreateKey(ctx context.Context, in NewKey) (*domain.APIKey, string, error) {
	now := s.now().UTC().Truncate(time.Second)
	expires, _, errs := validateNewKey(in, now)
	if len(errs) > 0 {
		return nil, "", domain.Invalid(errs)
	}
	return s.store(ctx, in, expires, nil, now)
}

// CreateKeyAs is how a caller creates a key over the API. The new key is a child of the caller's:
// it never outlives it, holds no scope it lacks, has a rate limit when it has one (at most the
// same), and stops working when the caller's key, or any key that created that one, is revoked.
// Only an admin creates keys for another owner; a bearer token never creates keys.
func (s *Service) CreateKeyAs(ctx context.Context, p domain.Principal, in NewKey) (*domain.APIKey, string, error) {
	if p.ViaToken || !p.Can(domain.ScopeKeysManage) || len(p.Ancestors) >= MaxKeyDepth {
		return nil, "", domain.ErrPermission
	}
	if s.audit == nil {
		return nil, "", errNoAudit
	}
	in.Company = p.Company
	if in.Owner == "" {
		in.Owner = p.Owner
	}
	if len(in.Scopes) == 0 && !p.IsAdmin() {
		// The caller's own permissions; an admin's default is an ordinary unscoped key.
		in.Scopes = p.Scopes
	}
	now := s.now().UTC().Truncate(time.Second)
	expires, explicit, errs := validateNewKey(in, now)
	for i, sc := range in.Scopes {
		if slices.Contains(domain.KnownScopes, sc) && !p.Can(sc) {
			errs = append(errs, domain.FieldError{Field: fmt.Sprintf("scopes.%d", i), Message: fmt.Sprintf("the key creating it does not hold scope %q", sc)})
		}
	}
	if p.RateLimit > 0 && (in.RateLimit < 1 || in.RateLimit > p.RateLimit) {
		errs = append(errs, domain.FieldError{Field: "rate_limit", Message: fmt.Sprintf("must be between 1 and %d requests per minute, the limit of the key creating it", p.RateLimit)})
	}
	in.Budget, errs = boundBudget(p.Budget, in.Budget, errs)
	if limit := p.ExpiresAt.UTC().Truncate(time.Second); expires.After(limit) {
		switch explicit {
		case "":
			expires = limit
		case "expires_at":
			errs = append(errs, domain.FieldError{Field: explicit, Message: fmt.Sprintf("must not be after %s, when the key creating it expires", limit.Format(time.RFC3339))})
		default:
			errs = append(errs, domain.FieldError{Field: explicit, Message: fmt.Sprintf("must be at most %d seconds (%s), when the key creating it expires", max(int64(limit.Sub(now)/time.Second), 0), humanDuration(limit.Sub(now)))})
		}
	}
	if len(errs) > 0 {
		return nil, "", domain.Invalid(errs)
	}
	if in.Owner != p.Owner && !p.IsAdmin() {
		return nil, "", domain.ErrPermission
	}
	k, secret, err := s.store(ctx, in, expires, append([]string{p.KeyID}, p.Ancestors...), now)
	if err != nil {
		return nil, "", err
	}
	if err := s.audit.Record(ctx, p, audit.KeyCreated, k.ID); err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// boundBudget holds a new key's budget to its creator's, as its rate limit is: a creator with a
// budget makes keys with one no larger (its own when none is given). Each key's budget counts its
// own usage; a cap shared by keys is the company's (PUT /api/v1/limits/).
func boundBudget(creator, in domain.Budget, errs []domain.FieldError) (domain.Budget, []domain.FieldError) {
	if c := creator.MonthlyTokens; c != nil {
		switch {
		case in.MonthlyTokens == nil:
			in.MonthlyTokens = c
		case *in.MonthlyTokens > *c:
			errs = append(errs, domain.FieldError{Field: "limits.monthly_tokens", Message: fmt.Sprintf("must be at most %d, the monthly token budget of the key creating it", *c)})
		}
	}
	if c := creator.MonthlyCostUSD; c != nil {
		switch {
		case in.MonthlyCostUSD == nil:
			in.MonthlyCostUSD = c
		case *in.MonthlyCostUSD > *c:
			errs = append(errs, domain.FieldError{Field: "limits.monthly_cost_usd", Message: fmt.Sprintf("must be at most %s, the monthly cost budget in US dollars of the key creating it", strconv.FormatFloat(*c, 'f', -1, 64))})
		}
	}
	return in, errs
}

// errNoAudit refuses an audited action of a service built without its recorder.
var errNoAudit = errors.New("audit recorder not configured: refusing an unrecorded change")

// validateNewKey checks what any key must satisfy and works out its expiry; explicit names the
// field that set the expiry ("" for the default).
func validateNewKey(in NewKey, now time.Time) (expires time.Time, explicit string, errs []domain.FieldError) {
	for _, f := range []struct{ name, v string }{{"owner", in.Owner}, {"company", in.Company}} {
		if !domain.ValidIdentifier(f.v) {
			errs = append(errs, domain.FieldError{Field: f.name, Message: domain.IdentifierRule})
		}
	}
	maxDays := humanDuration(MaxKeyTTL)
	switch {
	case in.TTL != 0 && !in.ExpiresAt.IsZero():
		errs = append(errs, domain.FieldError{Field: "expires_at", Message: "give expires_in or expires_at, not both"})
	case in.TTL != 0:
		explicit, expires = "expires_in", now.Add(in.TTL)
		if in.TTL < time.Second || in.TTL > MaxKeyTTL {
			errs = append(errs, domain.FieldError{Field: explicit, Message: fmt.Sprintf("must be between 1 second and %s", maxDays)})
		}
	case !in.ExpiresAt.IsZero():
		explicit, expires = "expires_at", in.ExpiresAt.UTC().Truncate(time.Second)
		if !expires.After(now) || expires.Sub(now) > MaxKeyTTL {
			errs = append(errs, domain.FieldError{Field: explicit, Message: fmt.Sprintf("must be in the future and at most %s ahead", maxDays)})
		}
	default:
		expires = now.Add(DefaultKeyTTL)
	}
	for i, sc := range in.Scopes {
		if !slices.Contains(domain.KnownScopes, sc) {
			errs = append(errs, domain.FieldError{Field: fmt.Sprintf("scopes.%d", i), Message: fmt.Sprintf("unknown scope %q; known: %s", sc, strings.Join(domain.KnownScopes, ", "))})
		}
	}
	errs = append(errs, domain.ValidateLimits("limits.", nil, in.Budget)...)
	if in.RateLimit < 0 || in.RateLimit > MaxRateLimit {
		errs = append(errs, domain.FieldError{Field: "rate_limit", Message: fmt.Sprintf("must be between 0 (no limit) and %d requests per minute", MaxRateLimit)})
	}
	if len(in.Name) > domain.MaxNameLength {
		errs = append(errs, domain.FieldError{Field: "name", Message: fmt.Sprintf("must be at most %d characters", domain.MaxNameLength)})
	}
	return expires, explicit, errs
}

func (s *Service) store(ctx context.Context, in NewKey, expires time.Time, ancestors []string, now time.Time) (*domain.APIKey, string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, "", fmt.Errorf("random key: %w", err)
	}
	secret := keyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	k := &domain.APIKey{
		ID: uuid.NewString(), Name: in.Name, Prefix: secret[:10], Hash: HashKey(secret),
		Owner: in.Owner, Company: in.Company, Scopes: slices.Clone(in.Scopes), RateLimit: in.RateLimit,
		Budget: in.Budget, ExpiresAt: expires, CreatedAt: now, Ancestors: ancestors,
	}
	if len(ancestors) > 0 {
		k.ParentID = &ancestors[0]
	}
	if k.Scopes == nil {
		k.Scopes = []string{}
	}
	if err := s.keys.PutKey(ctx, k); err != nil {
		return nil, "", fmt.Errorf("store key: %w", err)
	}
	return k, secret, nil
}

// ListKeys lists a company's keys, newest first, for an operator; secrets are never included.
func (s *Service) ListKeys(ctx context.Context, company string) ([]*domain.APIKey, error) {
	return s.keys.ListKeys(ctx, company)
}

// ListKeysAs lists the keys the caller manages, newest first: an admin's company's keys, or else
// its own owner's.
func (s *Service) ListKeysAs(ctx context.Context, p domain.Principal) ([]*domain.APIKey, error) {
	if !p.Can(domain.ScopeKeysManage) {
		return nil, domain.ErrPermission
	}
	keys, err := s.keys.ListKeys(ctx, p.Company)
	if err != nil || p.IsAdmin() {
		return keys, err
	}
	return slices.DeleteFunc(keys, func(k *domain.APIKey) bool { return k.Owner != p.Owner }), nil
}

// RevokeKey revokes a company's key for an operator.
func (s *Service) RevokeKey(ctx context.Context, company, id string) error {
	k, err := s.findKey(ctx, company, id)
	if err != nil {
		return err
	}
	return s.revoke(ctx, k)
}

// RevokeKeyAs revokes a key the caller manages (see ListKeysAs); any other key is not found.
func (s *Service) RevokeKeyAs(ctx context.Context, p domain.Principal, id string) error {
	if !p.Can(domain.ScopeKeysManage) {
		return domain.ErrPermission
	}
	k, err := s.findKey(ctx, p.Company, id)
	if err != nil {
		return err
	}
	if k.Owner != p.Owner && !p.IsAdmin() {
		return notFound(id)
	}
	if s.audit == nil {
		return errNoAudit
	}
	if err := s.revoke(ctx, k); err != nil {
		return err
	}
	return s.audit.Record(ctx, p, audit.KeyRevoked, k.ID)
}

func notFound(id string) error { return domain.Errorf(domain.KindNotFound, "API key %q not found", id) }

func (s *Service) findKey(ctx context.Context, company, id string) (*domain.APIKey, error) {
	if !domain.IsID(id) {
		return nil, notFound(id)
	}
	k, err := s.keys.GetKey(ctx, company, id)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("find api key %s: %w", id, err)
	}
	return k, nil
}

// revoke stores the revocation and caches the revoked key on this instance, so that the key, its
// tokens and the keys it created stop working here at once (elsewhere within the cache TTL).
func (s *Service) revoke(ctx context.Context, k *domain.APIKey) error {
	now := s.now()
	revoked, err := s.keys.RevokeKey(ctx, k, now.UTC())
	if err != nil {
		return fmt.Errorf("revoke api key %s: %w", k.ID, err)
	}
	s.remember(revoked.Hash, revoked, now)
	return nil
}

// IssueToken exchanges the caller's key for a short-lived bearer token; a token is never
// exchanged for another.
func (s *Service) IssueToken(ctx context.Context, p domain.Principal) (string, time.Duration, error) {
	if p.ViaToken {
		return "", 0, domain.ErrBadKey
	}
	if s.tokens == nil {
		return "", 0, fmt.Errorf("tokens not configured")
	}
	return s.tokens.Issue(ctx, p)
}

// humanDuration says d in whole days, hours, minutes or seconds, rounded down, for messages.
func humanDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}} {
		if d >= u.d {
			return plural(int64(d/u.d), u.name)
		}
	}
	return plural(max(int64(d/time.Second), 0), "second")
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
