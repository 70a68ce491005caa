package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentorch/agentorch/shared/domain"
)

// SecretSource fetches the token-signing secret (from Secrets Manager on AWS).
type SecretSource func(ctx context.Context) ([]byte, error)

// Tokens issues and verifies short-lived HS256 bearer tokens that name a key (subject and
// company). A valid signature is not enough: Service looks the key up on every use, so a token
// ends with its key. The secret is fetched on first use, not at init, so cold starts make no
// network call.
type Tokens struct {
	source SecretSource
	ttl    time.Duration
	now    func() time.Time

	mu     sync.Mutex
	secret []byte
}

// NewTokens builds the token issuer.
func NewTokens(source SecretSource, ttl time.Duration) *Tokens {
	return &Tokens{source: source, ttl: ttl, now: time.Now}
}

// StaticSecret is a SecretSource for a secret known up front (local development, tests).
func StaticSecret(secret string) SecretSource {
	return func(context.Context) ([]byte, error) { return []byte(secret), nil }
}

// TTL is how long issued tokens live.
func (t *Tokens) TTL() time.Duration { return t.ttl }

type claims struct {
	jwt.RegisteredClaims
	Owner     string   `json:"own"`
	Company   string   `json:"com"`
	Scopes    []string `json:"scp,omitempty"`
	RateLimit int      `json:"rl,omitempty"`
	KeyExpiry int64    `json:"kex"`
}

const issuer = "agentorch"

func (t *Tokens) key(ctx context.Context) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.secret != nil {
		return t.secret, nil
	}
	s, err := t.source(ctx)
	if err != nil {
		return nil, fmt.Errorf("token secret: %w", err)
	}
	if len(s) < 16 {
		return nil, errors.New("token secret: shorter than 16 bytes")
	}
	t.secret = s
	return s, nil
}

// Issue signs a token for p; it never outlives the key it was issued for.
func (t *Tokens) Issue(ctx context.Context, p domain.Principal) (string, time.Duration, error) {
	keyExpiry := p.ExpiresAt
	secret, err := t.key(ctx)
	if err != nil {
		return "", 0, err
	}
	now := t.now()
	exp := now.Add(t.ttl)
	if keyExpiry.Before(exp) {
		exp = keyExpiry
	}
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: issuer, Subject: p.KeyID,
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
		},
		Owner: p.Owner, Company: p.Company, Scopes: p.Scopes, RateLimit: p.RateLimit, KeyExpiry: keyExpiry.Unix(),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
	if err != nil {
		return "", 0, fmt.Errorf("sign token: %w", err)
	}
	return s, exp.Sub(now), nil
}

// Verify checks a token's signature and expiry and returns the principal it was issued for, as
// it was then; Service.Authenticate replaces it with the key's current state.
func (t *Tokens) Verify(ctx context.Context, token string) (domain.Principal, error) {
	secret, err := t.key(ctx)
	if err != nil {
		return domain.Principal{}, err
	}
	var c claims
	_, err = jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return secret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer(issuer), jwt.WithTimeFunc(t.now), jwt.WithExpirationRequired())
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) && c.KeyExpiry != 0 && !t.now().Before(time.Unix(c.KeyExpiry, 0)) {
			return domain.Principal{}, domain.ErrExpiredKey
		}
		return domain.Principal{}, domain.ErrBadKey
	}
	return domain.Principal{KeyID: c.Subject, Owner: c.Owner, Company: c.Company, Scopes: c.Scopes, RateLimit: c.RateLimit, ExpiresAt: time.Unix(c.KeyExpiry, 0)}, nil
}
