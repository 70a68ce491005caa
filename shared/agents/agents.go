// Package agents holds the use cases of stored agents: validate, create, read, list, update with
// versioning, and delete, with tenant isolation enforced on every call.
package agents

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps agents and their versions.
type Store interface {
	// CreateAgent stores a new agent with its first version; it fails with an error wrapping
	// domain.ErrAgentKeyTaken when agent_key is already used (the service then tries another
	// key, so the error never reaches a client).
	CreateAgent(ctx context.Context, a *domain.Agent, v *domain.AgentVersion) error
	GetAgent(ctx context.Context, id string) (*domain.Agent, error)
	// ListAgents calls each with the company's agents, newest first, until it returns false.
	ListAgents(ctx context.Context, company string, each func(*domain.Agent) bool) error
	// UpdateAgent replaces the agent record if its Seq is still prevSeq, adding v when non-nil.
	UpdateAgent(ctx context.Context, a *domain.Agent, v *domain.AgentVersion, prevSeq int) error
	DeleteAgent(ctx context.Context, a *domain.Agent) error
	AgentIDByKey(ctx context.Context, agentKey string) (string, error)
	// ListVersions returns up to limit versions of an agent, oldest first, after skipping
	// offset, and whether more follow.
	ListVersions(ctx context.Context, agentID string, offset, limit int) ([]*domain.AgentVersion, bool, error)
	GetVersion(ctx context.Context, agentID string, seq int) (*domain.AgentVersion, error)
	// KnowledgeBaseOwners returns the company of each knowledge base of ids that exists, for the
	// check that a configuration names only the caller's company's knowledge bases.
	KnowledgeBaseOwners(ctx context.Context, ids []string) (map[string]string, error)
}

const maxKeyAttempts = 10

// Service implements the agent use cases.
type Service struct {
	store Store
	tools domain.ToolCatalog
	mcp   domain.MCPResolver // nil: no MCP server is known
	now   func() time.Time
	audit audit.Recorder // nil: agents cannot be deleted (WithAudit)
	// catalog is what the deployment offers configurations (WithCatalog); its zero value
	// offers no provider and no tool.
	catalog domain.Catalog
}

// WithAudit returns a copy of s that records the agents callers delete. Without it a delete
// fails before it changes anything: no agent is deleted unrecorded.
func (s *Service) WithAudit(r audit.Recorder) *Service {
	cp := *s
	cp.audit = r
	return &cp
}

// errNoAudit refuses an audited action of a service built without its recorder.
var errNoAudit = errors.New("audit recorder not configured: refusing an unrecorded change")

// WithMCP returns a copy of s that checks MCP bindings against the company's servers from r.
func (s *Service) WithMCP(r domain.MCPResolver) *Service {
	cp := *s
	cp.mcp = r
	return &cp
}

// WithCatalog returns a copy of s whose Catalog is c: the deployment's model providers and
// built-in tools.
func (s *Service) WithCatalog(c domain.Catalog) *Service {
	cp := *s
	cp.catalog = c
	return &cp
}

// Catalog is what configurations may choose from on this deployment: its model providers and
// their models, the built-in tools and llm_config's parameter limits. It is the same for every
// caller who may read agents.
func (s *Service) Catalog(_ context.Context, p domain.Principal) (domain.Catalog, error) {
	if !p.Can(domain.ScopeAgentsRead) {
		return domain.Catalog{}, domain.ErrPermission
	}
	c := s.catalog
	c.Params = domain.LLMParams()
	return c, nil
}

// NewService builds the agents service.
func NewService(store Store, tools domain.ToolCatalog) *Service {
	return &Service{store: store, tools: tools, now: time.Now}
}

// Flags are the top-level fields of create and update bodies beside system_config.
type Flags struct {
	IsPublic  *bool
	IsShared  *bool
	OriginURL *string
}

// CreateInput is what a new agent is made of: its configuration document and the flags.
type CreateInput struct {
	Config domain.ConfigDoc
	Flags  Flags
}

// UpdateInput is a change to an agent: a configuration document (the zero ConfigDoc leaves the
// configuration alone) that replaces system_config, or with Merge set is an RFC 7386 merge patch
// into it, and the flags.
type UpdateInput struct {
	Config domain.ConfigDoc
	Merge  bool
	Flags  Flags
}

