package agents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/domain"
)

// memStore is an in-memory agents.Store with the DynamoDB adapter's conditions: an agent_key is
// claimed once (until its agent is deleted), an update applies only while the agent's Seq is
// still the one read, and versions are numbered 1, 2, 3 … without gaps. Records are copied in
// and out, so callers never share memory with what is stored. Every call is counted by method
// name; fail makes a method return an error instead. shared/dynamo's own tests check the
// adapter against DynamoDB Local.
type memStore struct {
	mu       sync.Mutex
	agents   map[string]*domain.Agent
	order    []string // agent ids, oldest first
	versions map[string][]*domain.AgentVersion
	keys     map[string]string // agent_key → agent id
	kbs      map[string]string // knowledge base id → its company
	calls    map[string]int
	kbAsked  [][]string // the ids of each KnowledgeBaseOwners call
	handed   int        // agents ListAgents handed to its callback
	fail     map[string]error
	// keyTaken refuses claims of keys beyond those stored (a key claimed elsewhere).
	keyTaken func(key string) bool
	// beforeUpdate, when set, runs once (without the lock) as UpdateAgent starts: another
	// request's write landing between the service's read and its own write.
	beforeUpdate func()
}

var _ agents.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{agents: map[string]*domain.Agent{}, versions: map[string][]*domain.AgentVersion{},
		keys: map[string]string{}, kbs: map[string]string{}, calls: map[string]int{}, fail: map[string]error{}}
}

// called counts a call and returns the error the test set for it, if any. m.mu is held.
func (m *memStore) called(name string) error {
	m.calls[name]++
	return m.fail[name]
}

// Calls returns how often method name was called.
func (m *memStore) Calls(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[name]
}

// Total returns every call so far.
func (m *memStore) Total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.calls {
		n += c
	}
	return n
}

func (m *memStore) CreateAgent(_ context.Context, a *domain.Agent, v *domain.AgentVersion) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.called("CreateAgent"); err != nil {
		return err
	}
	if _, taken := m.keys[a.AgentKey]; taken || m.keyTaken != nil && m.keyTaken(a.AgentKey) {
		return &domain.Error{Kind: domain.KindConflict, Message: "agent_key taken", Err: domain.ErrAgentKeyTaken}
	}
	if _, ok := m.agents[a.ID]; ok {
		return domain.ErrConflict
	}
	if v.AgentID != a.ID || v.Seq != 1 || a.Seq != 1 {
		return fmt.Errorf("fake: first version %s seq %d of agent %s seq %d", v.AgentID, v.Seq, a.ID, a.Seq)
	}
	m.keys[a.AgentKey] = a.ID
	m.agents[a.ID] = cloneAgent(a)
	m.order = append(m.order, a.ID)
	m.versions[a.ID] = []*domain.AgentVersion{cloneVersion(v)}
	return nil
}

