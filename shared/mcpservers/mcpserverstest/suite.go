package mcpserverstest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcpservers"
)

// StoreSuite holds an mcpservers.Store to the port's contract: a server reads back as written
// (a schema's numbers exact), names unique in a company (domain.ErrMCPNameTaken), the bound on a
// company's servers (domain.ErrMCPLimit, a delete frees a place), companies kept apart, reads by
// id and by name, updates and deletes only over the version read (a changed server is a
// conflict, a deleted one not found) and renames that move the name. It runs against the fake
// (Store) and against the DynamoDB adapter on DynamoDB Local. newStore may return one store to
// every subtest: each makes up its own companies and ids.
func StoreSuite(t *testing.T, newStore func(t *testing.T) mcpservers.Store) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, newStore(t)) })
	t.Run("NamesUnique", func(t *testing.T) { namesUnique(t, newStore(t)) })
	t.Run("Limit", func(t *testing.T) { limit(t, newStore(t)) })
	t.Run("ListAndFind", func(t *testing.T) { listAndFind(t, newStore(t)) })
	t.Run("Update", func(t *testing.T) { update(t, newStore(t)) })
	t.Run("Rename", func(t *testing.T) { rename(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) { deleteServer(t, newStore(t)) })
	t.Run("TooLarge", func(t *testing.T) { tooLarge(t, newStore(t)) })
	t.Run("OAuth", func(t *testing.T) { oauthRoundTrip(t, newStore(t)) })
	t.Run("GrantRace", func(t *testing.T) { grantRace(t, newStore(t)) })
}

