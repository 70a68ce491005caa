// Package sessions holds the session use cases: create a session from an inline configuration or
// a stored agent, list, read and delete sessions, feedback on messages, and executing messages
// through the runtime engine with one lease per session.
package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
)

// Store keeps sessions, their messages, executions and feedback.
type Store interface {
	CreateSession(ctx context.Context, s *domain.Session) error
	GetSession(ctx context.Context, id string) (*domain.Session, error)
	// ListSessions returns up to limit of an owner's sessions, newest first, after skipping
	// offset, and whether more follow.
	ListSessions(ctx context.Context, company, owner string, offset, limit int) ([]*domain.Session, bool, error)
	DeleteSession(ctx context.Context, id string) error
	// RenameSession sets the title of p's session id ("" takes it away) in one conditional
	// write, and returns the session as it now is; a run committing meanwhile keeps it.
	RenameSession(ctx context.Context, p domain.Principal, id, title string) (*domain.Session, error)
	AcquireSession(ctx context.Context, p domain.Principal, id, leaseID string, until, now time.Time) (*domain.Session, error)
	// AcquireRun is AcquireSession for a run of execution execID, recorded on the lease in
	// the same write (a cancel names the run by it).
	AcquireRun(ctx context.Context, p domain.Principal, id, leaseID, execID string, until, now time.Time) (*domain.Session, error)
	ReleaseSession(ctx context.Context, id, leaseID string) error
	RunLeases
	Watcher
	Keys
	Runs
	History(ctx context.Context, id string, take func(domain.Message) bool) ([]domain.Message, error)
	Commit(ctx context.Context, c domain.Commit) error
	PutExecution(ctx context.Context, e *domain.Execution) error
	GetExecution(ctx context.Context, sessionID, id string) (*domain.Execution, error)
	// EachExecution hands a session's executions to each, in the order they were created, until
	// each returns false; it reads no further than that.
	EachExecution(ctx context.Context, sessionID string, each func(*domain.Execution) bool) error
	// SessionExecutions pages through a session's executions in the order they were created,
	// limit after skipping offset, and tells whether more follow: one Query a page.
	SessionExecutions(ctx context.Context, sessionID string, limit, offset int) ([]*domain.Execution, bool, error)
	Messages(ctx context.Context, sessionID string, limit, offset int) ([]domain.Message, bool, error)
	FindMessage(ctx context.Context, id string) (*domain.Message, string, error)
	PutFeedback(ctx context.Context, f *domain.Feedback) (*domain.Feedback, error)
}

// KnowledgeBases finds the owners of knowledge bases: the company of each of ids that exists.
type KnowledgeBases interface {
	KnowledgeBaseOwners(ctx context.Context, ids []string) (map[string]string, error)
}

// Agents finds stored agents by agent_key.
type Agents interface {
	GetByKey(ctx context.Context, p domain.Principal, agentKey string) (*domain.Agent, error)
}

// Queue carries asynchronous executions to the worker function (the SQS execution queue, locally
// as on AWS: the dev server runs a stand-in of Lambda's event source mapping). Group orders the
// messages of one session on a FIFO queue and is ignored by a standard one.
type Queue interface {
	Send(ctx context.Context, body, group string) error
}

// Limits of the session engine. The history an execution gives the models is bounded by the
// models' token budget (engine.HistoryBudget), not by a count of messages.
type Limits struct {
	LeaseTTL  time.Duration // how long a brief hold of the session lasts (default 5 min); runs heartbeat instead
	LeaseWait time.Duration // how long a second execute waits for the lease before 409 (default 2 s)
	// Supervision of a run (supervise): how often it looks for a cancel (default 1 s), and
	// how often it extends its lease (default 10 s) by how much (default 30 s).
	CancelPoll time.Duration
	Heartbeat  time.Duration
	RunLease   time.Duration
}

