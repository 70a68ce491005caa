// Package agents holds the use cases of stored agents: validate, create, read, list, update with
// versioning, and delete, with tenant isolation enforced on every call.
package agents

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps agents and their versions.
type Store interface {
	// CreateAgent stores a new agent with its first version; it fails with a KindConflict error
	// wrapping ErrKeyTaken when agent_key is already used.
	CreateAgent(ctx context.Context, a *domain.Agent, v *domain.AgentVersion) error
	GetAgent(ctx context.Context, id string) (*domain.Agent, error)
	ListAgents(ctx context.Context, company string) ([]*domain.Agent, error)
	// UpdateAgent replaces the agent record if its Seq is still prevSeq, adding v when non-nil.
	UpdateAgent(ctx context.Context, a *domain.Agent, v *domain.AgentVersion, prevSeq int) error
	DeleteAgent(ctx context.Context, a *domain.Agent) error
	AgentIDByKey(ctx context.Context, agentKey string) (string, error)
	// NextKeySuffix hands out the next suffix (2, 3, …) for an agent_key base that is taken.
	NextKeySuffix(ctx context.Context, base string) (int, error)
	ListVersions(ctx context.Context, agentID string) ([]*domain.AgentVersion, error)
	GetVersion(ctx context.Context, agentID string, seq int) (*domain.AgentVersion, error)
}

// ErrKeyTaken reports an agent_key already in use.
var ErrKeyTaken = errors.New("agent key taken")

const maxKeyAttempts = 10

// Service implements the agent use cases.
type Service struct {
	store Store
	now   func() time.Time
}

// NewService builds the agents service.
func NewService(store Store) *Service {
	return &Service{store: store, now: time.Now}
}

// Flags are the top-level fields of create and update bodies beside system_config.
type Flags struct {
	IsPublic  *bool
	IsShared  *bool
	OriginURL *string
}

// Validate checks a flat configuration without storing it.
func (s *Service) Validate(cfg map[string]any) []domain.FieldError {
	return domain.ValidateAgentConfig(cfg, "")
}

// Create validates and stores a new agent owned by p.
func (s *Service) Create(ctx context.Context, p domain.Principal, cfg map[string]any, f Flags) (*domain.Agent, error) {
	if errs := domain.ValidateAgentConfig(cfg, "system_config"); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	now := s.now().UTC()
	a := &domain.Agent{ID: uuid.NewString(), Owner: p.Owner, Company: p.Company, CreatedAt: now, Seq: 1, VersionNumber: domain.FirstVersion}
	f.apply(a)
	s.setConfig(a, cfg, now)
	v := s.version(a, p, now)
	// The name's key is tried first; when it is taken, a per-base counter hands out the suffix,
	// so a popular name costs three round trips, not one per agent already holding it.
	base := domain.AgentKeyBase(a.Name)
	a.AgentKey = base
	for attempt := 1; attempt <= maxKeyAttempts; attempt++ {
		if attempt > 1 {
			n, err := s.store.NextKeySuffix(ctx, base)
			if err != nil {
				return nil, fmt.Errorf("create agent: %w", err)
			}
			a.AgentKey = domain.AgentKeyCandidate(base, n)
		}
		err := s.store.CreateAgent(ctx, a, v)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, ErrKeyTaken) {
			return nil, fmt.Errorf("create agent: %w", err)
		}
	}
	return nil, fmt.Errorf("create agent: no free agent_key for %q", base)
}

// Get returns an agent the caller may read: 404 when it does not exist, 403 when it is another
// tenant's.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (*domain.Agent, error) {
	a, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !a.CanRead(p) {
		return nil, domain.ErrPermission
	}
	return a, nil
}

// GetByKey returns the agent with an agent_key, if the caller may read it.
func (s *Service) GetByKey(ctx context.Context, p domain.Principal, agentKey string) (*domain.Agent, error) {
	if agentKey == "" || len(agentKey) > 128 {
		return nil, domain.Errorf(domain.KindNotFound, "Agent with agent_key %q not found", truncate(agentKey, 64))
	}
	id, err := s.store.AgentIDByKey(ctx, agentKey)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.Errorf(domain.KindNotFound, "Agent with agent_key %q not found", agentKey)
	}
	if err != nil {
		return nil, fmt.Errorf("agent by key %s: %w", agentKey, err)
	}
	return s.Get(ctx, p, id)
}

