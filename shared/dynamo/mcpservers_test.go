package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

func newMCPServer(company, name string, at time.Time) *domain.MCPServer {
	return &domain.MCPServer{ID: uuid.NewString(), Company: company, CreatedBy: "k1", Name: name, URL: "https://mcp.example.com/mcp",
		HeaderNames: []string{"Authorization"}, SealedHeaders: []byte{1, 2, 3, 0, 255}, TimeoutMS: 2500, Status: domain.MCPStatusActive,
		Tools: []domain.MCPTool{{Name: "echo", Description: "Echoes", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": json.Number("9007199254740993")}}}}},
		ToolsAt: at, CreatedAt: at, UpdatedAt: at}
}

// TestMCPServerEntity: a server reads back as written (a schema's numbers exact); create claims the name in the company (a second claim writes nothing),
// get by company and id (another company's is absent), the company's list in one Query, updates
// conditional on updated_at that move the name claim, and delete that frees the name.
func TestMCPServerEntity(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := context.Background()
	now := time.Now().UTC()
	a := newMCPServer("acme", "docs", now)
	if err := st.CreateMCPServer(ctx, a, 50); err != nil {
		t.Fatal(err)
	}
	dup := newMCPServer("acme", "docs", now)
	if err := st.CreateMCPServer(ctx, dup, 50); !errors.Is(err, domain.ErrMCPNameTaken) {
		t.Fatalf("second claim of the name: %v, want ErrMCPNameTaken", err)
	}
	if _, err := st.GetMCPServer(ctx, "acme", dup.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the refused server was written: %v", err)
	}
	// Names are per company.
	other := newMCPServer("globex", "docs", now)
	if err := st.CreateMCPServer(ctx, other, 50); err != nil {
		t.Fatal(err)
	}

	got, err := st.GetMCPServer(ctx, "acme", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}
	if _, err := st.GetMCPServer(ctx, "globex", a.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("globex reads acme's server: %v", err)
	}

	b := newMCPServer("acme", "search", now.Add(time.Second))
	b.HeaderNames, b.SealedHeaders, b.Tools = []string{}, nil, []domain.MCPTool{}
	if err := st.CreateMCPServer(ctx, b, 50); err != nil {
		t.Fatal(err)
	}
	list, err := st.ListMCPServers(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, s := range list {
		ids[s.ID] = s.Name
	}
	if diff := cmp.Diff(map[string]string{a.ID: "docs", b.ID: "search"}, ids); diff != "" {
		t.Errorf("acme's list (-want +got):\n%s", diff)
	}

	// An update of a stale read is a conflict; of a current one goes through.
	c := *a
	c.Description, c.UpdatedAt = "changed", now.Add(time.Minute)
	if err := st.UpdateMCPServer(ctx, &c, a); err != nil {
		t.Fatal(err)
	}
	stale := c
	stale.UpdatedAt = now.Add(2 * time.Minute)
	if err := st.UpdateMCPServer(ctx, &stale, a); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("update from a stale read: %v, want conflict", err)
	}
	// A rename moves the claim; renaming onto a taken name changes nothing.
	r := c
	r.Name, r.UpdatedAt = "search", now.Add(3*time.Minute)
	if err := st.UpdateMCPServer(ctx, &r, &c); !errors.Is(err, domain.ErrMCPNameTaken) {
		t.Errorf("rename onto a taken name: %v", err)
	}
	r.Name = "docs-v2"
	if err := st.UpdateMCPServer(ctx, &r, &c); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetMCPServer(ctx, "acme", a.ID); got.Name != "docs-v2" || got.Description != "changed" {
		t.Errorf("after rename: %+v", got)
	}
	// The old name is free, the new one taken.
	if err := st.CreateMCPServer(ctx, newMCPServer("acme", "docs", now), 50); err != nil {
		t.Errorf("the old name is still claimed: %v", err)
	}
	if err := st.CreateMCPServer(ctx, newMCPServer("acme", "docs-v2", now), 50); !errors.Is(err, domain.ErrMCPNameTaken) {
		t.Errorf("the new name is not claimed: %v", err)
	}
	// A rename of a server deleted meanwhile is not found.
	gone := newMCPServer("acme", "gone", now)
	if err := st.UpdateMCPServer(ctx, &domain.MCPServer{ID: gone.ID, Company: "acme", Name: "gone2", UpdatedAt: now}, gone); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("rename of a missing server: %v", err)
	}
	if err := st.UpdateMCPServer(ctx, gone, gone); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("update of a missing server: %v", err)
	}

	// Delete of a stale read is a conflict; of the current one frees the name.
	if err := st.DeleteMCPServer(ctx, &c); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("delete from a stale read: %v", err)
	}
	if err := st.DeleteMCPServer(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMCPServer(ctx, &r); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if err := st.CreateMCPServer(ctx, newMCPServer("acme", "docs-v2", now), 50); err != nil {
		t.Errorf("the deleted server's name is still claimed: %v", err)
	}
	if list, _ := st.ListMCPServers(ctx, "globex"); len(list) != 1 || list[0].ID != other.ID {
		t.Errorf("globex's list: %v", list)
	}
}

