package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// otherInstance is a second Lambda instance: the same store, token secret and clock, its own cache.
func otherInstance(s *Service, keys *memKeys) *Service {
	o := NewService(keys, nil, s.tokens, s.ttl).WithAudit(s.audit)
	o.now = s.now
	return o
}

func mustAuth(t *testing.T, s *Service, key, authz string) domain.Principal {
	t.Helper()
	p, err := s.Authenticate(context.Background(), key, authz)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return p
}

func wantBadKey(t *testing.T, what string, s *Service, key, authz string) {
	t.Helper()
	if _, err := s.Authenticate(context.Background(), key, authz); !errors.Is(err, domain.ErrBadKey) || domain.MessageOf(err) != domain.MsgBadCredentials {
		t.Errorf("%s: got %v, want %q", what, err, domain.MsgBadCredentials)
	}
}

func TestTokenEndsWithItsKey(t *testing.T) {
	s, keys, now := newTestService(t)
	other := otherInstance(s, keys)
	ctx := context.Background()
	k, secret, err := s.CreateKey(ctx, NewKey{Owner: "o", Company: "c"})
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := s.IssueToken(ctx, mustAuth(t, s, secret, ""))
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Bearer " + tok
	if p := mustAuth(t, other, "", bearer); p.KeyID != k.ID || !p.ViaToken {
		t.Fatalf("token principal = %+v", p)
	}
	before := keys.lookups
	mustAuth(t, other, "", bearer)
	if keys.lookups != before {
		t.Errorf("a token on a warm cache made %d store lookups, want 0", keys.lookups-before)
	}
	if err := s.RevokeKey(ctx, "c", k.ID); err != nil {
		t.Fatal(err)
	}
	wantBadKey(t, "token on the instance that revoked its key", s, "", bearer)
	// Another instance learns of the revocation when its cached lookup expires.
	*now = now.Add(s.ttl)
	wantBadKey(t, "token on another instance after the cache TTL", other, "", bearer)
}

func TestTokenCannotCreateKeysOrTokens(t *testing.T) {
	s, _, _ := newTestService(t)
	ctx := context.Background()
	_, secret, _ := s.CreateKey(ctx, NewKey{Owner: "o", Company: "c", Scopes: []string{ScopeAdmin}})
	tok, _, err := s.IssueToken(ctx, mustAuth(t, s, secret, ""))
	if err != nil {
		t.Fatal(err)
	}
	p := mustAuth(t, s, "", "Bearer "+tok)
	if _, _, err := s.CreateKeyAs(ctx, p, NewKey{}); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("key created with a token: %v", err)
	}
	if _, _, err := s.IssueToken(ctx, p); !errors.Is(err, domain.ErrBadKey) {
		t.Errorf("token issued for a token: %v", err)
	}
}

func TestChildKeysDieWithTheirCreator(t *testing.T) {
	s, keys, now := newTestService(t)
	other := otherInstance(s, keys)
	ctx := context.Background()
	root, rootSecret, _ := s.CreateKey(ctx, NewKey{Owner: "o", Company: "c"})
	_, siblingSecret, _ := s.CreateKey(ctx, NewKey{Owner: "o", Company: "c"})
	child, childSecret, err := s.CreateKeyAs(ctx, mustAuth(t, s, rootSecret, ""), NewKey{Name: "child"})
	if err != nil {
		t.Fatal(err)
	}
	grand, grandSecret, err := s.CreateKeyAs(ctx, mustAuth(t, s, childSecret, ""), NewKey{Name: "grandchild"})
	if err != nil {
		t.Fatal(err)
	}
	if child.ParentID == nil || *child.ParentID != root.ID || root.ParentID != nil {
		t.Errorf("parents: root %v, child %v", root.ParentID, child.ParentID)
	}
	if diff := cmp.Diff([]string{child.ID, root.ID}, grand.Ancestors); diff != "" {
		t.Errorf("grandchild ancestors (-want +got):\n%s", diff)
	}
	tok, _, _ := s.IssueToken(ctx, mustAuth(t, s, grandSecret, ""))
	for _, in := range []*Service{s, other} {
		mustAuth(t, in, childSecret, "")
		mustAuth(t, in, grandSecret, "")
		mustAuth(t, in, "", "Bearer "+tok)
	}
	if err := s.RevokeKey(ctx, "c", root.ID); err != nil {
		t.Fatal(err)
	}
	check := func(in *Service, where string) {
		t.Helper()
		wantBadKey(t, "child "+where, in, childSecret, "")
		wantBadKey(t, "grandchild "+where, in, grandSecret, "")
		wantBadKey(t, "grandchild's token "+where, in, "", "Bearer "+tok)
		mustAuth(t, in, siblingSecret, "")
	}
	check(s, "on the instance that revoked the root")
	*now = now.Add(s.ttl)
	check(other, "on another instance after the cache TTL")
}

