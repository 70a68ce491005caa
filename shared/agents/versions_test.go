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

// TestUpdate: PATCH merges into the configuration (null removes a field), PUT replaces it; a
// changed configuration is a new stored version numbered by what changed (agent_type the
// major, capabilities the minor, anything else the patch part), an unchanged one or flags alone
// none; a refused update changes nothing. The steps run in order on one agent.
func TestUpdate(t *testing.T) {
	ctx := context.Background()
	s, m := newService()
	first := create(t, s, alice, supportConfig, agents.Flags{})
	tests := []struct {
		name     string
		cfg      string // "" is no configuration (flags alone)
		merge    bool
		flags    agents.Flags
		version  string // the agent's version_number after the step
		explicit string // the configuration after the step
		versions int    // stored versions after the step
		kind     domain.Kind
		field    string // of a refused step
	}{
		{name: "a prompt is a patch release", cfg: `{"system_prompt":"You help kindly."}`, merge: true, version: "1.0.1", versions: 2,
			explicit: `{"name":"Support Bot","agent_type":"llm_agent","system_prompt":"You help kindly.","llm_config":{"model":"m1","temperature":0.2}}`},
		{name: "the same patch with a flag is no version", cfg: `{"system_prompt":"You help kindly."}`, merge: true, flags: agents.Flags{IsShared: ptr(true)},
			version: "1.0.1", versions: 2,
			explicit: `{"name":"Support Bot","agent_type":"llm_agent","system_prompt":"You help kindly.","llm_config":{"model":"m1","temperature":0.2}}`},
		{name: "flags alone are no version", merge: true, flags: agents.Flags{IsPublic: ptr(true), OriginURL: ptr("https://example.com")},
			version: "1.0.1", versions: 2,
			explicit: `{"name":"Support Bot","agent_type":"llm_agent","system_prompt":"You help kindly.","llm_config":{"model":"m1","temperature":0.2}}`},
		{name: "null removes a field", cfg: `{"system_prompt":null,"llm_config":{"temperature":null}}`, merge: true, version: "1.0.2", versions: 3,
			explicit: `{"name":"Support Bot","agent_type":"llm_agent","llm_config":{"model":"m1"}}`},
		{name: "a tool is a minor release", cfg: `{"tools":["calculator"]}`, merge: true, version: "1.1.0", versions: 4,
			explicit: `{"name":"Support Bot","agent_type":"llm_agent","llm_config":{"model":"m1"},"tools":["calculator"]}`},
		{name: "a rename is a patch release", cfg: `{"name":"Helpdesk"}`, merge: true, version: "1.1.1", versions: 5,
			explicit: `{"name":"Helpdesk","agent_type":"llm_agent","llm_config":{"model":"m1"},"tools":["calculator"]}`},
		{name: "put replaces; agent_type is a major release", cfg: `{"name":"Helpdesk","agent_type":"react_agent","tools":["calculator"]}`,
			version: "2.0.0", versions: 6, explicit: `{"name":"Helpdesk","agent_type":"react_agent","tools":["calculator"]}`},
		{name: "an invalid patch", cfg: `{"llm_config":{"temperature":7}}`, merge: true, kind: domain.KindInvalid, field: "system_config.llm_config.temperature"},
		{name: "an unknown tool", cfg: `{"tools":["teleport"]}`, merge: true, kind: domain.KindInvalid, field: "system_config.tools.0"},
		{name: "a put missing its name", cfg: `{"agent_type":"llm_agent"}`, kind: domain.KindInvalid, field: "system_config.name"},
		{name: "a foreign knowledge base", cfg: withKB("kb-evil"), kind: domain.KindInvalid, field: "system_config.knowledge_bases.0.knowledge_base_id"},
		{name: "a knowledge base is a minor release", cfg: `{"knowledge_bases":[{"name":"docs","knowledge_base_id":"kb-acme"}]}`, merge: true,
			version: "2.1.0", versions: 7,
			explicit: `{"name":"Helpdesk","agent_type":"react_agent","tools":["calculator"],"knowledge_bases":[{"name":"docs","knowledge_base_id":"kb-acme"}]}`},
		{name: "back to the first configuration", cfg: supportConfig, version: "3.0.0", versions: 8, explicit: supportConfig},
	}
	prev := first
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg domain.ConfigDoc // none: change only the flags
			if tt.cfg != "" {
				cfg = doc(t, tt.cfg)
			}
			_, before := m.stored(first.ID)
			a, err := s.Update(ctx, alice, first.ID, agents.UpdateInput{Config: cfg, Merge: tt.merge, Flags: tt.flags})
			stored, vs := m.stored(first.ID)
			if tt.kind != 0 {
				var de *domain.Error
				if a != nil || !errors.As(err, &de) || de.Kind != tt.kind || len(de.Fields) != 1 || de.Fields[0].Field != tt.field {
					t.Fatalf("Update = %v, %v; want a %v error on %s", a, err, tt.kind, tt.field)
				}
				if !cmp.Equal(prev, stored) || len(vs) != len(before) {
					t.Errorf("a refused update changed the agent (-before +after):\n%s", cmp.Diff(prev, stored))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, stored); diff != "" {
				t.Errorf("stored (-returned +stored):\n%s", diff)
			}
			if diff := cmp.Diff(config(t, tt.explicit), a.Explicit); diff != "" {
				t.Errorf("configuration (-want +got):\n%s", diff)
			}
			name, _ := a.Explicit["name"].(string)
			if a.VersionNumber != tt.version || len(vs) != tt.versions || a.Seq != tt.versions || a.Name != name || a.EntryPoint != name ||
				a.Architecture != a.SystemConfig["agent_type"] || a.AgentKey != first.AgentKey || a.ID != first.ID || !a.CreatedAt.Equal(first.CreatedAt) {
				t.Errorf("agent: version %s seq %d (%d stored), name %q entry %q architecture %q key %q; want version %s, %d versions, key %q",
					a.VersionNumber, a.Seq, len(vs), a.Name, a.EntryPoint, a.Architecture, a.AgentKey, tt.version, tt.versions, first.AgentKey)
			}
			if mt := a.SystemConfig["llm_config"].(map[string]any)["max_tokens"]; mt == nil {
				t.Error("max_tokens is not filled in")
			}
			newVersion := len(vs) > len(before)
			if newVersion == (a.ConfigHash == prev.ConfigHash) || newVersion == (a.VersionID == prev.VersionID) {
				t.Errorf("new version %t, but hash %s → %s, version id %s → %s", newVersion, prev.ConfigHash, a.ConfigHash, prev.VersionID, a.VersionID)
			}
			last := vs[len(vs)-1]
			if last.ID != a.VersionID || last.VersionNumber != a.VersionNumber || last.Seq != a.Seq ||
				!cmp.Equal(last.SystemConfig, a.Explicit) || last.Metadata["config_hash"] != a.ConfigHash || last.Metadata["created_by"] != "alice" {
				t.Errorf("last version %+v does not match the agent", last)
			}
			if tt.flags.IsShared != nil && a.IsShared != *tt.flags.IsShared || tt.flags.IsPublic != nil && a.IsPublic != *tt.flags.IsPublic ||
				tt.flags.OriginURL != nil && (a.OriginURL == nil || *a.OriginURL != *tt.flags.OriginURL) {
				t.Errorf("flags not applied: shared %t public %t origin %v", a.IsShared, a.IsPublic, a.OriginURL)
			}
			if a.UpdatedAt.Before(prev.UpdatedAt) {
				t.Errorf("updated_at went back: %v → %v", prev.UpdatedAt, a.UpdatedAt)
			}
			prev = a
		})
	}
	if prev.ConfigHash != first.ConfigHash {
		t.Errorf("the first configuration again has hash %s, first %s", prev.ConfigHash, first.ConfigHash)
	}
	vs, more, err := s.Versions(ctx, alice, first.ID, 0, 100)
	want := []string{"1.0.0", "1.0.1", "1.0.2", "1.1.0", "1.1.1", "2.0.0", "2.1.0", "3.0.0"}
	if diff := cmp.Diff(want, versionNumbers(vs)); diff != "" || more || err != nil {
		t.Errorf("versions (more %t, %v) (-want +got):\n%s", more, err, diff)
	}
	cur, err := s.CurrentVersion(ctx, alice, first.ID)
	if err != nil || cur.VersionNumber != "3.0.0" || cur.ID != prev.VersionID || !cmp.Equal(cur.SystemConfig, config(t, supportConfig)) {
		t.Errorf("current version = %+v, %v", cur, err)
	}
	// The knowledge base check runs for updates naming knowledge bases, and only those.
	if diff := cmp.Diff([][]string{{"kb-evil"}, {"kb-acme"}}, m.kbAsked); diff != "" {
		t.Errorf("KnowledgeBaseOwners calls (-want +got):\n%s", diff)
	}
}

