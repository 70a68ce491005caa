package agentstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/domain"
)

// StoreSuite pins the contract of agents.Store: what reads back, the not-found and conflict
// errors with their kinds, agent_key claims, versions by number, lists newest first within one
// company, deletes. newStore may hand every subtest the same store: each subtest makes its own
// ids, keys and companies.
func StoreSuite(t *testing.T, newStore func(t *testing.T) agents.Store) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, agents.Store)
	}{
		{"CreateReadsBack", createReadsBack},
		{"NotFound", notFound},
		{"AgentKeyClaimedOnce", agentKeyClaimedOnce},
		{"AgentIDCreatedOnce", agentIDCreatedOnce},
		{"UpdateIsConditional", updateIsConditional},
		{"ListNewestFirstWithinCompany", listNewestFirstWithinCompany},
		{"VersionPages", versionPages},
		{"Delete", deleteAgent},
		{"KnowledgeBaseOwnersOfUnknownIDs", knowledgeBaseOwnersOfUnknownIDs},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)

// newAgent is a first version's agent of company created at at, and that version.
func newAgent(company string, at time.Time) (*domain.Agent, *domain.AgentVersion) {
	id := uuid.NewString()
	url := "https://example.com/" + id
	cfg := map[string]any{"name": "agent " + id, "temperature": json.Number("0.5"), "tools": []any{"calculator", json.Number("7")},
		"nested": map[string]any{"on": true, "off": nil}}
	a := &domain.Agent{ID: id, AgentKey: "agent-" + id, Name: "agent " + id, Architecture: "single", EntryPoint: "main",
		IsShared: true, OriginURL: &url, Owner: "owner-" + company, Company: company, SystemConfig: cfg,
		VersionNumber: "1.0.0", ConfigHash: "0123456789abcdef", CreatedAt: at, UpdatedAt: at,
		VersionID: uuid.NewString(), Explicit: map[string]any{"name": "agent " + id}, Seq: 1}
	return a, version(a, 1)
}

// version is version seq of a, its configuration's JSON with the top-level keys in reverse order
// (as a client may write them), which a store keeps.
func version(a *domain.Agent, seq int) *domain.AgentVersion {
	cfg := domain.DeepCopy(a.SystemConfig)
	keys := slices.Sorted(maps.Keys(cfg))
	slices.Reverse(keys)
	members := make([]string, len(keys))
	for i, k := range keys {
		key, _ := json.Marshal(k)
		val, _ := json.Marshal(cfg[k])
		members[i] = string(key) + ":" + string(val)
	}
	ordered, err := domain.ConfigDocJSON(cfg, []byte("{"+strings.Join(members, ",")+"}")).OrderedJSON()
	if err != nil {
		panic(err)
	}
	return &domain.AgentVersion{ID: uuid.NewString(), AgentID: a.ID, VersionNumber: fmt.Sprintf("1.0.%d", seq-1), Seq: seq,
		SystemConfig: cfg, SystemConfigJSON: ordered, Metadata: map[string]any{"seq": json.Number(fmt.Sprint(seq))},
		CreatedAt: a.CreatedAt.Add(time.Duration(seq) * time.Second)}
}

func company() string { return "co-" + uuid.NewString()[:8] }

func create(t *testing.T, st agents.Store, a *domain.Agent, v *domain.AgentVersion) {
	t.Helper()
	if err := st.CreateAgent(context.Background(), a, v); err != nil {
		t.Fatalf("create agent %s: %v", a.ID, err)
	}
}

func wantKind(t *testing.T, what string, err error, want domain.Kind) {
	t.Helper()
	if got := domain.KindOf(err); err == nil || got != want {
		t.Errorf("%s: %v (kind %v), want kind %v", what, err, got, want)
	}
}

