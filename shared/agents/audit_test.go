package agents_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestDeleteAudited: a delete is recorded with the acting key's id; a refused one records
// nothing; a failed record fails the call; a service without a recorder deletes nothing.
func TestDeleteAudited(t *testing.T) {
	ctx := context.Background()
	base, m := newService()
	rec := audittest.NewStore()
	s := base.WithAudit(audit.New(rec))
	a := create(t, s, alice, `{"name":"Gone"}`, agents.Flags{})
	if err := s.Delete(ctx, mallory, a.ID); err == nil {
		t.Fatal("mallory deleted alice's agent")
	}
	if n := len(rec.Entries()); n != 0 {
		t.Fatalf("a refused delete recorded %d entries", n)
	}
	if err := agents.NewService(m, tools).Delete(ctx, alice, a.ID); err == nil {
		t.Fatal("a service without a recorder deleted an agent")
	}
	if stored, _ := m.stored(a.ID); stored == nil {
		t.Fatal("deleted without a recorder")
	}
	if err := s.Delete(ctx, alice, a.ID); err != nil {
		t.Fatal(err)
	}
	got := rec.Entries()
	if len(got) != 1 || got[0].Action != audit.AgentDeleted || got[0].TargetID != a.ID || got[0].ActorKeyID != alice.KeyID || got[0].Company != alice.Company {
		t.Fatalf("entries = %+v", got)
	}
	b := create(t, s, alice, `{"name":"Also gone"}`, agents.Flags{})
	rec.Fail = errors.New("throttled")
	if err := s.Delete(ctx, alice, b.ID); !errors.Is(err, rec.Fail) || domain.KindOf(err) == domain.KindNotFound {
		t.Errorf("delete with a failing recorder: %v", err)
	}
}
