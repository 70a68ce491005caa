// Package agentstest holds the one in-memory fake of agents.Store, for the tests of the feature
// and of what is built on it, and StoreSuite, the contract both the fake and the DynamoDB adapter
// pass (shared/dynamo runs it against DynamoDB Local), so that the fake cannot drift from it.
package agentstest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps agents, their versions, agent_key claims and knowledge base owners in memory, with
// the DynamoDB adapter's conditions: an agent_key is claimed once (until its agent is deleted), an
// agent id is created once, an update applies only while the stored Seq is the one read, and a
// version number is written once. Records are copied in and out, so callers never share memory
// with what is stored.
type Store struct {
	mu       sync.Mutex
	agents   map[string]*domain.Agent
	versions map[string]map[int]*domain.AgentVersion // agent id → seq → version
	keys     map[string]string                       // agent_key → agent id
	kbs      map[string]string                       // knowledge base id → its company
}

var _ agents.Store = (*Store)(nil)

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{agents: map[string]*domain.Agent{}, versions: map[string]map[int]*domain.AgentVersion{},
		keys: map[string]string{}, kbs: map[string]string{}}
}

// CreateAgent implements agents.Store.
func (s *Store) CreateAgent(_ context.Context, a *domain.Agent, v *domain.AgentVersion) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.keys[a.AgentKey]; taken {
		return fmt.Errorf("agent_key %q: %w", a.AgentKey, domain.ErrAgentKeyTaken)
	}
	if _, ok := s.agents[a.ID]; ok {
		return fmt.Errorf("create agent %s: %w", a.ID, domain.ErrConflict)
	}
	if _, ok := s.versions[v.AgentID][v.Seq]; ok {
		return fmt.Errorf("create agent %s: %w", a.ID, domain.ErrConflict)
	}
	s.keys[a.AgentKey] = a.ID
	s.agents[a.ID] = cloneAgent(a)
	s.putVersion(v)
	return nil
}

func (s *Store) putVersion(v *domain.AgentVersion) {
	if s.versions[v.AgentID] == nil {
		s.versions[v.AgentID] = map[int]*domain.AgentVersion{}
	}
	s.versions[v.AgentID][v.Seq] = cloneVersion(v)
}

// GetAgent implements agents.Store.
func (s *Store) GetAgent(_ context.Context, id string) (*domain.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	if !ok {
		return nil, fmt.Errorf("get agent %s: %w", id, domain.ErrNotFound)
	}
	return cloneAgent(a), nil
}

// ListAgents implements agents.Store: newest first by CreatedAt, then by id (descending), as
// the adapter's index sorts them. each runs without the lock held.
func (s *Store) ListAgents(_ context.Context, company string, each func(*domain.Agent) bool) error {
	s.mu.Lock()
	var list []*domain.Agent
	for _, a := range s.agents {
		if a.Company == company {
			list = append(list, cloneAgent(a))
		}
	}
	s.mu.Unlock()
	slices.SortFunc(list, func(a, b *domain.Agent) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	for _, a := range list {
		if !each(a) {
			return nil
		}
	}
	return nil
}

// UpdateAgent implements agents.Store.
func (s *Store) UpdateAgent(_ context.Context, a *domain.Agent, v *domain.AgentVersion, prevSeq int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.agents[a.ID]
	if !ok || cur.Seq != prevSeq {
		return fmt.Errorf("agent %s: %w", a.ID, domain.ErrConflict)
	}
	if v != nil {
		if _, taken := s.versions[v.AgentID][v.Seq]; taken {
			return fmt.Errorf("agent %s version %d: %w", v.AgentID, v.Seq, domain.ErrConflict)
		}
		s.putVersion(v)
	}
	s.agents[a.ID] = cloneAgent(a)
	return nil
}

// DeleteAgent implements agents.Store.
func (s *Store) DeleteAgent(_ context.Context, a *domain.Agent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.agents[a.ID]; !ok {
		return domain.Errorf(domain.KindNotFound, "Agent %s not found", a.ID)
	}
	delete(s.agents, a.ID)
	delete(s.keys, a.AgentKey)
	delete(s.versions, a.ID)
	return nil
}

// AgentIDByKey implements agents.Store.
func (s *Store) AgentIDByKey(_ context.Context, agentKey string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.keys[agentKey]
	if !ok {
		return "", domain.ErrNotFound
	}
	return id, nil
}

// maxVersionSeq is the adapter's largest version number.
const maxVersionSeq = 99_999_999

// ListVersions implements agents.Store: versions offset+1, offset+2 … by number, as the
// adapter's key condition reads them.
func (s *Store) ListVersions(_ context.Context, agentID string, offset, limit int) ([]*domain.AgentVersion, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*domain.AgentVersion{}
	if offset >= maxVersionSeq {
		return out, false, nil
	}
	for _, seq := range slices.Sorted(maps.Keys(s.versions[agentID])) {
		if seq <= offset {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, cloneVersion(s.versions[agentID][seq]))
	}
	return out, false, nil
}

// GetVersion implements agents.Store.
func (s *Store) GetVersion(_ context.Context, agentID string, seq int) (*domain.AgentVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.versions[agentID][seq]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return cloneVersion(v), nil
}

// KnowledgeBaseOwners implements agents.Store over the knowledge bases SetKnowledgeBase added.
func (s *Store) KnowledgeBaseOwners(_ context.Context, ids []string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		if c, ok := s.kbs[id]; ok {
			out[id] = c
		}
	}
	return out, nil
}

// SetKnowledgeBase records that knowledge base id exists and belongs to company.
func (s *Store) SetKnowledgeBase(id, company string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kbs[id] = company
}

// Stored returns the stored agent of id (nil when there is none) and its versions by number.
func (s *Store) Stored(id string) (*domain.Agent, []*domain.AgentVersion) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var a *domain.Agent
	if st, ok := s.agents[id]; ok {
		a = cloneAgent(st)
	}
	var vs []*domain.AgentVersion
	for _, seq := range slices.Sorted(maps.Keys(s.versions[id])) {
		vs = append(vs, cloneVersion(s.versions[id][seq]))
	}
	return a, vs
}

// Len is the number of agents stored, of every company.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.agents)
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
	c.SystemConfigJSON = bytes.Clone(v.SystemConfigJSON)
	c.Metadata = cloneMap(v.Metadata)
	return &c
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return domain.DeepCopy(m)
}