func createReadsBack(t *testing.T, st agents.Store) {
	ctx := context.Background()
	a, v := newAgent(company(), t0)
	want, wantV := cloneAgent(a), cloneVersion(v)
	create(t, st, a, v)
	a.Name, a.SystemConfig["name"], v.Metadata["seq"] = "changed", "changed", "changed" // the store keeps its own copy
	got, err := st.GetAgent(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("GetAgent (-created +read):\n%s", d)
	}
	got.SystemConfig["name"] = "changed by a reader"
	if again, _ := st.GetAgent(ctx, want.ID); again == nil || again.SystemConfig["name"] != want.SystemConfig["name"] {
		t.Errorf("a reader's change reached the store: %v", again)
	}
	gotV, err := st.GetVersion(ctx, want.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(wantV, gotV); d != "" {
		t.Errorf("GetVersion (-created +read):\n%s", d)
	}
	id, err := st.AgentIDByKey(ctx, want.AgentKey)
	if err != nil || id != want.ID {
		t.Errorf("AgentIDByKey(%s) = %q, %v; want %s", want.AgentKey, id, err, want.ID)
	}
}

func notFound(t *testing.T, st agents.Store) {
	ctx := context.Background()
	missing := uuid.NewString()
	_, err := st.GetAgent(ctx, missing)
	wantKind(t, "GetAgent of a missing agent", err, domain.KindNotFound)
	_, err = st.AgentIDByKey(ctx, "agent-"+missing)
	wantKind(t, "AgentIDByKey of an unclaimed key", err, domain.KindNotFound)
	_, err = st.GetVersion(ctx, missing, 1)
	wantKind(t, "GetVersion of a missing agent", err, domain.KindNotFound)
	a, v := newAgent(company(), t0)
	create(t, st, a, v)
	_, err = st.GetVersion(ctx, a.ID, 2)
	wantKind(t, "GetVersion past the last", err, domain.KindNotFound)
	gone, _ := newAgent(a.Company, t0)
	wantKind(t, "DeleteAgent of a missing agent", st.DeleteAgent(ctx, gone), domain.KindNotFound)
	vs, more, err := st.ListVersions(ctx, missing, 0, 10)
	if err != nil || len(vs) != 0 || more {
		t.Errorf("ListVersions of a missing agent: %d versions, more %v, %v; want none", len(vs), more, err)
	}
}

func agentKeyClaimedOnce(t *testing.T, st agents.Store) {
	ctx := context.Background()
	a, v := newAgent(company(), t0)
	create(t, st, a, v)
	// The key is unique across the service: another company's agent cannot claim it either.
	b, bv := newAgent(company(), t0)
	b.AgentKey = a.AgentKey
	err := st.CreateAgent(ctx, b, bv)
	if !errors.Is(err, domain.ErrAgentKeyTaken) {
		t.Fatalf("CreateAgent with a taken key: %v, want ErrAgentKeyTaken", err)
	}
	_, err = st.GetAgent(ctx, b.ID)
	wantKind(t, "the agent refused its key", err, domain.KindNotFound)
	_, err = st.GetVersion(ctx, b.ID, 1)
	wantKind(t, "the version of the agent refused its key", err, domain.KindNotFound)
	if id, _ := st.AgentIDByKey(ctx, a.AgentKey); id != a.ID {
		t.Errorf("the key now names %q, want its first agent %s", id, a.ID)
	}
}

func agentIDCreatedOnce(t *testing.T, st agents.Store) {
	ctx := context.Background()
	a, v := newAgent(company(), t0)
	create(t, st, a, v)
	again, againV := newAgent(a.Company, t0)
	again.ID, againV.AgentID, againV.ID = a.ID, a.ID, uuid.NewString()
	err := st.CreateAgent(ctx, again, againV)
	wantKind(t, "CreateAgent of an id stored", err, domain.KindConflict)
	if errors.Is(err, domain.ErrAgentKeyTaken) {
		t.Errorf("CreateAgent of an id stored under a free key: %v, want a conflict that is not ErrAgentKeyTaken", err)
	}
	// Nothing of the refused create is written: its key stays free, the first agent unchanged.
	_, err = st.AgentIDByKey(ctx, again.AgentKey)
	wantKind(t, "the key of the refused create", err, domain.KindNotFound)
	if got, _ := st.GetAgent(ctx, a.ID); got == nil || got.AgentKey != a.AgentKey {
		t.Errorf("the first agent became %+v", got)
	}
	if got, _ := st.GetVersion(ctx, a.ID, 1); got == nil || got.ID != v.ID {
		t.Errorf("the first version became %+v", got)
	}
}

func updateIsConditional(t *testing.T, st agents.Store) {
	ctx := context.Background()
	a, v := newAgent(company(), t0)
	create(t, st, a, v)

	// With the version read: the record and the new version.
	next := cloneAgent(a)
	next.Seq, next.Name, next.UpdatedAt = 2, "renamed", t0.Add(time.Minute)
	v2 := version(next, 2)
	if err := st.UpdateAgent(ctx, next, v2, 1); err != nil {
		t.Fatalf("UpdateAgent with the seq read: %v", err)
	}
	if got, _ := st.GetAgent(ctx, a.ID); got == nil || got.Name != "renamed" || got.Seq != 2 {
		t.Errorf("after the update: %+v", got)
	}
	if got, err := st.GetVersion(ctx, a.ID, 2); err != nil || got.ID != v2.ID {
		t.Errorf("version 2: %+v, %v", got, err)
	}

	// With a seq another write has moved on from: nothing changes.
	stale := cloneAgent(next)
	stale.Seq, stale.Name = 3, "stale"
	wantKind(t, "UpdateAgent with a stale seq", st.UpdateAgent(ctx, stale, version(stale, 3), 1), domain.KindConflict)
	wantKind(t, "UpdateAgent with a stale seq and no version", st.UpdateAgent(ctx, stale, nil, 1), domain.KindConflict)
	// A version number already written: the agent is left as it was too.
	dup := cloneAgent(next)
	dup.Name = "dup"
	wantKind(t, "UpdateAgent adding a version number stored", st.UpdateAgent(ctx, dup, version(dup, 2), 2), domain.KindConflict)
	if got, _ := st.GetAgent(ctx, a.ID); got == nil || got.Name != "renamed" {
		t.Errorf("a refused update changed the agent: %+v", got)
	}
	if _, err := st.GetVersion(ctx, a.ID, 3); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused update stored version 3: %v", err)
	}

	// Without a version (flags only): the record alone.
	flags := cloneAgent(next)
	flags.IsPublic = true
	if err := st.UpdateAgent(ctx, flags, nil, 2); err != nil {
		t.Fatalf("UpdateAgent without a version: %v", err)
	}
	if got, _ := st.GetAgent(ctx, a.ID); got == nil || !got.IsPublic || got.Seq != 2 {
		t.Errorf("after the flags update: %+v", got)
	}
	if vs, more, _ := st.ListVersions(ctx, a.ID, 0, 10); len(vs) != 2 || more {
		t.Errorf("%d versions after the updates (more %v), want 2", len(vs), more)
	}

	// An agent that is not stored: the condition fails as for a stale seq.
	missing, _ := newAgent(a.Company, t0)
	wantKind(t, "UpdateAgent of a missing agent", st.UpdateAgent(ctx, missing, nil, 1), domain.KindConflict)
	wantKind(t, "UpdateAgent of a missing agent with a version", st.UpdateAgent(ctx, missing, version(missing, 2), 1), domain.KindConflict)
	if _, err := st.GetAgent(ctx, missing.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused update created the agent: %v", err)
	}
}