// List returns the caller's agents and the agents shared inside its company, newest first.
func (s *Service) List(ctx context.Context, p domain.Principal) ([]*domain.Agent, error) {
	all, err := s.store.ListAgents(ctx, p.Company)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	out := make([]*domain.Agent, 0, len(all))
	for _, a := range all {
		if a.CanRead(p) {
			out = append(out, a)
		}
	}
	return out, nil
}

// Update changes an agent: with merge set, cfg is an RFC 7386 merge patch into system_config,
// otherwise it replaces it (nil cfg leaves the configuration alone). A changed configuration
// creates a new version under the version_number rule.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, cfg map[string]any, merge bool, f Flags) (*domain.Agent, error) {
	a, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !a.CanWrite(p) {
		return nil, domain.ErrPermission
	}
	next := a.Explicit
	if cfg != nil {
		next = cfg
		if merge {
			next = domain.MergePatch(a.Explicit, cfg)
		}
		if errs := domain.ValidateAgentConfig(next, "system_config"); len(errs) > 0 {
			return nil, domain.Invalid(errs)
		}
	}
	now := s.now().UTC()
	prevSeq := a.Seq
	f.apply(a)
	var v *domain.AgentVersion
	if domain.ConfigHash(next) != a.ConfigHash {
		a.VersionNumber = domain.NextVersion(a.VersionNumber, a.Explicit, next)
		a.Seq++
		s.setConfig(a, next, now)
		v = s.version(a, p, now)
	}
	a.UpdatedAt = now
	if err := s.store.UpdateAgent(ctx, a, v, prevSeq); err != nil {
		return nil, fmt.Errorf("update agent %s: %w", id, err)
	}
	return a, nil
}

// Delete removes an agent and its versions; only its owner may.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	a, err := s.load(ctx, id)
	if err != nil {
		return err
	}
	if !a.CanWrite(p) {
		return domain.ErrPermission
	}
	if err := s.store.DeleteAgent(ctx, a); err != nil {
		return fmt.Errorf("delete agent %s: %w", id, err)
	}
	return nil
}

// CurrentVersion returns the active version: the configuration exactly as the client set it.
func (s *Service) CurrentVersion(ctx context.Context, p domain.Principal, id string) (*domain.AgentVersion, error) {
	a, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	v, err := s.store.GetVersion(ctx, a.ID, a.Seq)
	if err != nil {
		return nil, fmt.Errorf("current version of %s: %w", id, err)
	}
	return v, nil
}

// Versions lists every version of an agent, oldest first.
func (s *Service) Versions(ctx context.Context, p domain.Principal, id string) ([]*domain.AgentVersion, error) {
	a, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return s.store.ListVersions(ctx, a.ID)
}

func (s *Service) load(ctx context.Context, id string) (*domain.Agent, error) {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return nil, domain.Errorf(domain.KindNotFound, "Agent %q not found: the id must be a UUID", truncate(id, 64))
	}
	a, err := s.store.GetAgent(ctx, strings.ToLower(id))
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.Errorf(domain.KindNotFound, "Agent %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get agent %s: %w", id, err)
	}
	return a, nil
}

func (s *Service) setConfig(a *domain.Agent, explicit map[string]any, now time.Time) {
	a.Explicit = explicit
	a.SystemConfig = domain.Effective(explicit)
	a.ConfigHash = domain.ConfigHash(explicit)
	a.Name, _ = explicit["name"].(string)
	a.Architecture, _ = a.SystemConfig["agent_type"].(string)
	a.EntryPoint, _ = explicit["entry_point"].(string)
	if a.EntryPoint == "" {
		a.EntryPoint = a.Name
	}
	a.VersionID = uuid.NewString()
	a.UpdatedAt = now
}

func (s *Service) version(a *domain.Agent, p domain.Principal, now time.Time) *domain.AgentVersion {
	return &domain.AgentVersion{
		ID: a.VersionID, AgentID: a.ID, VersionNumber: a.VersionNumber, Seq: a.Seq,
		SystemConfig: a.Explicit, CreatedAt: now,
		Metadata: map[string]any{"config_hash": a.ConfigHash, "created_by": p.Owner, "created_at": now.Format(time.RFC3339)},
	}
}

func (f Flags) apply(a *domain.Agent) {
	if f.IsPublic != nil {
		a.IsPublic = *f.IsPublic
	}
	if f.IsShared != nil {
		a.IsShared = *f.IsShared
	}
	if f.OriginURL != nil {
		a.OriginURL = f.OriginURL
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