// TestUpdateScopes: an update naming knowledge bases needs knowledge:read; one that leaves them
// as they are stored needs it too when it changes the configuration (the merged configuration
// still names them), but flags alone do not.
func TestUpdateScopes(t *testing.T) {
	ctx := context.Background()
	s, _ := newService()
	a := create(t, s, alice, withKB("kb-acme"), agents.Flags{})
	noKB := domain.Principal{Owner: "alice", Company: "acme", Scopes: []string{domain.ScopeAgentsWrite}}
	if _, err := s.Update(ctx, noKB, a.ID, agents.UpdateInput{Config: domain.ConfigDocOf(map[string]any{"description": "x"}), Merge: true}); domain.KindOf(err) != domain.KindPermission {
		t.Errorf("patch keeping a knowledge base without knowledge:read: %v", err)
	}
	if u, err := s.Update(ctx, noKB, a.ID, agents.UpdateInput{Merge: true, Flags: agents.Flags{IsShared: ptr(true)}}); err != nil || !u.IsShared {
		t.Errorf("flags without knowledge:read: %v, %v", u, err)
	}
	if u, err := s.Update(ctx, noKB, a.ID, agents.UpdateInput{Config: domain.ConfigDocOf(map[string]any{"name": "plain"})}); err != nil || u.VersionNumber != "1.1.0" {
		t.Errorf("put dropping the knowledge base: %v, %v", u, err)
	}
}

