package mcpservers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/mcpservers/mcpserverstest"
	"github.com/agentorch/agentorch/shared/seal"
)

// TestAudited: registering, changing and deleting a server are recorded with the acting key's
// id (never a header value); a refused call records nothing; a failed record fails the call; a
// service without a recorder changes nothing.
func TestAudited(t *testing.T) {
	e := newEnv()
	ctx := context.Background()
	srv := e.create(t, alice, `{"name":"a","url":"`+goodURL+`","headers":{"Authorization":"Bearer s3cret"}}`)
	if _, err := e.svc.Update(ctx, alice, srv.ID, updateInput(t, `{"description":"d"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Update(ctx, alice, srv.ID, updateInput(t, `{"timeout_ms":-1}`)); domain.KindOf(err) != domain.KindInvalid {
		t.Fatalf("bad update: %v", err)
	}
	if err := e.svc.Delete(ctx, alice, srv.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Delete(ctx, alice, srv.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Fatalf("second delete: %v", err)
	}
	type row struct{ Company, Actor, Action, Target string }
	var got []row
	for _, x := range e.audit.Entries() {
		got = append(got, row{x.Company, x.ActorKeyID, x.Action, x.TargetID})
	}
	want := []row{
		{alice.Company, alice.KeyID, audit.MCPServerCreated, srv.ID},
		{alice.Company, alice.KeyID, audit.MCPServerUpdated, srv.ID},
		{alice.Company, alice.KeyID, audit.MCPServerDeleted, srv.ID},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}

	e.audit.Fail = errors.New("throttled")
	if _, err := e.svc.Create(ctx, alice, createInput(t, `{"name":"b","url":"`+goodURL+`"}`)); !errors.Is(err, e.audit.Fail) {
		t.Errorf("create with a failing recorder: %v", err)
	}

	st := mcpserverstest.NewStore()
	bare := mcpservers.New(st, e.conn, seal.New(seal.Static("0123456789012345678901234567890123456789")))
	if _, err := bare.Create(ctx, alice, createInput(t, `{"name":"c","url":"`+goodURL+`"}`)); err == nil {
		t.Error("a service without a recorder registered a server")
	}
	if list, _ := st.ListMCPServers(ctx, alice.Company); len(list) != 0 {
		t.Errorf("stored without a recorder: %v", list)
	}
}