// grantRace: what two processes renewing the same grant at once rely on. Both read the record;
// the first write of a renewed grant lands, the second from the same read is a conflict and
// writes nothing (a rotated refresh token is never overwritten silently), and the record read
// again with FindMCPServers, at once, holds the first one's sealed grant (which the second then
// uses instead of asking a person to authorize again).
func grantRace(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	s := server(company("acme"), "linear")
	s.Auth = &domain.MCPServerAuth{Type: "oauth", Grant: domain.MCPGrantAuthorizationCode, Authorized: true}
	s.SealedAuth = []byte("grant-0")
	mustCreate(t, st, 10, s)
	var read [2]*domain.MCPServer
	for i := range read {
		got, err := st.GetMCPServer(ctx, s.Company, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		read[i] = got
	}
	renewed := func(prev *domain.MCPServer, sealed string) *domain.MCPServer {
		next := *prev
		next.SealedAuth, next.UpdatedAt = []byte(sealed), prev.UpdatedAt.Add(time.Millisecond)
		return &next
	}
	if err := st.UpdateMCPServer(ctx, renewed(read[0], "grant-a"), read[0]); err != nil {
		t.Fatal(err)
	}
	wantIs(t, "the second renewal from the same read", st.UpdateMCPServer(ctx, renewed(read[1], "grant-b"), read[1]), domain.ErrConflict)
	found, err := st.FindMCPServers(ctx, s.Company, []string{s.ID})
	if err != nil || len(found) != 1 {
		t.Fatalf("read again: %v, %v", found, err)
	}
	if got := string(found[0].SealedAuth); got != "grant-a" {
		t.Errorf("read again after the race: sealed grant %q, want the first renewal's", got)
	}
}

// oauthRoundTrip: a server behind OAuth reads back with its auth and its sealed grant, through
// an update too.
func oauthRoundTrip(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	s := server(company("acme"), "linear")
	s.HeaderNames, s.SealedHeaders = []string{}, nil
	s.Auth = &domain.MCPServerAuth{Type: "oauth", Grant: domain.MCPGrantAuthorizationCode, ClientID: "cid", ClientSecretSet: true,
		Scopes: []string{"read", "write"}}
	s.SealedAuth = []byte{9, 8, 7, 0, 255}
	s.Status = domain.MCPStatusAuthRequired
	mustCreate(t, st, 10, s)
	got, err := st.GetMCPServer(ctx, s.Company, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Auth, got.Auth); diff != "" || !bytes.Equal(got.SealedAuth, s.SealedAuth) || got.Status != domain.MCPStatusAuthRequired {
		t.Errorf("read back auth (-want +got):\n%s\nsealed %v, status %q", diff, got.SealedAuth, got.Status)
	}
	next := *got
	next.Auth = &domain.MCPServerAuth{Type: "oauth", Grant: domain.MCPGrantAuthorizationCode, Authorized: true}
	next.SealedAuth = []byte{1}
	next.UpdatedAt = got.UpdatedAt.Add(time.Second)
	if err := st.UpdateMCPServer(ctx, &next, got); err != nil {
		t.Fatal(err)
	}
	got, err = st.GetMCPServer(ctx, s.Company, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Auth.Authorized || !bytes.Equal(got.SealedAuth, []byte{1}) {
		t.Errorf("after the update: auth %+v, sealed %v", got.Auth, got.SealedAuth)
	}
}

var base = time.Date(2026, 11, 23, 9, 0, 0, 123456789, time.UTC)

func company(name string) string { return name + "-" + uuid.NewString()[:8] }

func server(company, name string) *domain.MCPServer {
	return &domain.MCPServer{ID: uuid.NewString(), Company: company, CreatedBy: "k1", Name: name, URL: "https://mcp.example.com/mcp",
		Description: "Docs", HeaderNames: []string{"Authorization"}, SealedHeaders: []byte{1, 2, 3, 0, 255}, TimeoutMS: 2500,
		Status: domain.MCPStatusActive, LastError: "",
		Tools: []domain.MCPTool{{Name: "echo", Description: "Echoes", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": json.Number("9007199254740993")}}}}},
		ToolsAt: base, CreatedAt: base, UpdatedAt: base}
}

func mustCreate(t *testing.T, st mcpservers.Store, max int, servers ...*domain.MCPServer) {
	t.Helper()
	for _, s := range servers {
		if err := st.CreateMCPServer(context.Background(), s, max); err != nil {
			t.Fatalf("create %s: %v", s.Name, err)
		}
	}
}

func wantIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

func names(list []*domain.MCPServer) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

// roundTrip: a server reads back as written, never sharing memory with the caller; another
// company's id and an unknown id are not found; no header names and no tools read back empty.
func roundTrip(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	acme := company("acme")
	s := server(acme, "docs")
	mustCreate(t, st, 50, s)
	want := *s
	want.Tools = slices.Clone(s.Tools)
	s.Tools[0].Name, s.HeaderNames[0] = "changed after the write", "changed"
	got, err := st.GetMCPServer(ctx, acme, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.HeaderNames = []string{"Authorization"}
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("get (-wrote +read):\n%s", d)
	}
	got.Tools[0].Name = "changed after the read"
	if again, err := st.GetMCPServer(ctx, acme, s.ID); err != nil || again.Tools[0].Name != "echo" {
		t.Errorf("a read shares memory with the store: %+v, %v", again, err)
	}
	_, err = st.GetMCPServer(ctx, company("globex"), s.ID)
	wantIs(t, "another company's id", err, domain.ErrNotFound)
	_, err = st.GetMCPServer(ctx, acme, uuid.NewString())
	wantIs(t, "an unknown id", err, domain.ErrNotFound)

	bare := server(acme, "bare")
	bare.HeaderNames, bare.SealedHeaders, bare.Tools = nil, nil, nil
	mustCreate(t, st, 50, bare)
	if got, err := st.GetMCPServer(ctx, acme, bare.ID); err != nil || got.HeaderNames == nil || len(got.HeaderNames) != 0 ||
		got.Tools == nil || len(got.Tools) != 0 || got.SealedHeaders != nil {
		t.Errorf("no headers and tools read back as %+v, %v; want empty header names and tools, nil sealed headers", got, err)
	}
}

// namesUnique: a name is taken once per company (a second claim writes nothing); another
// company may use it; a taken id is a conflict.
func namesUnique(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	acme := company("acme")
	a := server(acme, "docs")
	mustCreate(t, st, 50, a)
	dup := server(acme, "docs")
	wantIs(t, "a second claim of the name", st.CreateMCPServer(ctx, dup, 50), domain.ErrMCPNameTaken)
	_, err := st.GetMCPServer(ctx, acme, dup.ID)
	wantIs(t, "the refused server", err, domain.ErrNotFound)
	mustCreate(t, st, 50, server(company("globex"), "docs"))
	again := server(acme, "other")
	again.ID = a.ID
	err = st.CreateMCPServer(ctx, again, 50)
	if domain.KindOf(err) != domain.KindConflict {
		t.Errorf("a taken id: %v, want a conflict", err)
	}
	if got, err := st.GetMCPServer(ctx, acme, a.ID); err != nil || got.Name != "docs" {
		t.Errorf("the refused create wrote: %+v, %v", got, err)
	}
	if got, err := st.FindMCPServers(ctx, acme, []string{"other"}); err != nil || len(got) != 0 {
		t.Errorf("the refused create claimed its name: %v, %v", got, err)
	}
}

// limit: a company has at most max servers (a refused one writes nothing; a taken name is
// reported first); another company's do not count; a delete frees a place.
func limit(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	const max = 3
	acme := company("acme")
	var made []*domain.MCPServer
	for _, name := range []string{"a", "b", "c"} {
		s := server(acme, name)
		mustCreate(t, st, max, s)
		made = append(made, s)
	}
	mustCreate(t, st, max, server(company("globex"), "a"))
	over := server(acme, "d")
	wantIs(t, "a server past the bound", st.CreateMCPServer(ctx, over, max), domain.ErrMCPLimit)
	_, err := st.GetMCPServer(ctx, acme, over.ID)
	wantIs(t, "the refused server", err, domain.ErrNotFound)
	wantIs(t, "a taken name at the bound", st.CreateMCPServer(ctx, server(acme, "a"), max), domain.ErrMCPNameTaken)
	if err := st.DeleteMCPServer(ctx, made[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateMCPServer(ctx, over, max); err != nil {
		t.Errorf("after a delete: %v", err)
	}
	list, err := st.ListMCPServers(ctx, acme)
	if err != nil || !cmp.Equal(names(list), []string{"b", "c", "d"}) {
		t.Errorf("listed %v, %v; want b, c, d", names(list), err)
	}
}

// listAndFind: a company's list holds its servers only; Find reads by id and by name the servers
// asked for, each once, and leaves out unknown names, unknown ids and other companies' ids.
func listAndFind(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	acme, globex := company("acme"), company("globex")
	a, b, c := server(acme, "a"), server(acme, "b"), server(acme, "c")
	foreign := server(globex, "a")
	mustCreate(t, st, 50, a, b, c, foreign)
	list, err := st.ListMCPServers(ctx, acme)
	if err != nil || !cmp.Equal(names(list), []string{"a", "b", "c"}) {
		t.Errorf("acme's list: %v, %v", names(list), err)
	}
	for _, s := range list {
		if s.Company != acme {
			t.Errorf("acme's list holds %s of %s", s.ID, s.Company)
		}
	}
	if list, err := st.ListMCPServers(ctx, company("initech")); err != nil || len(list) != 0 {
		t.Errorf("a company without servers: %v, %v", list, err)
	}
	got, err := st.FindMCPServers(ctx, acme, []string{"a", b.ID, "a", a.ID, foreign.ID, "nope", uuid.NewString(), ""})
	if err != nil || !cmp.Equal(names(got), []string{"a", "b"}) {
		t.Errorf("found %v, %v; want a and b once each", names(got), err)
	}
	if got, err := st.FindMCPServers(ctx, acme, []string{c.ID}); err != nil || len(got) != 1 || got[0].ID != c.ID {
		t.Errorf("by id alone: %v, %v", got, err)
	}
	if got, err := st.FindMCPServers(ctx, acme, nil); err != nil || len(got) != 0 {
		t.Errorf("no refs: %v, %v", got, err)
	}
}

// update: a server is replaced only if unchanged since read; a stale read is a conflict that
// writes nothing; a deleted server is not found and not brought back.
func update(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	acme := company("acme")
	prev := server(acme, "docs")
	mustCreate(t, st, 50, prev)
	next := *prev
	next.URL, next.Status, next.LastError, next.UpdatedAt = "https://other.example.com/mcp", domain.MCPStatusError, "refused", base.Add(time.Second)
	if err := st.UpdateMCPServer(ctx, &next, prev); err != nil {
		t.Fatal(err)
	}
	if got, err := st.GetMCPServer(ctx, acme, prev.ID); err != nil || got.URL != next.URL || !got.UpdatedAt.Equal(next.UpdatedAt) {
		t.Errorf("after update: %+v, %v", got, err)
	}
	stale := *prev
	stale.Description, stale.UpdatedAt = "stale", base.Add(2*time.Second)
	err := st.UpdateMCPServer(ctx, &stale, prev)
	wantIs(t, "update from a stale read", err, domain.ErrConflict)
	if got, err := st.GetMCPServer(ctx, acme, prev.ID); err != nil || got.Description != "Docs" {
		t.Errorf("the refused update wrote: %+v, %v", got, err)
	}
	if err := st.DeleteMCPServer(ctx, &next); err != nil {
		t.Fatal(err)
	}
	late := next
	late.UpdatedAt = base.Add(3 * time.Second)
	wantIs(t, "update of a deleted server", st.UpdateMCPServer(ctx, &late, &next), domain.ErrNotFound)
	_, err = st.GetMCPServer(ctx, acme, prev.ID)
	wantIs(t, "get after the refused update", err, domain.ErrNotFound)
}

// rename: a new name moves the claim (the old name is free, the new one taken); a taken new
// name and a stale read are refused and write nothing.
func rename(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	acme := company("acme")
	a, b := server(acme, "a"), server(acme, "b")
	mustCreate(t, st, 50, a, b)
	next := *a
	next.Name, next.UpdatedAt = "a2", base.Add(time.Second)
	if err := st.UpdateMCPServer(ctx, &next, a); err != nil {
		t.Fatal(err)
	}
	if got, err := st.FindMCPServers(ctx, acme, []string{"a", "a2"}); err != nil || len(got) != 1 || got[0].ID != a.ID || got[0].Name != "a2" {
		t.Errorf("find after the rename: %v, %v", got, err)
	}
	mustCreate(t, st, 50, server(acme, "a")) // the old name is free
	taken := next
	taken.Name, taken.UpdatedAt = "b", base.Add(2*time.Second)
	wantIs(t, "rename to a taken name", st.UpdateMCPServer(ctx, &taken, &next), domain.ErrMCPNameTaken)
	stale := *a
	stale.Name, stale.UpdatedAt = "a3", base.Add(3*time.Second)
	wantIs(t, "rename from a stale read", st.UpdateMCPServer(ctx, &stale, a), domain.ErrConflict)
	if got, err := st.GetMCPServer(ctx, acme, a.ID); err != nil || got.Name != "a2" {
		t.Errorf("the refused renames wrote: %+v, %v", got, err)
	}
	if got, err := st.FindMCPServers(ctx, acme, []string{"a3"}); err != nil || len(got) != 0 {
		t.Errorf("a refused rename claimed its name: %v, %v", got, err)
	}
}

// deleteServer: a delete removes the server and frees its name, only if the server is
// unchanged since read (a stale read is a conflict that deletes nothing); a deleted server is
// not found.
func deleteServer(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	acme := company("acme")
	s := server(acme, "docs")
	mustCreate(t, st, 50, s)
	next := *s
	next.Description, next.UpdatedAt = "changed", base.Add(time.Second)
	if err := st.UpdateMCPServer(ctx, &next, s); err != nil {
		t.Fatal(err)
	}
	wantIs(t, "delete from a stale read", st.DeleteMCPServer(ctx, s), domain.ErrConflict)
	if _, err := st.GetMCPServer(ctx, acme, s.ID); err != nil {
		t.Errorf("the refused delete deleted: %v", err)
	}
	if err := st.DeleteMCPServer(ctx, &next); err != nil {
		t.Fatal(err)
	}
	_, err := st.GetMCPServer(ctx, acme, s.ID)
	wantIs(t, "get after delete", err, domain.ErrNotFound)
	wantIs(t, "a second delete", st.DeleteMCPServer(ctx, &next), domain.ErrNotFound)
	mustCreate(t, st, 50, server(acme, "docs")) // the name is free
}

// tooLarge: a server past DynamoDB's 400 KB is KindTooLarge and writes nothing (nor claims its
// name).
func tooLarge(t *testing.T, st mcpservers.Store) {
	ctx := context.Background()
	acme := company("acme")
	big := server(acme, "big")
	for i := range 150 {
		big.Tools = append(big.Tools, domain.MCPTool{Name: "t" + strings.Repeat("x", i%10), Description: strings.Repeat("d", 3000)})
	}
	if err := st.CreateMCPServer(ctx, big, 50); domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("create of 450 KB: %v, want KindTooLarge", err)
	}
	_, err := st.GetMCPServer(ctx, acme, big.ID)
	wantIs(t, "the refused server", err, domain.ErrNotFound)
	s := server(acme, "big")
	mustCreate(t, st, 50, s) // the name was not claimed
	next := *big
	next.ID, next.Name, next.UpdatedAt = s.ID, "big2", base.Add(time.Second)
	if err := st.UpdateMCPServer(ctx, &next, s); domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("update to 450 KB: %v, want KindTooLarge", err)
	}
	if got, err := st.GetMCPServer(ctx, acme, s.ID); err != nil || got.Name != "big" || len(got.Tools) != 1 {
		t.Errorf("the refused update wrote: %v", err)
	}
}