// Service implements the session use cases.
type Service struct {
	store   Store
	agents  Agents
	engine  *engine.Engine
	tools   domain.ToolCatalog
	configs configCache
	fetch   Fetcher
	queue   Queue
	images  Images
	kbs     KnowledgeBases
	mcp     MCP
	prices  Prices
	usage   UsageCounter
	events  Events
	budgets Budgets
	memory  MemoryQueue
	limits  Limits
	now     func() time.Time
}

// Deps are what the sessions service works with. Queue and Images may be nil: without a queue
// asynchronous executions are refused, without images image_url blocks cannot name uploads.
type Deps struct {
	Store  Store
	Agents Agents
	Engine *engine.Engine
	Tools  domain.ToolCatalog
	Fetch  Fetcher
	Queue  Queue
	Images Images
	// KnowledgeBases checks the knowledge_bases of new sessions; nil refuses every one.
	KnowledgeBases KnowledgeBases
	// MCP is the company's MCP servers; nil knows none (a configuration binding one is refused).
	MCP MCP
	// Prices prices model calls for the executions' cost_usd; nil knows no price (cost null).
	Prices Prices
	// Usage counts each committed run in the company's usage counters; nil counts nothing.
	Usage UsageCounter
	// Events tells the company's webhooks when a run completes or pauses; nil tells none.
	Events Events
	// Budgets holds queued runs to their key's and company's monthly budgets when the worker
	// takes them; nil holds them to none (the edge's check alone).
	Budgets Budgets
	// Memory queues the extraction of memory after turns whose configuration asks for it; nil
	// queues none (each such turn's memory_extract event says so).
	Memory MemoryQueue
}

// UsageCounter adds a run's counts to its company/day/key/agent counter (one UpdateItem ADD).
type UsageCounter interface {
	CountUsage(ctx context.Context, e domain.UsageEntry) error
}

// Prices prices one model call (provider and model as the call named them, empty for the
// deployment's default); ok is false when the model has no price.
type Prices interface {
	Cost(provider, model string, in, out int) (usd float64, ok bool)
}

// New builds the sessions service.
func New(d Deps, limits Limits) *Service {
	if limits.LeaseTTL <= 0 {
		limits.LeaseTTL = 5 * time.Minute
	}
	if limits.LeaseWait <= 0 {
		limits.LeaseWait = 2 * time.Second
	}
	if limits.CancelPoll <= 0 {
		limits.CancelPoll = time.Second
	}
	if limits.Heartbeat <= 0 {
		limits.Heartbeat = 10 * time.Second
	}
	if limits.RunLease <= 0 {
		limits.RunLease = 3 * limits.Heartbeat
	}
	return &Service{store: d.Store, agents: d.Agents, engine: d.Engine, tools: d.Tools, fetch: d.Fetch, queue: d.Queue,
		images: d.Images, kbs: d.KnowledgeBases, mcp: d.MCP, prices: d.Prices, usage: d.Usage, events: d.Events, budgets: d.Budgets, memory: d.Memory, limits: limits, now: time.Now}
}

// Images opens uploaded images by name.
type Images interface {
	Open(ctx context.Context, name string) ([]byte, string, error)
}

// CreateInput is what a session with an inline configuration is made of.
type CreateInput struct {
	// Config is the configuration document (either shape), stored and shown as sent.
	Config domain.ConfigDoc
	// UserID names the end user the session serves (the body's user_id, beside the
	// configuration's fields); nil names none.
	UserID *string
}

// Create validates an inline configuration and opens a session for it.
func (s *Service) Create(ctx context.Context, p domain.Principal, in CreateInput) (*domain.Session, error) {
	errs := userIDErrors(in.UserID)
	g, cfgErrs := in.Config.Parse(s.tools, "")
	if errs = append(errs, cfgErrs...); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	if err := g.Permit(p); err != nil {
		return nil, err
	}
	if err := s.checkKnowledgeBases(ctx, p, g, false); err != nil {
		return nil, err
	}
	if err := s.checkTools(ctx, p, g); err != nil {
		return nil, err
	}
	sess := s.newSession(p, in.Config.Object())
	sess.UserID = deref(in.UserID)
	s.configs.put(sess.ConfigHash, g)
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return sess, nil
}

