package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestKeysAudited: a key created or revoked over the API is recorded with the acting key's id,
// and never with a secret; without a recorder nothing changes; a failed record fails the call.
func TestKeysAudited(t *testing.T) {
	s, keys, _ := newTestService(t)
	ctx := context.Background()
	rec := audittest.NewStore()
	s.WithAudit(audit.New(rec))
	root, _, err := s.CreateKey(ctx, NewKey{Owner: "ops", Company: "acme", Scopes: []string{ScopeAdmin}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Entries()); n != 0 {
		t.Fatalf("an operator's key (scripts, no acting key) recorded %d entries", n)
	}
	admin := root.Principal()
	k, secret, err := s.CreateKeyAs(ctx, admin, NewKey{Owner: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKeyAs(ctx, admin, k.ID); err != nil {
		t.Fatal(err)
	}
	type row struct{ Company, Actor, Action, Target string }
	var got []row
	for _, e := range rec.Entries() {
		got = append(got, row{e.Company, e.ActorKeyID, e.Action, e.TargetID})
		if e.TargetID == secret || e.ActorKeyID == secret {
			t.Errorf("entry holds a secret: %+v", e)
		}
	}
	want := []row{{"acme", root.ID, audit.KeyCreated, k.ID}, {"acme", root.ID, audit.KeyRevoked, k.ID}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}

	// A revoke of a key that is not there records nothing.
	if err := s.RevokeKeyAs(ctx, admin, "00000000-0000-4000-8000-000000000000"); domain.KindOf(err) != domain.KindNotFound {
		t.Fatalf("revoke unknown: %v", err)
	}
	if n := len(rec.Entries()); n != 2 {
		t.Errorf("entries after a failed revoke = %d, want 2", n)
	}

	// A failed record fails the call, so that its loss is never silent.
	rec.Fail = errors.New("throttled")
	if _, _, err := s.CreateKeyAs(ctx, admin, NewKey{Owner: "bob"}); !errors.Is(err, rec.Fail) {
		t.Errorf("create with a failing recorder: %v", err)
	}

	// Without a recorder nothing changes.
	bare := NewService(keys, nil, s.tokens, s.ttl)
	before, _ := keys.ListKeys(ctx, "acme")
	if _, _, err := bare.CreateKeyAs(ctx, admin, NewKey{Owner: "bob"}); !errors.Is(err, errNoAudit) {
		t.Errorf("create without a recorder: %v", err)
	}
	if err := bare.RevokeKeyAs(ctx, admin, root.ID); !errors.Is(err, errNoAudit) {
		t.Errorf("revoke without a recorder: %v", err)
	}
	after, _ := keys.ListKeys(ctx, "acme")
	if len(after) != len(before) {
		t.Errorf("a key was created without a recorder: %d -> %d keys", len(before), len(after))
	}
	if r, err := keys.GetKey(ctx, "acme", root.ID); err != nil || r.RevokedAt != nil {
		t.Errorf("root after a revoke without a recorder: %+v, %v", r, err)
	}
}
