package agents_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/domain"
)

const unknownID = "3f1c2d4e-0000-4000-8000-000000000000"

// create stores an agent of p or fails the test.
func create(t *testing.T, s *agents.Service, p domain.Principal, cfg string, f agents.Flags) *domain.Agent {
	t.Helper()
	a, err := s.Create(context.Background(), p, agents.CreateInput{Config: doc(t, cfg), Flags: f})
	if err != nil {
		t.Fatalf("create %s: %v", cfg, err)
	}
	return a
}

func versionNumbers(vs []*domain.AgentVersion) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, v.VersionNumber)
	}
	return out
}

// TestTenancy: an agent is read by its owner, by colleagues when shared, by anyone when
// public; only its owner changes or deletes it. Another tenant's agent answers 403, an unknown
// or malformed id 404 (the malformed one without a store read), and nothing refused changes
// anything.
func TestTenancy(t *testing.T) {
	ctx := context.Background()
	s, m := newService()
	private := create(t, s, alice, supportConfig, agents.Flags{}).ID
	shared := create(t, s, alice, `{"name":"Shared"}`, agents.Flags{IsShared: ptr(true)}).ID
	public := create(t, s, alice, `{"name":"Public"}`, agents.Flags{IsPublic: ptr(true)}).ID
	snapshot := map[string]*domain.Agent{}
	for _, id := range []string{private, shared, public} {
		snapshot[id], _ = m.stored(id)
	}

	ops := map[string]func(p domain.Principal, id string) error{
		"get": func(p domain.Principal, id string) error { _, err := s.Get(ctx, p, id); return err },
		"patch flag": func(p domain.Principal, id string) error {
			_, err := s.Update(ctx, p, id, agents.UpdateInput{Merge: true, Flags: agents.Flags{IsPublic: ptr(true)}})
			return err
		},
		"put": func(p domain.Principal, id string) error {
			_, err := s.Update(ctx, p, id, agents.UpdateInput{Config: domain.ConfigDocOf(map[string]any{"name": "pwned"})})
			return err
		},
		"delete":   func(p domain.Principal, id string) error { return s.Delete(ctx, p, id) },
		"current":  func(p domain.Principal, id string) error { _, err := s.CurrentVersion(ctx, p, id); return err },
		"versions": func(p domain.Principal, id string) error { _, _, err := s.Versions(ctx, p, id, 0, 10); return err },
	}
	const ok = domain.KindInternal // no error
	tests := []struct {
		name, op string
		p        domain.Principal
		id       string
		want     domain.Kind
	}{
		{"owner reads private", "get", alice, private, ok},
		{"owner reads private by an upper-case id", "get", alice, strings.ToUpper(private), ok},
		{"owner reads private versions", "versions", alice, private, ok},
		{"colleague cannot read private", "get", carol, private, domain.KindPermission},
		{"colleague cannot read private's current version", "current", carol, private, domain.KindPermission},
		{"colleague reads shared", "get", carol, shared, ok},
		{"colleague reads shared versions", "versions", carol, shared, ok},
		{"colleague cannot change shared", "patch flag", carol, shared, domain.KindPermission},
		{"colleague cannot replace shared", "put", carol, shared, domain.KindPermission},
		{"colleague cannot delete shared", "delete", carol, shared, domain.KindPermission},
		{"colleague reads public", "get", carol, public, ok},
		{"colleague cannot change public", "patch flag", carol, public, domain.KindPermission},
		{"other company cannot read private", "get", mallory, private, domain.KindPermission},
		{"other company cannot read shared", "get", mallory, shared, domain.KindPermission},
		{"other company cannot read versions", "current", mallory, private, domain.KindPermission},
		{"other company cannot list versions", "versions", mallory, private, domain.KindPermission},
		{"other company reads public", "get", mallory, public, ok},
		{"other company reads public's current version", "current", mallory, public, ok},
		{"other company cannot change public", "put", mallory, public, domain.KindPermission},
		{"other company cannot delete public", "delete", mallory, public, domain.KindPermission},
		{"other company cannot delete private", "delete", mallory, private, domain.KindPermission},
		{"unknown id", "get", alice, unknownID, domain.KindNotFound},
		{"unknown id update", "patch flag", alice, unknownID, domain.KindNotFound},
		{"unknown id delete", "delete", alice, unknownID, domain.KindNotFound},
		{"unknown id versions", "versions", alice, unknownID, domain.KindNotFound},
		{"malformed id", "get", alice, "not-a-uuid", domain.KindNotFound},
		{"malformed id delete", "delete", alice, "../" + private, domain.KindNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := m.Calls("GetAgent")
			err := ops[tt.op](tt.p, tt.id)
			if tt.want == ok && err != nil || tt.want != ok && domain.KindOf(err) != tt.want {
				t.Fatalf("%s = %v (kind %v), want kind %v", tt.op, err, domain.KindOf(err), tt.want)
			}
			if tt.want == domain.KindPermission && domain.MessageOf(err) != domain.MsgNoPermission {
				t.Errorf("message %q", domain.MessageOf(err))
			}
			if !domain.IsID(tt.id) && m.Calls("GetAgent") != before {
				t.Error("a malformed id was read from the store")
			}
		})
	}
	for id, want := range snapshot {
		if got, _ := m.stored(id); !cmp.Equal(want, got) {
			t.Errorf("agent %s changed (-before +after):\n%s", id, cmp.Diff(want, got))
		}
	}
	if n := m.Calls("UpdateAgent") + m.Calls("DeleteAgent"); n != 0 {
		t.Errorf("%d writes reached the store", n)
	}

	// Lists: alice sees her three; carol the shared and the public one; mallory none of acme's,
	// public or not, but her own.
	mine := create(t, s, mallory, `{"name":"Mine"}`, agents.Flags{}).ID
	for _, tt := range []struct {
		who  string
		p    domain.Principal
		want []string
	}{
		{"alice", alice, []string{public, shared, private}},
		{"carol", carol, []string{public, shared}},
		{"mallory", mallory, []string{mine}},
	} {
		list, more, err := s.List(ctx, tt.p, 0, 100)
		var ids []string
		for _, a := range list {
			ids = append(ids, a.ID)
		}
		if err != nil || more || !cmp.Equal(tt.want, ids) {
			t.Errorf("%s lists %v (more %t, %v), want %v", tt.who, ids, more, err, tt.want)
		}
	}
}