// Validate checks a configuration without storing it, by the rules session creation applies
// (domain.ParseConfig, with the deployment's tools, and every knowledge base one of p's
// company's: one BatchGetItem when there are any); prefix is "" or "system_config". The error
// is for the check itself failing, or a permission error when the configuration names what p
// may not read (domain.AgentConfig.Permit).
func (s *Service) Validate(ctx context.Context, p domain.Principal, cfg domain.ConfigDoc, prefix string) ([]domain.FieldError, error) {
	g, errs := cfg.Parse(s.tools, prefix)
	if len(errs) > 0 {
		return errs, nil
	}
	if err := g.Permit(p); err != nil {
		return nil, err
	}
	if errs, err := g.CheckToolsFor(ctx, s.mcp, p.Company); err != nil || len(errs) > 0 {
		return errs, err
	}
	refs := g.KnowledgeBaseRefs()
	if len(refs) == 0 {
		return nil, nil
	}
	owners, err := s.store.KnowledgeBaseOwners(ctx, domain.KnowledgeBaseIDs(refs))
	if err != nil {
		return nil, fmt.Errorf("check knowledge bases: %w", err)
	}
	return domain.CheckKnowledgeBaseAccess(refs, owners, p.Company, false), nil
}

// validate is Validate for create and update: field errors are an invalid-request error.
func (s *Service) validate(ctx context.Context, p domain.Principal, cfg domain.ConfigDoc) error {
	errs, err := s.Validate(ctx, p, cfg, "system_config")
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return domain.Invalid(errs)
	}
	return nil
}

// Create validates and stores a new agent owned by p.
func (s *Service) Create(ctx context.Context, p domain.Principal, in CreateInput) (*domain.Agent, error) {
	if err := s.validate(ctx, p, in.Config); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	a := &domain.Agent{ID: uuid.NewString(), Owner: p.Owner, Company: p.Company, CreatedAt: now, Seq: 1, VersionNumber: domain.FirstVersion}
	in.Flags.apply(a)
	s.setConfig(a, in.Config, now)
	v := s.version(a, in.Config, p, now)
	// agent_key is unique across the service (from-agent finds public agents of any company by
	// it). The name's key is tried first; when it is taken, a random suffix follows, so the key
	// tells nothing about how many agents elsewhere share the name (a counter would).
	base := domain.AgentKeyBase(a.Name)
	a.AgentKey = base
	for attempt := 1; attempt <= maxKeyAttempts; attempt++ {
		if attempt > 1 {
			a.AgentKey = base + "-" + keySuffix()
		}
		err := s.store.CreateAgent(ctx, a, v)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, domain.ErrAgentKeyTaken) {
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

// GetByKey returns the agent with an agent_key, if the caller may read it. An agent the caller
// may not read answers exactly like an unknown key (404), so that keys of other companies'
// private agents cannot be probed.
func (s *Service) GetByKey(ctx context.Context, p domain.Principal, agentKey string) (*domain.Agent, error) {
	notFound := domain.Errorf(domain.KindNotFound, "Agent with agent_key %q not found", domain.Clip(agentKey, 64))
	if agentKey == "" || len(agentKey) > 128 {
		return nil, notFound
	}
	id, err := s.store.AgentIDByKey(ctx, agentKey)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("agent by key %s: %w", agentKey, err)
	}
	a, err := s.load(ctx, id)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, notFound // deleted between the two reads
	}
	if err != nil {
		return nil, err
	}
	if !a.CanRead(p) {
		return nil, notFound
	}
	return a, nil
}

// List returns one page of the agents of the caller's company that it may read (its own, shared
// and public ones), newest first: up to limit of them after skipping offset, and whether more
// follow.
func (s *Service) List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.Agent, bool, error) {
	out := make([]*domain.Agent, 0, min(limit, 64))
	skipped, more := 0, false
	err := s.store.ListAgents(ctx, p.Company, func(a *domain.Agent) bool {
		switch {
		case !a.CanRead(p):
			return true
		case skipped < offset:
			skipped++
			return true
		case len(out) == limit:
			more = true
			return false
		}
		out = append(out, a)
		return true
	})
	if err != nil {
		return nil, false, fmt.Errorf("list agents: %w", err)
	}
	return out, more, nil
}

