package auth

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/auth/authtest"
	"github.com/agentorch/agentorch/shared/domain"
)

// memKeys is authtest's fake counting lookups (by hash and by id), for the cache tests.
type memKeys struct {
	*authtest.Store
	mu      sync.Mutex
	lookups int
}

// The fake's interface is this package's: the same method set.
var (
	_ KeyStore          = authtest.KeyStore(nil)
	_ authtest.KeyStore = KeyStore(nil)
)

// TestStoreSuite holds the fake to the contract of KeyStore (shared/dynamo runs the same suite
// against DynamoDB Local).
func TestStoreSuite(t *testing.T) {
	authtest.StoreSuite(t, func(*testing.T) authtest.KeyStore { return authtest.NewStore() })
}

func (m *memKeys) lookup() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lookups++
}

func (m *memKeys) GetKeyByHash(ctx context.Context, h string) (*domain.APIKey, error) {
	m.lookup()
	return m.Store.GetKeyByHash(ctx, h)
}

func (m *memKeys) GetKey(ctx context.Context, company, id string) (*domain.APIKey, error) {
	m.lookup()
	return m.Store.GetKey(ctx, company, id)
}

func newTestService(t *testing.T) (*Service, *memKeys, *time.Time) {
	t.Helper()
	keys := &memKeys{Store: authtest.NewStore()}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tokens := NewTokens(StaticSecret("0123456789abcdef0123456789abcdef"), 15*time.Minute)
	tokens.now = func() time.Time { return now }
	s := NewService(keys, nil, tokens, 30*time.Second).WithAudit(audit.New(audittest.NewStore()))
	s.now = func() time.Time { return now }
	return s, keys, &now
}

func TestAuthenticateCachesAndExpires(t *testing.T) {
	s, keys, now := newTestService(t)
	ctx := context.Background()
	k, secret, err := s.CreateKey(ctx, NewKey{Owner: "o", Company: "c", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if k.Hash == secret || k.Hash != HashKey(secret) {
		t.Fatal("the key is not stored as its hash")
	}
	for i := 0; i < 3; i++ {
		p, err := s.Authenticate(ctx, secret, "")
		if err != nil || p.Owner != "o" || p.Company != "c" || p.KeyID != k.ID {
			t.Fatalf("authenticate: %+v %v", p, err)
		}
	}
	if keys.lookups != 1 {
		t.Errorf("3 calls made %d store lookups, want 1 (cached)", keys.lookups)
	}
	*now = now.Add(31 * time.Second)
	_, _ = s.Authenticate(ctx, secret, "")
	if keys.lookups != 2 {
		t.Errorf("cache did not expire: %d lookups", keys.lookups)
	}
	*now = now.Add(time.Hour)
	if _, err := s.Authenticate(ctx, secret, ""); !errors.Is(err, domain.ErrExpiredKey) || domain.MessageOf(err) != domain.MsgKeyExpired {
		t.Errorf("expired key: %v", err)
	}
	if _, err := s.Authenticate(ctx, "ak_unknown", ""); domain.MessageOf(err) != domain.MsgBadCredentials {
		t.Errorf("unknown key: %v", err)
	}
}

func TestRevokeAppliesAtOnce(t *testing.T) {
	s, _, _ := newTestService(t)
	ctx := context.Background()
	k, secret, _ := s.CreateKey(ctx, NewKey{Owner: "o", Company: "c"})
	if _, err := s.Authenticate(ctx, secret, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKey(ctx, "other", k.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("revoke by another company: %v", err)
	}
	if err := s.RevokeKey(ctx, "c", k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, secret, ""); err == nil || domain.MessageOf(err) != domain.MsgBadCredentials {
		t.Errorf("revoked key still works: %v", err)
	}
}

func TestTokens(t *testing.T) {
	s, _, now := newTestService(t)
	ctx := context.Background()
	_, secret, _ := s.CreateKey(ctx, NewKey{Owner: "o", Company: "c", TTL: 10 * time.Minute, Scopes: []string{domain.ScopeAgentsRead}, RateLimit: 7})
	p, _ := s.Authenticate(ctx, secret, "")
	tok, ttl, err := s.IssueToken(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if ttl != 10*time.Minute {
		t.Errorf("token outlives its key: ttl %s", ttl)
	}
	got, err := s.Authenticate(ctx, "", "Bearer "+tok)
	if err != nil || got.Owner != "o" || got.Company != "c" || got.RateLimit != 7 || !got.Can(domain.ScopeAgentsRead) || got.Can(domain.ScopeAgentsWrite) {
		t.Fatalf("verify: %+v %v", got, err)
	}
	other := NewTokens(StaticSecret("another-secret-of-enough-length"), time.Minute)
	forged, _, _ := other.Issue(ctx, p)
	if _, err := s.Authenticate(ctx, "", "Bearer "+forged); err == nil {
		t.Error("token signed with another secret accepted")
	}
	*now = now.Add(11 * time.Minute)
	if _, err := s.Authenticate(ctx, "", "Bearer "+tok); !errors.Is(err, domain.ErrBadKey) || domain.MessageOf(err) != domain.MsgKeyExpired {
		t.Errorf("token past its key's expiry: %v", err)
	}
}

func TestCreateKeyValidation(t *testing.T) {
	s, _, _ := newTestService(t)
	for name, in := range map[string]NewKey{
		"no owner":      {Company: "c"},
		"bad scope":     {Owner: "o", Company: "c", Scopes: []string{"root"}},
		"negative rate": {Owner: "o", Company: "c", RateLimit: -1},
		"ttl too long":  {Owner: "o", Company: "c", TTL: 3 * 365 * 24 * time.Hour},
	} {
		if _, _, err := s.CreateKey(context.Background(), in); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}