// TestListPages: a page skips offset readable agents, newest first; agents the caller may not
// read count for neither offset nor limit, and the store is read no further than the agent
// after the page.
func TestListPages(t *testing.T) {
	ctx := context.Background()
	s, m := newService()
	var ids []string // newest first
	for i, name := range []string{"a1", "a2", "a3", "carol's", "a4", "a5"} {
		p := alice
		if i == 3 {
			p = carol
		}
		ids = append([]string{create(t, s, p, `{"name":"`+name+`"}`, agents.Flags{}).ID}, ids...)
	}
	a5, a4, a3, a2, a1 := ids[0], ids[1], ids[3], ids[4], ids[5]
	tests := []struct {
		offset, limit int
		want          []string
		more          bool
		handed        int
	}{
		{0, 2, []string{a5, a4}, true, 4},
		{2, 2, []string{a3, a2}, true, 6},
		{4, 2, []string{a1}, false, 6},
		{5, 2, []string{}, false, 6},
		{0, 5, []string{a5, a4, a3, a2, a1}, false, 6},
		{1, 1, []string{a4}, true, 4},
	}
	for _, tt := range tests {
		m.handed = 0
		list, more, err := s.List(ctx, alice, tt.offset, tt.limit)
		got := []string{}
		for _, a := range list {
			got = append(got, a.ID)
		}
		if err != nil || more != tt.more || !cmp.Equal(tt.want, got) {
			t.Errorf("List(%d, %d) = %v more %t (%v), want %v more %t", tt.offset, tt.limit, got, more, err, tt.want, tt.more)
		}
		if m.handed != tt.handed {
			t.Errorf("List(%d, %d) read %d agents, want %d", tt.offset, tt.limit, m.handed, tt.handed)
		}
	}
}

// TestGetByKey: an agent_key the caller may not read answers exactly as an unknown key (404 with
// the same words), so keys of other tenants' private agents cannot be probed.
func TestGetByKey(t *testing.T) {
	ctx := context.Background()
	s, m := newService()
	create(t, s, alice, `{"name":"Private Desk"}`, agents.Flags{})
	pub := create(t, s, alice, `{"name":"Public Desk"}`, agents.Flags{IsPublic: ptr(true)})
	dangling := create(t, s, alice, `{"name":"Gone"}`, agents.Flags{})
	// The agent deleted between the key's read and the agent's: its record goes, its key stays.
	if err := m.Store.DeleteAgent(ctx, &domain.Agent{ID: dangling.ID, AgentKey: "not-" + dangling.AgentKey}); err != nil {
		t.Fatal(err)
	}

	message := func(err error, key string) string {
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.KindNotFound {
			t.Fatalf("%s: %v, want not found", key, err)
		}
		return strings.ReplaceAll(de.Message, `"`+key+`"`, `"<key>"`)
	}
	unknown := message(func() error { _, err := s.GetByKey(ctx, mallory, "no-such-desk"); return err }(), "no-such-desk")
	tests := []struct {
		name, key string
		p         domain.Principal
		found     bool
		reads     bool // whether the store is asked
	}{
		{"own private", "private-desk", alice, true, true},
		{"other company's public", "public-desk", mallory, true, true},
		{"other company's private", "private-desk", mallory, false, true},
		{"colleague's private", "private-desk", carol, false, true},
		{"deleted under the key", "gone", alice, false, true},
		{"empty", "", alice, false, false},
		{"too long", strings.Repeat("k", 129), alice, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := m.Total()
			a, err := s.GetByKey(ctx, tt.p, tt.key)
			if tt.found {
				if err != nil || a.AgentKey != tt.key {
					t.Fatalf("GetByKey = %v, %v", a, err)
				}
			} else if got := message(err, domain.Clip(tt.key, 64)); got != unknown {
				t.Errorf("message %q, want %q as for an unknown key", got, unknown)
			}
			if asked := m.Total() > before; asked != tt.reads {
				t.Errorf("store asked: %t, want %t", asked, tt.reads)
			}
		})
	}
	if a, err := s.GetByKey(ctx, mallory, "public-desk"); err != nil || a.ID != pub.ID {
		t.Errorf("public by key: %v, %v", a, err)
	}
	boom := errors.New("dynamo down")
	m.fail["AgentIDByKey"] = boom
	if _, err := s.GetByKey(ctx, alice, "private-desk"); !errors.Is(err, boom) || domain.KindOf(err) != domain.KindInternal {
		t.Errorf("store failure: %v", err)
	}
}
