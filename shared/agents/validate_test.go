package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
)

const (
	supportConfig = `{"name":"Support Bot","agent_type":"llm_agent","system_prompt":"You help.","llm_config":{"model":"m1","temperature":0.2}}`
	// graphWithKB names a knowledge base in its second node; %s is the knowledge base id.
	graphWithKB = `{"name":"g","agents":[{"name":"plain"},{"name":"kb","knowledge_bases":[{"name":"docs","knowledge_base_id":"%s"}]}],` +
		`"edges":[{"from":"__start__","to":"plain"},{"from":"plain","to":"kb"},{"from":"kb","to":"__end__"}]}`
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// withKB is a flat configuration naming the knowledge base id.
func withKB(id string) string {
	return `{"name":"a","knowledge_bases":[{"name":"docs","knowledge_base_id":"` + id + `"}]}`
}

// newService is the service over a fresh fake store holding knowledge base kb-acme of acme
// and kb-evil of evil.
func newService() (*agents.Service, *memStore) {
	m := newMemStore()
	m.SetKnowledgeBase("kb-acme", "acme")
	m.SetKnowledgeBase("kb-evil", "evil")
	return agents.NewService(m, tools).WithAudit(audit.New(audittest.NewStore())), m
}

func fieldsOf(errs []domain.FieldError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

// TestValidate: Validate answers field errors by dotted path (under no prefix), checks tools
// against the deployment's and knowledge bases through the store in one call (only when the
// configuration names any), and refuses a caller without knowledge:read a configuration
// naming knowledge bases before asking the store anything.
func TestValidate(t *testing.T) {
	kbScoped := domain.Principal{Owner: "alice", Company: "acme", Scopes: []string{domain.ScopeAgentsWrite, domain.ScopeKnowledgeRead}}
	noKBScope := domain.Principal{Owner: "alice", Company: "acme", Scopes: []string{domain.ScopeAgentsWrite}}
	tests := []struct {
		name   string
		p      domain.Principal
		cfg    string
		fields []string
		kind   domain.Kind // of the error, when one is wanted
		asked  [][]string  // the ids of each KnowledgeBaseOwners call
	}{
		{name: "valid flat", p: alice, cfg: supportConfig},
		{name: "valid react with tools", p: alice, cfg: `{"name":"a","agent_type":"react_agent","tools":["calculator","current_time"],"llm_config":{"max_tokens":300}}`},
		{name: "bad fields", p: alice, cfg: `{"agent_type":"robot","llm_config":{"temperature":3,"max_tokens":"many"},"tools":[1]}`,
			fields: []string{"name", "agent_type", "llm_config.temperature", "llm_config.max_tokens", "tools.0"}},
		{name: "unknown tool", p: alice, cfg: `{"name":"toolbot","agent_type":"react_agent","tools":["calculator","teleport"]}`, fields: []string{"tools.1"}},
		{name: "zero-width name", p: alice, cfg: `{"name":"\u200b\u200c\u200d\ufeff"}`, fields: []string{"name"}},
		{name: "too large", p: alice, cfg: `{"name":"x","notes":"` + strings.Repeat("n", domain.MaxConfigBytes) + `"}`, fields: []string{"config"}},
		{name: "own knowledge base", p: alice, cfg: withKB("kb-acme"), asked: [][]string{{"kb-acme"}}},
		{name: "another company's knowledge base", p: alice, cfg: withKB("kb-evil"),
			fields: []string{"knowledge_bases.0.knowledge_base_id"}, asked: [][]string{{"kb-evil"}}},
		{name: "unknown knowledge base", p: alice, cfg: withKB("kb-none"),
			fields: []string{"knowledge_bases.0.knowledge_base_id"}, asked: [][]string{{"kb-none"}}},
		{name: "knowledge base of a graph node", p: mallory, cfg: strings.Replace(graphWithKB, "%s", "kb-acme", 1),
			fields: []string{"agents.1.knowledge_bases.0.knowledge_base_id"}, asked: [][]string{{"kb-acme"}}},
		{name: "knowledge base with knowledge:read", p: kbScoped, cfg: withKB("kb-acme"), asked: [][]string{{"kb-acme"}}},
		{name: "knowledge base without knowledge:read", p: noKBScope, cfg: withKB("kb-acme"), kind: domain.KindPermission},
		{name: "graph knowledge base without knowledge:read", p: noKBScope, cfg: strings.Replace(graphWithKB, "%s", "kb-acme", 1), kind: domain.KindPermission},
		{name: "field errors before scopes", p: noKBScope, cfg: `{"knowledge_bases":[{"name":"docs","knowledge_base_id":"kb-acme"}]}`, fields: []string{"name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := newService()
			errs, err := s.Validate(context.Background(), tt.p, doc(t, tt.cfg), "")
			if tt.kind != 0 {
				if domain.KindOf(err) != tt.kind {
					t.Fatalf("err = %v (kind %v), want kind %v", err, domain.KindOf(err), tt.kind)
				}
				if tt.kind == domain.KindPermission && domain.MessageOf(err) != domain.MsgNoPermission {
					t.Errorf("message %q", domain.MessageOf(err))
				}
			} else if err != nil {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tt.fields, fieldsOf(errs)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.asked, m.kbAsked); diff != "" {
				t.Errorf("KnowledgeBaseOwners calls (-want +got):\n%s", diff)
			}
			if n := m.Total() - m.Calls("KnowledgeBaseOwners"); n != 0 {
				t.Errorf("Validate made %d other store calls", n)
			}
		})
	}
}

// TestValidateHidesForeignKnowledgeBases: another company's knowledge base is refused with the
// words an unknown one gets, so ids cannot be probed; a failing store is an error, not a field.
func TestValidateHidesForeignKnowledgeBases(t *testing.T) {
	s, m := newService()
	ctx := context.Background()
	msg := func(id string) string {
		errs, err := s.Validate(ctx, alice, doc(t, withKB(id)), "")
		if err != nil || len(errs) != 1 {
			t.Fatalf("%s: %v %v", id, errs, err)
		}
		return strings.ReplaceAll(errs[0].Message, id, "<id>")
	}
	if foreign, unknown := msg("kb-evil"), msg("kb-gone"); foreign != unknown {
		t.Errorf("foreign %q, unknown %q: want the same words", foreign, unknown)
	}
	boom := errors.New("dynamo down")
	m.fail["KnowledgeBaseOwners"] = boom
	errs, err := s.Validate(ctx, alice, doc(t, withKB("kb-acme")), "")
	if !errors.Is(err, boom) || errs != nil || domain.KindOf(err) != domain.KindInternal {
		t.Errorf("store failure: errs %v, err %v", errs, err)
	}
}

// TestCreateRefusesBadConfig: what Create refuses is an invalid-request error naming the field
// under system_config (the first in the message), or a permission error, and stores nothing.
func TestCreateRefusesBadConfig(t *testing.T) {
	noKBScope := domain.Principal{Owner: "alice", Company: "acme", Scopes: []string{domain.ScopeAgentsWrite}}
	tests := []struct {
		name   string
		p      domain.Principal
		cfg    string
		kind   domain.Kind
		fields []string
	}{
		{"missing name", alice, `{"agent_type":"llm_agent"}`, domain.KindInvalid, []string{"system_config.name"}},
		{"unknown agent_type", alice, `{"name":"a","agent_type":"robot"}`, domain.KindInvalid, []string{"system_config.agent_type"}},
		{"wrong field types", alice, `{"name":"a","llm_config":{"temperature":"hot","max_tokens":-1},"tools":"calc"}`, domain.KindInvalid,
			[]string{"system_config.llm_config.temperature", "system_config.llm_config.max_tokens", "system_config.tools"}},
		{"temperature out of range", alice, `{"name":"a","llm_config":{"temperature":5}}`, domain.KindInvalid, []string{"system_config.llm_config.temperature"}},
		{"too large to store", alice, `{"name":"x","notes":"` + strings.Repeat("n", 300<<10) + `"}`, domain.KindInvalid, []string{"system_config"}},
		{"zero-width name", alice, `{"name":"\u200b\u200c\u200d\ufeff"}`, domain.KindInvalid, []string{"system_config.name"}},
		{"unknown tool", alice, `{"name":"toolbot","agent_type":"react_agent","tools":["calculator","teleport"]}`, domain.KindInvalid, []string{"system_config.tools.1"}},
		{"foreign knowledge base", alice, withKB("kb-evil"), domain.KindInvalid, []string{"system_config.knowledge_bases.0.knowledge_base_id"}},
		{"knowledge base without knowledge:read", noKBScope, withKB("kb-acme"), domain.KindPermission, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := newService()
			a, err := s.Create(context.Background(), tt.p, agents.CreateInput{Config: doc(t, tt.cfg), Flags: agents.Flags{IsPublic: ptr(true)}})
			if a != nil || domain.KindOf(err) != tt.kind {
				t.Fatalf("Create = %v, %v; want a %v error", a, err, tt.kind)
			}
			var de *domain.Error
			errors.As(err, &de)
			if diff := cmp.Diff(tt.fields, fieldsOf(de.Fields)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if len(tt.fields) > 0 && !strings.HasPrefix(de.Message, tt.fields[0]+": ") {
				t.Errorf("message %q does not start with the field", de.Message)
			}
			if n := m.Calls("CreateAgent"); n != 0 || m.Len() != 0 {
				t.Errorf("stored: %d CreateAgent calls, %d agents", n, m.Len())
			}
		})
	}
}

// TestCreate: a new agent takes its owner and company from the caller, its name, architecture
// and entry point from the configuration, version 1.0.0, and is stored with a first version
// holding the configuration exactly as sent (the agent's system_config adds the defaults).
func TestCreate(t *testing.T) {
	s, m := newService()
	before := time.Now()
	cfg := doc(t, supportConfig)
	a, err := s.Create(context.Background(), alice, agents.CreateInput{Config: cfg, Flags: agents.Flags{IsShared: ptr(true), OriginURL: ptr("https://example.com/a")}})
	if err != nil {
		t.Fatal(err)
	}
	want := &domain.Agent{
		ID: a.ID, AgentKey: "support-bot", Name: "Support Bot", Architecture: "llm_agent", EntryPoint: "Support Bot",
		IsShared: true, OriginURL: ptr("https://example.com/a"), Owner: "alice", Company: "acme",
		SystemConfig:  config(t, `{"name":"Support Bot","agent_type":"llm_agent","system_prompt":"You help.","llm_config":{"model":"m1","temperature":0.2,"max_tokens":4096}}`),
		VersionNumber: "1.0.0", ConfigHash: a.ConfigHash, CreatedAt: a.CreatedAt, UpdatedAt: a.CreatedAt,
		VersionID: a.VersionID, Explicit: config(t, supportConfig), Seq: 1,
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("agent (-want +got):\n%s", diff)
	}
	if !uuidRE.MatchString(a.ID) || !uuidRE.MatchString(a.VersionID) || a.ID == a.VersionID {
		t.Errorf("ids %q, version %q", a.ID, a.VersionID)
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(a.ConfigHash) {
		t.Errorf("config_hash %q", a.ConfigHash)
	}
	if a.CreatedAt.Location() != time.UTC || a.CreatedAt.Before(before.Add(-time.Second)) || a.CreatedAt.After(time.Now()) {
		t.Errorf("created_at %v is not now in UTC", a.CreatedAt)
	}
	stored, vs := m.stored(a.ID)
	if diff := cmp.Diff(a, stored); diff != "" {
		t.Errorf("stored agent (-returned +stored):\n%s", diff)
	}
	wantV := []*domain.AgentVersion{{
		ID: a.VersionID, AgentID: a.ID, VersionNumber: "1.0.0", Seq: 1, SystemConfig: config(t, supportConfig), CreatedAt: a.CreatedAt,
		Metadata:         map[string]any{"config_hash": a.ConfigHash, "created_by": "alice", "created_at": a.CreatedAt.Format(time.RFC3339)},
		SystemConfigJSON: json.RawMessage(supportConfig), // the keys in the order sent, not sorted
	}}
	if diff := cmp.Diff(wantV, vs); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}

	// The architecture defaults to llm_agent; an entry_point is kept as given.
	b, err := s.Create(context.Background(), alice, agents.CreateInput{Config: doc(t, `{"name":"Plain","entry_point":"start"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if b.Architecture != "llm_agent" || b.EntryPoint != "start" || b.IsPublic || b.IsShared || b.OriginURL != nil {
		t.Errorf("defaults: architecture %q, entry point %q, public %t, shared %t, origin %v", b.Architecture, b.EntryPoint, b.IsPublic, b.IsShared, b.OriginURL)
	}
	if _, ok := b.Explicit["agent_type"]; ok {
		t.Error("the default agent_type leaked into the explicit configuration")
	}
}

// TestAgentKeys: agent_key is the name transliterated; a taken key gets six random characters,
// never a count, whichever company took it; a deleted agent frees its key.
func TestAgentKeys(t *testing.T) {
	ctx := context.Background()
	s, m := newService()
	for _, tt := range []struct{ name, want string }{
		{"Support Bot", "support-bot"}, {"Ünïcödé Bot", "unicode-bot"}, {"Straße Ærø", "strasse-aero"},
		{"助手", "agent"}, {"Robot 🤖", "robot"},
	} {
		a, err := s.Create(ctx, alice, agents.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": tt.name})})
		if err != nil || a.AgentKey != tt.want || a.Name != tt.name {
			t.Errorf("%q: %v, key %q name %q; want key %q", tt.name, err, a.AgentKey, a.Name, tt.want)
		}
	}
	suffixed := regexp.MustCompile(`^support-bot-[a-z0-9]{6}$`)
	seen := map[string]bool{}
	var last *domain.Agent
	for _, p := range []domain.Principal{mallory, mallory, alice} {
		a, err := s.Create(ctx, p, agents.CreateInput{Config: doc(t, supportConfig)})
		if err != nil {
			t.Fatal(err)
		}
		if !suffixed.MatchString(a.AgentKey) || seen[a.AgentKey] {
			t.Errorf("key of a taken name = %q, want support-bot- and six random characters, each once", a.AgentKey)
		}
		seen[a.AgentKey] = true
		last = a
	}
	if got, err := s.GetByKey(ctx, alice, last.AgentKey); err != nil || got.ID != last.ID {
		t.Errorf("GetByKey(%s) = %v, %v", last.AgentKey, got, err)
	}

	first, err := m.AgentIDByKey(ctx, "support-bot")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, alice, first); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Create(ctx, mallory, agents.CreateInput{Config: doc(t, supportConfig)}); err != nil || a.AgentKey != "support-bot" {
		t.Errorf("key after delete: %v, %v", a, err)
	}
}

// TestCreateGivesUpOnKeys: ten taken keys in a row end the search with an error and nothing
// stored; a store failure other than a taken key is not retried.
func TestCreateGivesUpOnKeys(t *testing.T) {
	ctx := context.Background()
	s, m := newService()
	m.keyTaken = func(string) bool { return true }
	if a, err := s.Create(ctx, alice, agents.CreateInput{Config: doc(t, supportConfig)}); err == nil || domain.KindOf(err) != domain.KindInternal {
		t.Errorf("every key taken: %v, %v", a, err)
	}
	if n := m.Calls("CreateAgent"); n != 10 || m.Len() != 0 {
		t.Errorf("%d attempts, %d agents stored; want 10, 0", n, m.Len())
	}

	s, m = newService()
	boom := errors.New("throttled")
	m.fail["CreateAgent"] = boom
	if _, err := s.Create(ctx, alice, agents.CreateInput{Config: doc(t, supportConfig)}); !errors.Is(err, boom) {
		t.Errorf("store failure: %v", err)
	}
	if n := m.Calls("CreateAgent"); n != 1 {
		t.Errorf("a failure was retried: %d attempts", n)
	}
}
