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
	"github.com/agentorch/agentorch/shared/agents/agentstest"
	"github.com/agentorch/agentorch/shared/domain"
)

// memStore is agentstest's fake with the hooks these tests need: every call is counted by
// method name, fail makes a method return an error instead, and the agents ListAgents hands
// over are counted. agentstest.StoreSuite holds the fake to the DynamoDB adapter's behaviour.
type memStore struct {
	*agentstest.Store
	mu      sync.Mutex
	calls   map[string]int
	kbAsked [][]string // the ids of each KnowledgeBaseOwners call
	handed  int        // agents ListAgents handed to its callback
	fail    map[string]error
	// keyTaken refuses claims of keys beyond those stored (a key claimed elsewhere).
	keyTaken func(key string) bool
	// beforeUpdate, when set, runs once as UpdateAgent starts: another request's write landing
	// between the service's read and its own write.
	beforeUpdate func()
}

var _ agents.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{Store: agentstest.NewStore(), calls: map[string]int{}, fail: map[string]error{}}
}

// TestStoreSuite holds the fake to the contract of agents.Store (shared/dynamo runs the same
// suite against DynamoDB Local).
func TestStoreSuite(t *testing.T) {
	agentstest.StoreSuite(t, func(*testing.T) agents.Store { return agentstest.NewStore() })
}

// called counts a call and returns the error the test set for it, if any.
func (m *memStore) called(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
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

func (m *memStore) CreateAgent(ctx context.Context, a *domain.Agent, v *domain.AgentVersion) error {
	if err := m.called("CreateAgent"); err != nil {
		return err
	}
	if m.keyTaken != nil && m.keyTaken(a.AgentKey) {
		return fmt.Errorf("agent_key %q: %w", a.AgentKey, domain.ErrAgentKeyTaken)
	}
	return m.Store.CreateAgent(ctx, a, v)
}

func (m *memStore) GetAgent(ctx context.Context, id string) (*domain.Agent, error) {
	if err := m.called("GetAgent"); err != nil {
		return nil, err
	}
	return m.Store.GetAgent(ctx, id)
}

func (m *memStore) ListAgents(ctx context.Context, company string, each func(*domain.Agent) bool) error {
	if err := m.called("ListAgents"); err != nil {
		return err
	}
	return m.Store.ListAgents(ctx, company, func(a *domain.Agent) bool {
		m.mu.Lock()
		m.handed++
		m.mu.Unlock()
		return each(a)
	})
}

func (m *memStore) UpdateAgent(ctx context.Context, a *domain.Agent, v *domain.AgentVersion, prevSeq int) error {
	m.mu.Lock()
	hook := m.beforeUpdate
	m.beforeUpdate = nil
	m.mu.Unlock()
	if hook != nil {
		hook()
	}
	if err := m.called("UpdateAgent"); err != nil {
		return err
	}
	return m.Store.UpdateAgent(ctx, a, v, prevSeq)
}

func (m *memStore) DeleteAgent(ctx context.Context, a *domain.Agent) error {
	if err := m.called("DeleteAgent"); err != nil {
		return err
	}
	return m.Store.DeleteAgent(ctx, a)
}

func (m *memStore) AgentIDByKey(ctx context.Context, agentKey string) (string, error) {
	if err := m.called("AgentIDByKey"); err != nil {
		return "", err
	}
	return m.Store.AgentIDByKey(ctx, agentKey)
}

func (m *memStore) ListVersions(ctx context.Context, agentID string, offset, limit int) ([]*domain.AgentVersion, bool, error) {
	if err := m.called("ListVersions"); err != nil {
		return nil, false, err
	}
	return m.Store.ListVersions(ctx, agentID, offset, limit)
}

func (m *memStore) GetVersion(ctx context.Context, agentID string, seq int) (*domain.AgentVersion, error) {
	if err := m.called("GetVersion"); err != nil {
		return nil, err
	}
	return m.Store.GetVersion(ctx, agentID, seq)
}

func (m *memStore) KnowledgeBaseOwners(ctx context.Context, ids []string) (map[string]string, error) {
	m.mu.Lock()
	m.kbAsked = append(m.kbAsked, slices.Clone(ids))
	m.mu.Unlock()
	if err := m.called("KnowledgeBaseOwners"); err != nil {
		return nil, err
	}
	return m.Store.KnowledgeBaseOwners(ctx, ids)
}

// stored returns the stored agent of id (nil when there is none) and its versions.
func (m *memStore) stored(id string) (*domain.Agent, []*domain.AgentVersion) { return m.Stored(id) }

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
