package api_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/domain"
)

// fakeAgents keeps agents, newest first, each with its versions; it checks nothing but ids.
type fakeAgents struct {
	mu       sync.Mutex
	list     []*domain.Agent
	versions map[string][]*domain.AgentVersion
	invalid  []domain.FieldError // what Validate finds
	checked  []validated         // what Validate was asked
}

// validated is one call of Validate.
type validated struct {
	cfg    map[string]any
	prefix string
}

func (s *fakeAgents) Validate(_ context.Context, _ domain.Principal, cfg domain.ConfigDoc, prefix string) ([]domain.FieldError, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checked = append(s.checked, validated{cfg.Object(), prefix})
	return s.invalid, nil
}

func (s *fakeAgents) Create(_ context.Context, p domain.Principal, in agents.CreateInput) (*domain.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC().Truncate(time.Second)
	cfg, f, name := in.Config.Object(), in.Flags, in.Config.Name()
	a := &domain.Agent{ID: uuid.NewString(), AgentKey: slug(name), Name: name,
		EntryPoint: name, Owner: p.Owner, Company: p.Company, SystemConfig: domain.Effective(cfg), Explicit: cfg,
		VersionNumber: "1.0.0", ConfigHash: domain.ConfigHash(cfg), CreatedAt: now, UpdatedAt: now, OriginURL: f.OriginURL}
	a.Architecture, _ = a.SystemConfig["agent_type"].(string)
	a.IsPublic = f.IsPublic != nil && *f.IsPublic
	a.IsShared = f.IsShared != nil && *f.IsShared
	s.list = append([]*domain.Agent{a}, s.list...)
	if s.versions == nil {
		s.versions = map[string][]*domain.AgentVersion{}
	}
	s.versions[a.ID] = []*domain.AgentVersion{s.version(a)}
	return a, nil
}

// slug is name's ASCII letters and digits in lower case, joined by dashes ("agent" when none):
// a valid agent_key, without the feature's transliteration or uniqueness.
func slug(name string) string {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') })
	if len(words) == 0 {
		return "agent"
	}
	return strings.Join(words, "-")
}

func (s *fakeAgents) version(a *domain.Agent) *domain.AgentVersion {
	return &domain.AgentVersion{ID: uuid.NewString(), AgentID: a.ID, VersionNumber: a.VersionNumber, SystemConfig: a.Explicit,
		Metadata: map[string]any{"config_hash": a.ConfigHash, "created_by": a.Owner}, CreatedAt: a.UpdatedAt}
}

func (s *fakeAgents) find(p domain.Principal, id string) (int, error) {
	for i, a := range s.list {
		if a.ID == id {
			if !a.CanRead(p) {
				return 0, domain.ErrPermission
			}
			return i, nil
		}
	}
	return 0, domain.ErrNotFound
}

func (s *fakeAgents) Get(_ context.Context, p domain.Principal, id string) (*domain.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, err := s.find(p, id)
	if err != nil {
		return nil, err
	}
	return s.list[i], nil
}

func (s *fakeAgents) List(_ context.Context, p domain.Principal, offset, limit int) ([]*domain.Agent, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []*domain.Agent
	for _, a := range s.list {
		if a.CanRead(p) {
			mine = append(mine, a)
		}
	}
	list, more := page(mine, offset, limit)
	return list, more, nil
}

// Update sets the configuration (merged one level deep for a patch) and bumps the patch number.
func (s *fakeAgents) Update(_ context.Context, p domain.Principal, id string, in agents.UpdateInput) (*domain.Agent, error) {
	cfg, merge, f := in.Config.Object(), in.Merge, in.Flags
	s.mu.Lock()
	defer s.mu.Unlock()
	i, err := s.find(p, id)
	if err != nil {
		return nil, err
	}
	a := *s.list[i]
	if cfg != nil {
		next := cfg
		if merge {
			next = map[string]any{}
			for k, v := range a.Explicit {
				next[k] = v
			}
			for k, v := range cfg {
				next[k] = v
			}
		}
		if domain.ConfigHash(next) != a.ConfigHash {
			vs := s.versions[id]
			a.Explicit, a.SystemConfig, a.ConfigHash = next, domain.Effective(next), domain.ConfigHash(next)
			a.VersionNumber = "1.0." + strconv.Itoa(len(vs))
			a.UpdatedAt = time.Now().UTC().Truncate(time.Second)
			s.versions[id] = append(vs, s.version(&a))
		}
	}
	if f.IsShared != nil {
		a.IsShared = *f.IsShared
	}
	if f.IsPublic != nil {
		a.IsPublic = *f.IsPublic
	}
	s.list[i] = &a
	return &a, nil
}

func (s *fakeAgents) Delete(_ context.Context, p domain.Principal, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, err := s.find(p, id)
	if err != nil {
		return err
	}
	s.list = append(s.list[:i], s.list[i+1:]...)
	return nil
}

func (s *fakeAgents) CurrentVersion(_ context.Context, p domain.Principal, id string) (*domain.AgentVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.find(p, id); err != nil {
		return nil, err
	}
	vs := s.versions[id]
	return vs[len(vs)-1], nil
}

func (s *fakeAgents) Versions(_ context.Context, p domain.Principal, id string, offset, limit int) ([]*domain.AgentVersion, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.find(p, id); err != nil {
		return nil, false, err
	}
	list, more := page(s.versions[id], offset, limit)
	return list, more, nil
}

// Catalog offers nothing: the catalog's own tests run the real service (catalog_test.go).
func (s *fakeAgents) Catalog(context.Context, domain.Principal) (domain.Catalog, error) {
	return domain.Catalog{}, nil
}