func TestKeyDepthIsBounded(t *testing.T) {
	s, _, _ := newTestService(t)
	ctx := context.Background()
	_, secret, _ := s.CreateKey(ctx, NewKey{Owner: "o", Company: "c"})
	for depth := 1; depth <= MaxKeyDepth; depth++ {
		k, next, err := s.CreateKeyAs(ctx, mustAuth(t, s, secret, ""), NewKey{})
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if len(k.Ancestors) != depth {
			t.Fatalf("depth %d: %d ancestors", depth, len(k.Ancestors))
		}
		secret = next
	}
	if _, _, err := s.CreateKeyAs(ctx, mustAuth(t, s, secret, ""), NewKey{}); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("key %d levels deep: %v", MaxKeyDepth+1, err)
	}
}

func TestCreateKeyAsBounds(t *testing.T) {
	s, _, now := newTestService(t)
	ctx := context.Background()
	creator := func(in NewKey) domain.Principal {
		in.Owner, in.Company = "alice", "acme"
		_, secret, err := s.CreateKey(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return mustAuth(t, s, secret, "")
	}
	limited := creator(NewKey{TTL: 10 * 24 * time.Hour, RateLimit: 10, Scopes: []string{domain.ScopeKeysManage, domain.ScopeAgentsWrite}})
	unscoped := creator(NewKey{})
	admin := creator(NewKey{Scopes: []string{ScopeAdmin}})
	tests := []struct {
		name    string
		by      domain.Principal
		in      NewKey
		field   string // of the 400; "403" for a permission error
		message string // a part of the message
	}{
		{name: "longer than its creator", by: limited, in: NewKey{TTL: 11 * 24 * time.Hour, RateLimit: 10}, field: "expires_in", message: "at most 864000 seconds (10 days)"},
		{name: "expiring after its creator", by: limited, in: NewKey{ExpiresAt: now.Add(20 * 24 * time.Hour), RateLimit: 10}, field: "expires_at", message: "must not be after " + now.Add(10*24*time.Hour).Format(time.RFC3339)},
		{name: "a scope its creator lacks", by: limited, in: NewKey{Scopes: []string{domain.ScopeSessionsWrite}, RateLimit: 10}, field: "scopes.0", message: `does not hold scope "sessions:write"`},
		{name: "admin from a non-admin", by: unscoped, in: NewKey{Scopes: []string{ScopeAdmin}}, field: "scopes.0", message: `"admin"`},
		{name: "no rate limit under a limited creator", by: limited, in: NewKey{RateLimit: 0}, field: "rate_limit", message: "between 1 and 10"},
		{name: "a higher rate limit", by: limited, in: NewKey{RateLimit: 11}, field: "rate_limit", message: "between 1 and 10"},
		{name: "another owner, not admin", by: unscoped, in: NewKey{Owner: "bob"}, field: "403"},
		{name: "owner that is no identifier", by: admin, in: NewKey{Owner: "bob#KEYS"}, field: "owner", message: "letters, digits"},
		{name: "empty owner given by an operator", by: admin, in: NewKey{Owner: " "}, field: "owner"},
		{name: "too long for any key", by: admin, in: NewKey{TTL: 3 * 365 * 24 * time.Hour}, field: "expires_in", message: "between 1 second and 730 days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.CreateKeyAs(ctx, tt.by, tt.in)
			if tt.field == "403" {
				if !errors.Is(err, domain.ErrPermission) {
					t.Fatalf("got %v, want a permission error", err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) == 0 {
				t.Fatalf("got %v, want a 400", err)
			}
			if f := de.Fields[0]; f.Field != tt.field || !strings.Contains(f.Message, tt.message) {
				t.Errorf("got %s: %s, want %s: …%s…", f.Field, f.Message, tt.field, tt.message)
			}
			if strings.Contains(de.Message, "h0m") || strings.Contains(de.Message, "time.") {
				t.Errorf("message speaks Go: %s", de.Message)
			}
		})
	}

	// What a creator may give, and what a key gets by default (the API fills in the rate limit).
	k, _, err := s.CreateKeyAs(ctx, limited, NewKey{RateLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := (cmpKey{k.Scopes, k.RateLimit, k.ExpiresAt, k.Owner}); !cmp.Equal(got, cmpKey{limited.Scopes, 10, limited.ExpiresAt, "alice"}) {
		t.Errorf("default child of a limited key = %+v", got)
	}
	if k, _, err = s.CreateKeyAs(ctx, limited, NewKey{Scopes: []string{domain.ScopeAgentsRead}, RateLimit: 5, TTL: time.Hour}); err != nil || k.RateLimit != 5 || !k.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Errorf("narrower child: %+v %v", k, err)
	}
	if k, _, err = s.CreateKeyAs(ctx, admin, NewKey{Owner: "bob"}); err != nil || k.Owner != "bob" || len(k.Scopes) != 0 {
		t.Errorf("admin's key for bob: %+v %v", k, err)
	} else if p := k.Principal(); p.IsAdmin() || p.Can(ScopeAdmin) || !p.Can(domain.ScopeKeysManage) {
		t.Errorf("an admin's default key is not an ordinary unscoped key: %v", k.Scopes)
	}
	if _, _, err = s.CreateKeyAs(ctx, admin, NewKey{Scopes: []string{ScopeAdmin}}); err != nil {
		t.Errorf("admin creating an admin: %v", err)
	}
}

type cmpKey struct {
	Scopes    []string
	RateLimit int
	ExpiresAt time.Time
	Owner     string
}

func TestManagingOtherOwnersKeysNeedsAdmin(t *testing.T) {
	s, _, _ := newTestService(t)
	ctx := context.Background()
	mk := func(owner string, scopes ...string) (*domain.APIKey, domain.Principal) {
		k, secret, err := s.CreateKey(ctx, NewKey{Owner: owner, Company: "acme", Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		return k, mustAuth(t, s, secret, "")
	}
	aliceKey, alice := mk("alice")
	bobKey, _ := mk("bob")
	_, admin := mk("root", ScopeAdmin)
	_, _ = mk("eve")
	owners := func(p domain.Principal) map[string]bool {
		keys, err := s.ListKeysAs(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, k := range keys {
			m[k.Owner] = true
		}
		return m
	}
	if diff := cmp.Diff(map[string]bool{"alice": true}, owners(alice)); diff != "" {
		t.Errorf("alice lists (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"alice": true, "bob": true, "root": true, "eve": true}, owners(admin)); diff != "" {
		t.Errorf("admin lists (-want +got):\n%s", diff)
	}
	if err := s.RevokeKeyAs(ctx, alice, bobKey.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("alice revoking bob's key: %v", err)
	}
	if err := s.RevokeKeyAs(ctx, admin, bobKey.ID); err != nil {
		t.Errorf("admin revoking bob's key: %v", err)
	}
	if err := s.RevokeKeyAs(ctx, alice, aliceKey.ID); err != nil {
		t.Errorf("alice revoking her own key: %v", err)
	}
}