// FromAgent opens a session on a stored agent's current configuration, serving the end user
// userID (nil: none).
func (s *Service) FromAgent(ctx context.Context, p domain.Principal, agentKey string, userID *string) (*domain.Session, *domain.Agent, error) {
	if errs := userIDErrors(userID); len(errs) > 0 {
		return nil, nil, domain.Invalid(errs)
	}
	a, err := s.agents.GetByKey(ctx, p, agentKey)
	if err != nil {
		return nil, nil, err
	}
	sess, err := s.onAgent(ctx, p, a, deref(userID))
	if err != nil {
		return nil, nil, err
	}
	return sess, a, nil
}

// OnAgent opens a session on a, an agent p has read (by its key, or in a list): FromAgent without
// reading the agent again, for the surfaces that name agents (MCP, the OpenAI API, A2A).
func (s *Service) OnAgent(ctx context.Context, p domain.Principal, a *domain.Agent) (*domain.Session, error) {
	return s.onAgent(ctx, p, a, "")
}

// OnAgentFor is OnAgent serving the end user userID (nil: none; a bad one is a 400 on user_id),
// for the surfaces whose requests name their user (the OpenAI API's user).
func (s *Service) OnAgentFor(ctx context.Context, p domain.Principal, a *domain.Agent, userID *string) (*domain.Session, error) {
	if errs := userIDErrors(userID); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	return s.onAgent(ctx, p, a, deref(userID))
}

// onAgent is OnAgent for the end user userID ("" none).
func (s *Service) onAgent(ctx context.Context, p domain.Principal, a *domain.Agent, userID string) (*domain.Session, error) {
	g, errs := domain.ParseConfig(a.SystemConfig, s.tools, "")
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	if err := g.Permit(p); err != nil {
		return nil, err
	}
	// A knowledge base deleted since the agent was saved is accepted (the agent still runs and
	// its retrieval reports the gap); another company's — a public agent of another company —
	// is refused.
	if err := s.checkKnowledgeBases(ctx, p, g, true); err != nil {
		return nil, err
	}
	// Nor may it bind the opener's MCP servers: the author would choose whose credentials run.
	if a.Company != p.Company {
		if errs := g.ForeignMCP(); len(errs) > 0 {
			return nil, domain.Invalid(errs)
		}
	}
	if err := s.checkTools(ctx, p, g); err != nil {
		return nil, err
	}
	sess := s.newSession(p, a.SystemConfig)
	s.configs.put(sess.ConfigHash, g)
	sess.AgentID, sess.AgentName, sess.UserID = a.ID, a.Name, userID
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return sess, nil
}

// checkKnowledgeBases refuses a configuration naming a knowledge base p's company may not read
// (one BatchGetItem when it names any).
func (s *Service) checkKnowledgeBases(ctx context.Context, p domain.Principal, g *domain.AgentConfig, allowMissing bool) error {
	refs := g.KnowledgeBaseRefs()
	if len(refs) == 0 {
		return nil
	}
	owners := map[string]string{}
	if s.kbs != nil {
		var err error
		if owners, err = s.kbs.KnowledgeBaseOwners(ctx, domain.KnowledgeBaseIDs(refs)); err != nil {
			return fmt.Errorf("check knowledge bases: %w", err)
		}
	}
	if errs := domain.CheckKnowledgeBaseAccess(refs, owners, p.Company, allowMissing); len(errs) > 0 {
		return domain.Invalid(errs)
	}
	return nil
}

// userIDErrors checks a session's user_id, when given: the field error of one that is not
// domain.ValidUserID.
func userIDErrors(userID *string) []domain.FieldError {
	if userID == nil || domain.ValidUserID(*userID) {
		return nil
	}
	return []domain.FieldError{{Field: "user_id", Message: domain.UserIDRule}}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *Service) newSession(p domain.Principal, cfg map[string]any) *domain.Session {
	now := s.now().UTC()
	name, _ := cfg["name"].(string)
	return &domain.Session{
		ID: uuid.NewString(), Name: name, Owner: p.Owner, Company: p.Company,
		Config: cfg, ConfigHash: domain.ConfigHash(cfg), Variables: map[string]any{},
		CreatedAt: now, UpdatedAt: now,
	}
}

