package audit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
)

var admin = domain.Principal{KeyID: "key-1", Owner: "ops", Company: "acme", Scopes: []string{domain.ScopeAdmin}}

func TestRecord(t *testing.T) {
	st := audittest.NewStore()
	svc := audit.New(st)
	p := admin
	p.ViaToken = true
	before := time.Now().UTC()
	if err := svc.Record(context.Background(), p, audit.KeyRevoked, "key-2"); err != nil {
		t.Fatal(err)
	}
	got := st.Entries()
	if len(got) != 1 {
		t.Fatalf("entries = %v", got)
	}
	e := got[0]
	want := domain.AuditEntry{Company: "acme", ActorKeyID: "key-1", ViaToken: true, Action: audit.KeyRevoked, TargetID: "key-2"}
	if diff := cmp.Diff(want, e, cmpopts.IgnoreFields(domain.AuditEntry{}, "ID", "CreatedAt", "ExpiresAt")); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
	if !domain.IsID(e.ID) || e.CreatedAt.Before(before) || e.CreatedAt.Location() != time.UTC {
		t.Errorf("id %q created %v", e.ID, e.CreatedAt)
	}
	if d := e.ExpiresAt.Sub(e.CreatedAt); d != 90*24*time.Hour {
		t.Errorf("kept %v, want 90 days", d)
	}
	if e.TargetType() != "api_key" {
		t.Errorf("target type %q", e.TargetType())
	}
}

func TestRecordRefuses(t *testing.T) {
	st := audittest.NewStore()
	svc := audit.New(st)
	if err := svc.Record(context.Background(), admin, "api_key.eaten", "k"); err == nil {
		t.Error("unknown action recorded")
	}
	st.Fail = errors.New("dynamo down")
	err := svc.Record(context.Background(), admin, audit.AgentDeleted, "agent-9")
	if !errors.Is(err, st.Fail) {
		t.Fatalf("err = %v, want the store's", err)
	}
	if len(st.Entries()) != 0 {
		t.Errorf("entries = %v", st.Entries())
	}
}

func TestList(t *testing.T) {
	st := audittest.NewStore()
	svc := audit.New(st)
	ctx := context.Background()
	for _, a := range []string{audit.KeyCreated, audit.AgentDeleted} {
		if err := svc.Record(ctx, admin, a, "t"); err != nil {
			t.Fatal(err)
		}
	}
	other := admin
	other.Company = "globex"
	if err := svc.Record(ctx, other, audit.KeyCreated, "t"); err != nil {
		t.Fatal(err)
	}
	got, more, err := svc.List(ctx, admin, domain.AuditFilter{Action: audit.KeyCreated}, 0, 10)
	if err != nil || more || len(got) != 1 || got[0].Company != "acme" {
		t.Fatalf("list = %v, %v, %v", got, more, err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		p    domain.Principal
		f    domain.AuditFilter
		kind domain.Kind
	}{
		{"not admin", domain.Principal{KeyID: "k", Company: "acme"}, domain.AuditFilter{}, domain.KindPermission},
		{"unknown action", admin, domain.AuditFilter{Action: "key.created"}, domain.KindInvalid},
		{"to before from", admin, domain.AuditFilter{From: t0, To: t0.Add(-time.Second)}, domain.KindInvalid},
		{"to equals from", admin, domain.AuditFilter{From: t0, To: t0}, domain.KindInvalid},
	} {
		if _, _, err := svc.List(ctx, c.p, c.f, 0, 10); domain.KindOf(err) != c.kind {
			t.Errorf("%s: err = %v, want kind %v", c.name, err, c.kind)
		}
	}
}