func listNewestFirstWithinCompany(t *testing.T, st agents.Store) {
	ctx := context.Background()
	co, other := company(), company()
	var made []*domain.Agent
	// Created out of the order of their times; two share a time (then the id decides, descending).
	for _, at := range []time.Time{t0.Add(2 * time.Second), t0, t0.Add(time.Second), t0.Add(time.Second), t0.Add(time.Millisecond)} {
		a, v := newAgent(co, at)
		create(t, st, a, v)
		made = append(made, a)
	}
	o, ov := newAgent(other, t0.Add(time.Hour))
	create(t, st, o, ov)

	// Newest first; of the two made at t0+1s, the greater id first.
	first, second := made[2].ID, made[3].ID
	if first < second {
		first, second = second, first
	}
	want := []string{made[0].ID, first, second, made[4].ID, made[1].ID}
	var got []string
	if err := st.ListAgents(ctx, co, func(a *domain.Agent) bool { got = append(got, a.ID); return true }); err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("ListAgents order (-want +got):\n%s", d)
	}
	got = nil
	if err := st.ListAgents(ctx, co, func(a *domain.Agent) bool { got = append(got, a.ID); return len(got) < 2 }); err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(want[:2], got); d != "" {
		t.Errorf("ListAgents stopped after 2 (-want +got):\n%s", d)
	}
	got = nil
	if err := st.ListAgents(ctx, company(), func(a *domain.Agent) bool { got = append(got, a.ID); return true }); err != nil || len(got) != 0 {
		t.Errorf("ListAgents of a company without agents: %v, %v", got, err)
	}
}