// Get returns a session the caller owns: 404 when it does not exist, 403 when it is another's.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (*domain.Session, error) {
	if !domain.IsID(id) {
		return nil, domain.Errorf(domain.KindNotFound, "Session %q not found", domain.Clip(id, 64))
	}
	sess, err := s.store.GetSession(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.Errorf(domain.KindNotFound, "Session %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get session %s: %w", id, err)
	}
	if !sess.CanAccess(p) {
		return nil, domain.ErrPermission
	}
	return sess, nil
}

// List returns one page of the caller's sessions, newest first: up to limit after skipping
// offset, and whether more follow.
func (s *Service) List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.Session, bool, error) {
	list, more, err := s.store.ListSessions(ctx, p.Company, p.Owner, offset, limit)
	if err != nil {
		return nil, false, fmt.Errorf("list sessions: %w", err)
	}
	return list, more, nil
}

// Delete removes a session with its messages and executions.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	if _, err := s.Get(ctx, p, id); err != nil {
		return err
	}
	if err := s.store.DeleteSession(ctx, id); err != nil && !errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// Rename gives the caller's session id a title, or takes it away (nil): what tells sessions of
// one agent apart in a list. The execution running in the session, if any, keeps running; its
// commit keeps the title.
func (s *Service) Rename(ctx context.Context, p domain.Principal, id string, title *string) (*domain.Session, error) {
	if !domain.IsID(id) {
		return nil, domain.Errorf(domain.KindNotFound, "Session %q not found", domain.Clip(id, 64))
	}
	t := ""
	if title != nil {
		if !domain.ValidSessionTitle(*title) {
			return nil, domain.Invalid([]domain.FieldError{{Field: "title", Message: domain.SessionTitleRule}})
		}
		t = *title
	}
	sess, err := s.store.RenameSession(ctx, p, id, t)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.Errorf(domain.KindNotFound, "Session %s not found", id)
	}
	if errors.Is(err, domain.ErrPermission) {
		return nil, domain.ErrPermission
	}
	if err != nil {
		return nil, fmt.Errorf("rename session %s: %w", id, err)
	}
	return sess, nil
}

// Feedback gives or updates the caller's rating (1 or -1) and comment on a message. Both are
// optional, as in the contract: an absent (nil) one keeps the earlier value, and feedback with
// neither records that the caller saw the message (rating and comment null) or, given again,
// only moves updated_at.
func (s *Service) Feedback(ctx context.Context, p domain.Principal, messageID string, rating *int, comment *string) (*domain.Feedback, error) {
	var errs []domain.FieldError
	if !domain.IsID(messageID) {
		errs = append(errs, domain.FieldError{Field: "message", Message: "must be a message UUID"})
	}
	if rating != nil && *rating != 1 && *rating != -1 {
		errs = append(errs, domain.FieldError{Field: "rating", Message: "must be 1 (thumbs up) or -1 (thumbs down)"})
	}
	if comment != nil && len(*comment) > 10_000 {
		errs = append(errs, domain.FieldError{Field: "comment", Message: "must be at most 10000 characters"})
	}
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	msg, sessionID, err := s.store.FindMessage(ctx, messageID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.Errorf(domain.KindNotFound, "Message %s not found", messageID)
	}
	if err != nil {
		return nil, fmt.Errorf("find message %s: %w", messageID, err)
	}
	if _, err := s.Get(ctx, p, sessionID); err != nil {
		if domain.KindOf(err) == domain.KindNotFound {
			return nil, domain.Errorf(domain.KindNotFound, "Message %s not found", messageID)
		}
		return nil, err
	}
	now := s.now().UTC()
	f := &domain.Feedback{ID: uuid.NewString(), MessageID: msg.ID, SessionID: sessionID, User: p.Owner,
		Rating: rating, Comment: comment, CreatedAt: now, UpdatedAt: now}
	return s.store.PutFeedback(ctx, f)
}