// TestMCPServerFindAndLimit: FindMCPServers reads by id and by name only the servers asked for
// (another company's id and unknown names are absent) in two BatchGetItem at most; the count of
// a company's servers bounds registrations (a refused one writes nothing) and a delete frees a
// place.
func TestMCPServerFindAndLimit(t *testing.T) {
	env := localstack.NewTestEnv(t)
	calls := newCounting(env.DynamoDB())
	st := dynamo.NewStore(calls, env.Config.Table)
	ctx := context.Background()
	now := time.Now().UTC()
	const max = 3
	var made []*domain.MCPServer
	for _, name := range []string{"a", "b", "c"} {
		s := newMCPServer("initech", name, now)
		if err := st.CreateMCPServer(ctx, s, max); err != nil {
			t.Fatal(err)
		}
		made = append(made, s)
	}
	foreign := newMCPServer("umbrella", "a", now)
	if err := st.CreateMCPServer(ctx, foreign, max); err != nil {
		t.Fatal(err)
	}
	over := newMCPServer("initech", "d", now)
	if err := st.CreateMCPServer(ctx, over, max); !errors.Is(err, domain.ErrMCPLimit) {
		t.Fatalf("a fourth server: %v, want ErrMCPLimit", err)
	}
	if _, err := st.GetMCPServer(ctx, "initech", over.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the refused server was written: %v", err)
	}
	if err := st.CreateMCPServer(ctx, newMCPServer("initech", "a", now), max); !errors.Is(err, domain.ErrMCPNameTaken) {
		t.Errorf("a taken name at the limit: %v, want ErrMCPNameTaken", err)
	}

	calls.reset()
	got, err := st.FindMCPServers(ctx, "initech", []string{"a", made[1].ID, "a", foreign.ID, "nope", uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range got {
		names[s.Name] = true
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "b": true}, names); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	if n := calls.reset()["BatchGetItem"]; n != 2 {
		t.Errorf("%d BatchGetItem calls, want 2", n)
	}
	if got, err := st.FindMCPServers(ctx, "initech", []string{made[2].ID}); err != nil || len(got) != 1 || got[0].Name != "c" {
		t.Errorf("by id alone: %v, %v", got, err)
	}
	if n := calls.reset()["BatchGetItem"]; n != 1 {
		t.Errorf("%d BatchGetItem calls for ids only, want 1", n)
	}

	if err := st.DeleteMCPServer(ctx, made[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateMCPServer(ctx, over, max); err != nil {
		t.Errorf("after a delete: %v", err)
	}
	if list, _ := st.ListMCPServers(ctx, "initech"); len(list) != max {
		t.Errorf("%d servers listed, want %d (the count item is not a server)", len(list), max)
	}
}