func versionPages(t *testing.T, st agents.Store) {
	ctx := context.Background()
	a, v := newAgent(company(), t0)
	create(t, st, a, v)
	for seq := 2; seq <= 5; seq++ {
		next := cloneAgent(a)
		next.Seq = seq
		if err := st.UpdateAgent(ctx, next, version(next, seq), seq-1); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		offset, limit int
		want          []int
		more          bool
	}{
		{0, 2, []int{1, 2}, true},
		{2, 2, []int{3, 4}, true},
		{4, 2, []int{5}, false},
		{3, 2, []int{4, 5}, false},
		{0, 5, []int{1, 2, 3, 4, 5}, false},
		{0, 100, []int{1, 2, 3, 4, 5}, false},
		{5, 2, []int{}, false},
		{1000, 2, []int{}, false},
	} {
		vs, more, err := st.ListVersions(ctx, a.ID, tt.offset, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		got := []int{}
		for _, v := range vs {
			got = append(got, v.Seq)
			if v.AgentID != a.ID {
				t.Errorf("version %d of agent %s", v.Seq, v.AgentID)
			}
		}
		if d := gocmp.Diff(tt.want, got); d != "" || more != tt.more {
			t.Errorf("ListVersions(%d, %d): more %v, want %v; seqs (-want +got):\n%s", tt.offset, tt.limit, more, tt.more, d)
		}
	}
}

func deleteAgent(t *testing.T, st agents.Store) {
	ctx := context.Background()
	a, v := newAgent(company(), t0)
	create(t, st, a, v)
	next := cloneAgent(a)
	next.Seq = 2
	if err := st.UpdateAgent(ctx, next, version(next, 2), 1); err != nil {
		t.Fatal(err)
	}
	keep, keepV := newAgent(a.Company, t0)
	create(t, st, keep, keepV)
	if err := st.DeleteAgent(ctx, next); err != nil {
		t.Fatalf("DeleteAgent: %v", err)
	}
	_, err := st.GetAgent(ctx, a.ID)
	wantKind(t, "GetAgent after the delete", err, domain.KindNotFound)
	_, err = st.AgentIDByKey(ctx, a.AgentKey)
	wantKind(t, "AgentIDByKey after the delete", err, domain.KindNotFound)
	for seq := 1; seq <= 2; seq++ {
		_, err = st.GetVersion(ctx, a.ID, seq)
		wantKind(t, fmt.Sprintf("GetVersion %d after the delete", seq), err, domain.KindNotFound)
	}
	if vs, more, err := st.ListVersions(ctx, a.ID, 0, 10); err != nil || len(vs) != 0 || more {
		t.Errorf("ListVersions after the delete: %d, more %v, %v", len(vs), more, err)
	}
	var listed []string
	_ = st.ListAgents(ctx, a.Company, func(x *domain.Agent) bool { listed = append(listed, x.ID); return true })
	if d := gocmp.Diff([]string{keep.ID}, listed); d != "" {
		t.Errorf("ListAgents after the delete (-want +got):\n%s", d)
	}
	wantKind(t, "DeleteAgent a second time", st.DeleteAgent(ctx, next), domain.KindNotFound)
	// The key is free again.
	b, bv := newAgent(a.Company, t0)
	b.AgentKey = a.AgentKey
	if err := st.CreateAgent(ctx, b, bv); err != nil {
		t.Errorf("CreateAgent with the deleted agent's key: %v", err)
	}
}

func knowledgeBaseOwnersOfUnknownIDs(t *testing.T, st agents.Store) {
	for _, ids := range [][]string{nil, {uuid.NewString(), uuid.NewString()}} {
		owners, err := st.KnowledgeBaseOwners(context.Background(), ids)
		if err != nil || len(owners) != 0 {
			t.Errorf("KnowledgeBaseOwners(%v) = %v, %v; want none", ids, owners, err)
		}
	}
}