func (m *memStore) GetAgent(_ context.Context, id string) (*domain.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.called("GetAgent"); err != nil {
		return nil, err
	}
	a, ok := m.agents[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return cloneAgent(a), nil
}

func (m *memStore) ListAgents(_ context.Context, company string, each func(*domain.Agent) bool) error {
	m.mu.Lock()
	if err := m.called("ListAgents"); err != nil {
		m.mu.Unlock()
		return err
	}
	var list []*domain.Agent
	for _, id := range slices.Backward(m.order) {
		if a := m.agents[id]; a.Company == company {
			list = append(list, cloneAgent(a))
		}
	}
	m.mu.Unlock()
	for _, a := range list {
		m.mu.Lock()
		m.handed++
		m.mu.Unlock()
		if !each(a) {
			return nil
		}
	}
	return nil
}

func (m *memStore) UpdateAgent(_ context.Context, a *domain.Agent, v *domain.AgentVersion, prevSeq int) error {
	m.mu.Lock()
	if hook := m.beforeUpdate; hook != nil {
		m.beforeUpdate = nil
		m.mu.Unlock()
		hook()
		m.mu.Lock()
	}
	defer m.mu.Unlock()
	if err := m.called("UpdateAgent"); err != nil {
		return err
	}
	cur, ok := m.agents[a.ID]
	if !ok || cur.Seq != prevSeq {
		return fmt.Errorf("agent %s: %w", a.ID, domain.ErrConflict)
	}
	if v != nil {
		if v.AgentID != a.ID || v.Seq != len(m.versions[a.ID])+1 || a.Seq != v.Seq {
			return fmt.Errorf("agent %s version seq %d: %w", a.ID, v.Seq, domain.ErrConflict)
		}
		m.versions[a.ID] = append(m.versions[a.ID], cloneVersion(v))
	}
	m.agents[a.ID] = cloneAgent(a)
	return nil
}

func (m *memStore) DeleteAgent(_ context.Context, a *domain.Agent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.called("DeleteAgent"); err != nil {
		return err
	}
	if _, ok := m.agents[a.ID]; !ok {
		return domain.Errorf(domain.KindNotFound, "Agent %s not found", a.ID)
	}
	delete(m.agents, a.ID)
	delete(m.keys, a.AgentKey)
	delete(m.versions, a.ID)
	m.order = slices.DeleteFunc(m.order, func(id string) bool { return id == a.ID })
	return nil
}

func (m *memStore) AgentIDByKey(_ context.Context, agentKey string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.called("AgentIDByKey"); err != nil {
		return "", err
	}
	id, ok := m.keys[agentKey]
	if !ok {
		return "", domain.ErrNotFound
	}
	return id, nil
}

func (m *memStore) ListVersions(_ context.Context, agentID string, offset, limit int) ([]*domain.AgentVersion, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.called("ListVersions"); err != nil {
		return nil, false, err
	}
	vs := m.versions[agentID]
	out := []*domain.AgentVersion{}
	for _, v := range vs[min(offset, len(vs)):min(offset+limit, len(vs))] {
		out = append(out, cloneVersion(v))
	}
	return out, offset+limit < len(vs), nil
}

func (m *memStore) GetVersion(_ context.Context, agentID string, seq int) (*domain.AgentVersion, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.called("GetVersion"); err != nil {
		return nil, err
	}
	vs := m.versions[agentID]
	if seq < 1 || seq > len(vs) {
		return nil, domain.ErrNotFound
	}
	return cloneVersion(vs[seq-1]), nil
}

func (m *memStore) KnowledgeBaseOwners(_ context.Context, ids []string) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kbAsked = append(m.kbAsked, slices.Clone(ids))
	if err := m.called("KnowledgeBaseOwners"); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, id := range ids {
		if c, ok := m.kbs[id]; ok {
			out[id] = c
		}
	}
	return out, nil
}

// stored returns the stored agent of id (nil when there is none) and its versions.
func (m *memStore) stored(id string) (*domain.Agent, []*domain.AgentVersion) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var a *domain.Agent
	if s, ok := m.agents[id]; ok {
		a = cloneAgent(s)
	}
	var vs []*domain.AgentVersion
	for _, v := range m.versions[id] {
		vs = append(vs, cloneVersion(v))
	}
	return a, vs
}

func cloneAgent(a *domain.Agent) *domain.Agent {
	c := *a
	c.SystemConfig = cloneMap(a.SystemConfig)
	c.Explicit = cloneMap(a.Explicit)
	if a.OriginURL != nil {
		u := *a.OriginURL
		c.OriginURL = &u
	}
	return &c
}

func cloneVersion(v *domain.AgentVersion) *domain.AgentVersion {
	c := *v
	c.SystemConfig = cloneMap(v.SystemConfig)
	c.Metadata = cloneMap(v.Metadata)
	return &c
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return domain.DeepCopy(m)
}

// catalog is a deployment's tools by name (domain.ToolCatalog).
type catalog []string

func (c catalog) Has(name string) bool { return slices.Contains(c, name) }
func (c catalog) Names() []string      { return c }

func (c catalog) CheckSchema(map[string]any) error { return nil }

// tools are the tools the tests' deployment offers.
var tools = catalog{"calculator", "current_time"}

// doc is the configuration document s, read as the API reads a body.
func doc(t *testing.T, s string) domain.ConfigDoc {
	t.Helper()
	var d domain.ConfigDoc
	if err := json.Unmarshal([]byte(s), &d); err != nil || d.IsZero() {
		t.Fatalf("document %s: %v", s, err)
	}
	return d
}

// config decodes a JSON configuration as the API does (numbers as json.Number).
func config(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("config %s: %v", s, err)
	}
	return m
}

// Principals of the tests: alice and carol of acme, mallory of evil.
var (
	alice   = domain.Principal{KeyID: "k-alice", Owner: "alice", Company: "acme"}
	carol   = domain.Principal{KeyID: "k-carol", Owner: "carol", Company: "acme"}
	mallory = domain.Principal{KeyID: "k-mallory", Owner: "mallory", Company: "evil"}
)

func ptr[T any](v T) *T { return &v }