// Update changes an agent (see UpdateInput). A changed configuration creates a new version under
// the version_number rule.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, in UpdateInput) (*domain.Agent, error) {
	a, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !a.CanWrite(p) {
		return nil, domain.ErrPermission
	}
	current := domain.ConfigDocOf(a.Explicit)
	next := current
	if !in.Config.IsZero() {
		next = in.Config
		if in.Merge {
			next = current.Merge(in.Config)
		}
		if err := s.validate(ctx, p, next); err != nil {
			return nil, err
		}
	}
	now := s.now().UTC()
	prevSeq := a.Seq
	in.Flags.apply(a)
	var v *domain.AgentVersion
	if next.Hash() != a.ConfigHash {
		a.VersionNumber = domain.NextVersion(a.VersionNumber, a.Explicit, next.Object())
		a.Seq++
		s.setConfig(a, next, now)
		v = s.version(a, next, p, now)
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
	if s.audit == nil {
		return errNoAudit
	}
	if err := s.store.DeleteAgent(ctx, a); err != nil {
		return fmt.Errorf("delete agent %s: %w", id, err)
	}
	return s.audit.Record(ctx, p, audit.AgentDeleted, a.ID)
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

// Versions returns one page of an agent's versions, oldest first, and whether more follow.
// Callers of the agent's company see every version; another company (reading a public agent)
// sees the current version only, since an earlier one may hold what the owner edited out.
func (s *Service) Versions(ctx context.Context, p domain.Principal, id string, offset, limit int) ([]*domain.AgentVersion, bool, error) {
	a, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, false, err
	}
	if a.Company != p.Company {
		if offset > 0 {
			return []*domain.AgentVersion{}, false, nil
		}
		v, err := s.store.GetVersion(ctx, a.ID, a.Seq)
		if err != nil {
			return nil, false, fmt.Errorf("current version of %s: %w", id, err)
		}
		return []*domain.AgentVersion{v}, false, nil
	}
	vs, more, err := s.store.ListVersions(ctx, a.ID, offset, limit)
	if err != nil {
		return nil, false, fmt.Errorf("versions of %s: %w", id, err)
	}
	return vs, more, nil
}

func (s *Service) load(ctx context.Context, id string) (*domain.Agent, error) {
	if !domain.IsID(id) {
		return nil, domain.Errorf(domain.KindNotFound, "Agent %q not found: the id must be a UUID", domain.Clip(id, 64))
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

func (s *Service) setConfig(a *domain.Agent, doc domain.ConfigDoc, now time.Time) {
	a.Explicit = doc.Object()
	a.SystemConfig = domain.Effective(a.Explicit)
	a.ConfigHash = doc.Hash()
	a.Name = doc.Name()
	a.Architecture, _ = a.SystemConfig["agent_type"].(string)
	a.EntryPoint, _ = a.Explicit["entry_point"].(string)
	if a.EntryPoint == "" {
		a.EntryPoint = a.Name
	}
	a.VersionID = uuid.NewString()
	a.UpdatedAt = now
}

// version is the version a's configuration doc makes, its members in the order the client wrote
// them when doc knows it.
func (s *Service) version(a *domain.Agent, doc domain.ConfigDoc, p domain.Principal, now time.Time) *domain.AgentVersion {
	v := &domain.AgentVersion{
		ID: a.VersionID, AgentID: a.ID, VersionNumber: a.VersionNumber, Seq: a.Seq,
		SystemConfig: a.Explicit, CreatedAt: now,
		Metadata: map[string]any{"config_hash": a.ConfigHash, "created_by": p.Owner, "created_at": now.Format(time.RFC3339)},
	}
	// OrderedJSON fails only where json.Marshal of the object would; the store then encodes
	// SystemConfig itself and reports it.
	if b, err := doc.OrderedJSON(); err == nil {
		v.SystemConfigJSON = b
	}
	return v
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

// keySuffix is the random part of a taken agent_key: six of 36 characters, so that ten tries
// all colliding is out of reach.
func keySuffix() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}