// TestUpdateConflict: an update whose agent changed after it was read is refused as a conflict
// and leaves the other write in place.
func TestUpdateConflict(t *testing.T) {
	ctx := context.Background()
	s, m := newService()
	a := create(t, s, alice, supportConfig, agents.Flags{})
	m.beforeUpdate = func() {
		if _, err := s.Update(ctx, alice, a.ID, agents.UpdateInput{Config: domain.ConfigDocOf(map[string]any{"system_prompt": "theirs"}), Merge: true}); err != nil {
			t.Errorf("the other update: %v", err)
		}
	}
	_, err := s.Update(ctx, alice, a.ID, agents.UpdateInput{Config: domain.ConfigDocOf(map[string]any{"system_prompt": "mine"}), Merge: true})
	if domain.KindOf(err) != domain.KindConflict {
		t.Fatalf("Update = %v, want a conflict", err)
	}
	stored, vs := m.stored(a.ID)
	if stored.Explicit["system_prompt"] != "theirs" || len(vs) != 2 || stored.VersionNumber != "1.0.1" {
		t.Errorf("stored prompt %v, %d versions, version %s", stored.Explicit["system_prompt"], len(vs), stored.VersionNumber)
	}
}

// TestVersionPages: the owner's company pages through every version, oldest first; another
// company reading a public agent sees the current version only, never an earlier one.
func TestVersionPages(t *testing.T) {
	ctx := context.Background()
	s, _ := newService()
	a := create(t, s, alice, `{"name":"Helper","system_prompt":"The password is hunter2."}`, agents.Flags{IsPublic: ptr(true)})
	for _, prompt := range []string{"Be helpful.", "Be kind."} {
		if _, err := s.Update(ctx, alice, a.ID, agents.UpdateInput{Config: domain.ConfigDocOf(map[string]any{"system_prompt": prompt}), Merge: true}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		who           string
		p             domain.Principal
		offset, limit int
		want          []string
		more          bool
	}{
		{"owner", alice, 0, 2, []string{"1.0.0", "1.0.1"}, true},
		{"owner", alice, 2, 2, []string{"1.0.2"}, false},
		{"owner", alice, 1, 1, []string{"1.0.1"}, true},
		{"owner", alice, 3, 2, []string{}, false},
		{"colleague", carol, 0, 10, []string{"1.0.0", "1.0.1", "1.0.2"}, false},
		{"other company", mallory, 0, 10, []string{"1.0.2"}, false},
		{"other company", mallory, 0, 1, []string{"1.0.2"}, false},
		{"other company", mallory, 1, 10, []string{}, false},
	}
	for _, tt := range tests {
		vs, more, err := s.Versions(ctx, tt.p, a.ID, tt.offset, tt.limit)
		if err != nil {
			t.Fatalf("%s: %v", tt.who, err)
		}
		if diff := cmp.Diff(tt.want, versionNumbers(vs)); diff != "" || more != tt.more {
			t.Errorf("%s, offset %d limit %d: more %t (-want +got):\n%s", tt.who, tt.offset, tt.limit, more, diff)
		}
		for _, v := range vs {
			if p, _ := v.SystemConfig["system_prompt"].(string); tt.p.Company != a.Company && strings.Contains(p, "hunter2") {
				t.Errorf("%s read an earlier prompt", tt.who)
			}
		}
	}
	cur, err := s.CurrentVersion(ctx, mallory, a.ID)
	if err != nil || cur.VersionNumber != "1.0.2" || cur.SystemConfig["system_prompt"] != "Be kind." {
		t.Errorf("other company's current version = %+v, %v", cur, err)
	}
}

// TestDelete: the owner's delete removes the agent, its versions and its key's claim; a second
// delete finds nothing.
func TestDelete(t *testing.T) {
	ctx := context.Background()
	s, m := newService()
	a := create(t, s, alice, supportConfig, agents.Flags{IsPublic: ptr(true)})
	keep := create(t, s, alice, `{"name":"Keep"}`, agents.Flags{})
	if err := s.Delete(ctx, alice, a.ID); err != nil {
		t.Fatal(err)
	}
	if stored, vs := m.stored(a.ID); stored != nil || len(vs) != 0 {
		t.Errorf("left behind: %v, %d versions", stored, len(vs))
	}
	for name, err := range map[string]error{
		"get":     func() error { _, err := s.Get(ctx, alice, a.ID); return err }(),
		"by key":  func() error { _, err := s.GetByKey(ctx, mallory, a.AgentKey); return err }(),
		"current": func() error { _, err := s.CurrentVersion(ctx, alice, a.ID); return err }(),
		"again":   s.Delete(ctx, alice, a.ID),
	} {
		if domain.KindOf(err) != domain.KindNotFound {
			t.Errorf("%s after delete: %v, want not found", name, err)
		}
	}
	if list, _, err := s.List(ctx, alice, 0, 10); err != nil || len(list) != 1 || list[0].ID != keep.ID {
		t.Errorf("list after delete: %v, %v", list, err)
	}
}

// TestStoreFailures: a store's failure is an internal error wrapping it, never a not-found or
// a refusal, and a failed write leaves the agent as it was.
func TestStoreFailures(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("dynamo down")
	tests := []struct {
		method string
		call   func(s *agents.Service, id string) error
	}{
		{"GetAgent", func(s *agents.Service, id string) error { _, err := s.Get(ctx, alice, id); return err }},
		{"ListAgents", func(s *agents.Service, _ string) error { _, _, err := s.List(ctx, alice, 0, 10); return err }},
		{"GetVersion", func(s *agents.Service, id string) error { _, err := s.CurrentVersion(ctx, alice, id); return err }},
		{"GetVersion", func(s *agents.Service, id string) error { _, _, err := s.Versions(ctx, mallory, id, 0, 10); return err }},
		{"ListVersions", func(s *agents.Service, id string) error { _, _, err := s.Versions(ctx, alice, id, 0, 10); return err }},
		{"UpdateAgent", func(s *agents.Service, id string) error {
			_, err := s.Update(ctx, alice, id, agents.UpdateInput{Config: domain.ConfigDocOf(map[string]any{"system_prompt": "x"}), Merge: true})
			return err
		}},
		{"DeleteAgent", func(s *agents.Service, id string) error { return s.Delete(ctx, alice, id) }},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			s, m := newService()
			a := create(t, s, alice, supportConfig, agents.Flags{IsPublic: ptr(true)})
			m.fail[tt.method] = boom
			err := tt.call(s, a.ID)
			if !errors.Is(err, boom) || domain.KindOf(err) != domain.KindInternal {
				t.Errorf("err = %v, want an internal error wrapping the store's", err)
			}
			if stored, vs := m.stored(a.ID); !cmp.Equal(a, stored) || len(vs) != 1 {
				t.Errorf("the agent changed: %d versions (-before +after):\n%s", len(vs), cmp.Diff(a, stored))
			}
		})
	}
}
