package api_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/images"
	"github.com/agentorch/agentorch/shared/sessions"
)

// fakes are in-memory services behind the real handlers, for tests of the HTTP contract
// (decoding, statuses, envelopes, paging, headers, scopes) that need no feature logic. The
// features have their own tests; e2e tests run the same handlers over the local stack.
type fakes struct {
	mu       sync.Mutex
	keys     map[string]domain.Principal // by secret
	agents   *fakeAgents
	sessions *fakeSessions
	keySvc   *fakeKeys
}

// newFakeStack is a stack whose groups run over fakes: the same requests, OpenAPI checks and
// helpers as newStack, in milliseconds.
func newFakeStack(t testing.TB) (*stack, *fakes) {
	t.Helper()
	f := &fakes{keys: map[string]domain.Principal{}, agents: &fakeAgents{}, keySvc: &fakeKeys{}}
	f.sessions = &fakeSessions{agents: f.agents}
	opts := api.Options{Auth: fakeAuth{f}}
	groups := []struct {
		prefix string
		h      http.Handler
	}{
		{"/api/v1/agent", api.NewAgents(f.agents, opts)},
		{"/api/v1/sessions", api.NewSessions(f.sessions, opts)},
		{"/api/v1/runtime", api.NewRuntime(f.sessions, opts)},
		{"/api/v1/auth", api.NewAuth(f.keySvc, opts)},
		{"/api/v1/api-keys", api.NewAuth(f.keySvc, opts)},
		{"/api/v1/images", api.NewImages(fakeImages{}, api.StaticBaseURL("http://127.0.0.1:3000"), opts)},
		{"/media", api.NewImages(fakeImages{}, api.StaticBaseURL("http://127.0.0.1:3000"), opts)},
	}
	meta := api.NewMeta(opts)
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As API Gateway routes: by path prefix, unclean paths included.
		p := "/" + strings.TrimLeft(r.URL.Path, "/")
		for _, g := range groups {
			if strings.HasPrefix(p, g.prefix) {
				g.h.ServeHTTP(w, r)
				return
			}
		}
		meta.ServeHTTP(w, r)
	})
	return &stack{t: t, mux: mux, fakes: f}, f
}

// key is a key of owner in company with every scope but admin, or as opts change it.
func (f *fakes) key(owner, company string, opts ...func(*auth.NewKey)) string {
	in := auth.NewKey{Name: "test", Owner: owner, Company: company}
	for _, o := range opts {
		o(&in)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	secret := "ak_" + uuid.NewString()
	f.keys[secret] = domain.Principal{KeyID: uuid.NewString(), Owner: in.Owner, Company: in.Company, Scopes: in.Scopes,
		RateLimit: in.RateLimit, ExpiresAt: time.Now().Add(time.Hour)}
	return secret
}

// fakeAuth authenticates the fakes' keys, and "Bearer <key>" as a token of that key; it never
// limits.
type fakeAuth struct{ f *fakes }

func (a fakeAuth) Authenticate(_ context.Context, apiKey, authorization string) (domain.Principal, error) {
	a.f.mu.Lock()
	defer a.f.mu.Unlock()
	if p, ok := a.f.keys[apiKey]; ok && apiKey != "" {
		return p, nil
	}
	if tok, ok := strings.CutPrefix(authorization, "Bearer "); ok && apiKey == "" {
		if p, ok := a.f.keys[tok]; ok {
			p.ViaToken = true
			return p, nil
		}
	}
	return domain.Principal{}, domain.ErrBadKey
}

func (fakeAuth) Limit(context.Context, domain.Principal) (auth.Rate, error) { return auth.Rate{}, nil }

// page is items[offset:offset+limit] and whether more follow.
func page[T any](items []T, offset, limit int) ([]T, bool) {
	if offset >= len(items) {
		return []T{}, false
	}
	end := min(offset+limit, len(items))
	return items[offset:end], end < len(items)
}

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

func (s *fakeAgents) Validate(_ context.Context, _ domain.Principal, cfg map[string]any, prefix string) ([]domain.FieldError, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checked = append(s.checked, validated{cfg, prefix})
	return s.invalid, nil
}

func (s *fakeAgents) Create(_ context.Context, p domain.Principal, cfg map[string]any, f agents.Flags) (*domain.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC().Truncate(time.Second)
	name, _ := cfg["name"].(string)
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
func (s *fakeAgents) Update(_ context.Context, p domain.Principal, id string, cfg map[string]any, merge bool, f agents.Flags) (*domain.Agent, error) {
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
			a.VersionNumber = "1.0." + itoa(len(vs))
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

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// fakeSessions is the sessions and the runtime groups' service: sessions newest first, and
// executions that echo the user's text at once (queued ones complete when polled).
type fakeSessions struct {
	agents   *fakeAgents // for FromAgent
	mu       sync.Mutex
	list     []*domain.Session
	messages map[string][]domain.Message
	events   map[string][]map[string]any
	execs    map[string]*domain.Execution
	busy     map[string]bool // sessions leased by another execution
}

// lease marks a session as running another execution: executes answer a conflict.
func (s *fakeSessions) lease(sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy == nil {
		s.busy = map[string]bool{}
	}
	s.busy[sid] = true
}

func (s *fakeSessions) Create(_ context.Context, p domain.Principal, cfg map[string]any) (*domain.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	name, _ := cfg["name"].(string)
	sess := &domain.Session{ID: uuid.NewString(), Name: name, Owner: p.Owner, Company: p.Company, Config: cfg, ConfigHash: domain.ConfigHash(cfg),
		CreatedAt: now, UpdatedAt: now}
	s.list = append([]*domain.Session{sess}, s.list...)
	return sess, nil
}

// FromAgent starts a session on the configuration of the agent of agentKey that p may read.
func (s *fakeSessions) FromAgent(ctx context.Context, p domain.Principal, agentKey string) (*domain.Session, *domain.Agent, error) {
	var agent *domain.Agent
	if s.agents != nil {
		s.agents.mu.Lock()
		for _, a := range s.agents.list {
			if a.AgentKey == agentKey && a.CanRead(p) {
				agent = a
			}
		}
		s.agents.mu.Unlock()
	}
	if agent == nil {
		return nil, nil, domain.Errorf(domain.KindNotFound, "No agent with agent_key %q", agentKey)
	}
	sess, err := s.Create(ctx, p, agent.SystemConfig)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.AgentID, sess.AgentName = agent.ID, agent.Name
	return sess, agent, nil
}

// Feedback records the feedback on any message id as the caller's.
func (s *fakeSessions) Feedback(_ context.Context, p domain.Principal, messageID string, rating *int, comment *string) (*domain.Feedback, error) {
	now := time.Now().UTC()
	return &domain.Feedback{ID: uuid.NewString(), MessageID: messageID, SessionID: uuid.NewString(), User: p.Owner, Rating: rating,
		Comment: comment, CreatedAt: now, UpdatedAt: now}, nil
}

func (s *fakeSessions) find(p domain.Principal, id string) (*domain.Session, error) {
	for _, sess := range s.list {
		if sess.ID == id {
			if !sess.CanAccess(p) {
				return nil, domain.ErrPermission
			}
			return sess, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (s *fakeSessions) List(_ context.Context, p domain.Principal, offset, limit int) ([]*domain.Session, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []*domain.Session
	for _, sess := range s.list {
		if sess.CanAccess(p) {
			mine = append(mine, sess)
		}
	}
	list, more := page(mine, offset, limit)
	return list, more, nil
}

func (s *fakeSessions) Get(_ context.Context, p domain.Principal, id string) (*domain.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.find(p, id)
}

func (s *fakeSessions) Delete(_ context.Context, p domain.Principal, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.find(p, id); err != nil {
		return err
	}
	s.list = slicesDelete(s.list, id)
	return nil
}

func slicesDelete(list []*domain.Session, id string) []*domain.Session {
	out := list[:0]
	for _, s := range list {
		if s.ID != id {
			out = append(out, s)
		}
	}
	return out
}

// record stores an exchange (the user's text and its echo) and its events as an execution.
func (s *fakeSessions) record(sess *domain.Session, req sessions.ExecuteRequest, status string) (*domain.Execution, []domain.Message) {
	if s.messages == nil {
		s.messages, s.events, s.execs = map[string][]domain.Message{}, map[string][]map[string]any{}, map[string]*domain.Execution{}
	}
	now := time.Now().UTC()
	e := &domain.Execution{ID: uuid.NewString(), SessionID: sess.ID, CorrelationID: req.CorrelationID, Status: status, StopReason: "end_turn", CreatedAt: now}
	text, _ := req.Content.(string)
	user := domain.Message{ID: uuid.NewString(), Role: "user", Content: text, Visible: true, ExecutionID: e.ID, CreatedAt: now}
	reply := domain.Message{ID: uuid.NewString(), Role: "assistant", Content: "echo: " + text, Visible: true, ExecutionID: e.ID, CreatedAt: now}
	s.messages[sess.ID] = append(s.messages[sess.ID], user, reply)
	for i, typ := range []string{"node_started", "model_call", "node_finished"} {
		ev := map[string]any{"sequence": i, "type": typ, "execution_id": e.ID, "correlation_id": req.CorrelationID, "timestamp": now.Format(time.RFC3339Nano)}
		e.Events = append(e.Events, ev)
		s.events[sess.ID] = append(s.events[sess.ID], ev)
	}
	if status == domain.ExecCompleted {
		e.CompletedAt = &now
	}
	s.execs[e.ID] = e
	return e, []domain.Message{reply}
}

func (s *fakeSessions) Execute(_ context.Context, p domain.Principal, sid string, req sessions.ExecuteRequest, obs sessions.Observer) (*sessions.Result, error) {
	s.mu.Lock()
	sess, err := s.find(p, sid)
	if err == nil && s.busy[sid] {
		err = domain.Errorf(domain.KindConflict, "Session %s is busy with another execution", sid)
	}
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	e, msgs := s.record(sess, req, domain.ExecCompleted)
	s.mu.Unlock()
	if obs.OnEvent != nil {
		for _, ev := range e.Events {
			obs.OnEvent(engine.Event{Type: ev["type"].(string)})
		}
	}
	if obs.OnText != nil {
		obs.OnText("agent", msgs[0].Content)
	}
	return &sessions.Result{Session: sess, Execution: e, Messages: msgs}, nil
}

func (s *fakeSessions) Enqueue(_ context.Context, p domain.Principal, sid string, req sessions.ExecuteRequest, _ map[string]any) (*domain.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, err := s.find(p, sid)
	if err != nil {
		return nil, err
	}
	e, _ := s.record(sess, req, domain.ExecQueued)
	queued := *e
	e.Status = domain.ExecCompleted // by the time it is polled
	now := time.Now().UTC()
	e.CompletedAt = &now
	return &queued, nil
}

func (s *fakeSessions) GetExecution(_ context.Context, p domain.Principal, sid, execID string) (*domain.Session, *domain.Execution, []domain.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, err := s.find(p, sid)
	if err != nil {
		return nil, nil, nil, err
	}
	e, ok := s.execs[execID]
	if !ok || e.SessionID != sid {
		return nil, nil, nil, domain.ErrNotFound
	}
	var msgs []domain.Message
	for _, m := range s.messages[sid] {
		if m.ExecutionID == execID && m.Role == "assistant" {
			msgs = append(msgs, m)
		}
	}
	return sess, e, msgs, nil
}

func (s *fakeSessions) Messages(_ context.Context, p domain.Principal, sid string, limit, offset int) ([]domain.Message, int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.find(p, sid); err != nil {
		return nil, 0, false, err
	}
	all := s.messages[sid]
	list, more := page(all, offset, limit)
	return list, len(all), more, nil
}

// Events pages the session's events, of one correlation id when given.
func (s *fakeSessions) Events(_ context.Context, p domain.Principal, sid, correlationID, _ string, offset, limit int) (sessions.EventsPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.find(p, sid); err != nil {
		return sessions.EventsPage{}, err
	}
	var all []map[string]any
	for _, ev := range s.events[sid] {
		e := s.execs[ev["execution_id"].(string)]
		if correlationID == "" || (e.CorrelationID != nil && *e.CorrelationID == correlationID) {
			all = append(all, ev)
		}
	}
	list, more := page(all, offset, limit)
	return sessions.EventsPage{Events: list, Total: len(all), More: more}, nil
}

// fakeKeys keeps the keys made through the API and what each call was asked.
type fakeKeys struct {
	mu      sync.Mutex
	created []auth.NewKey
	keys    []*domain.APIKey
	revoked []string
}

func (*fakeKeys) IssueToken(context.Context, domain.Principal) (string, time.Duration, error) {
	return "t." + uuid.NewString(), 15 * time.Minute, nil
}

// CreateKeyAs makes the key as asked (a day when no lifetime is given), owned by the caller
// unless another owner is named.
func (k *fakeKeys) CreateKeyAs(_ context.Context, p domain.Principal, in auth.NewKey) (*domain.APIKey, string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.created = append(k.created, in)
	now := time.Now().UTC().Truncate(time.Second)
	expires := in.ExpiresAt
	switch {
	case in.TTL > 0:
		expires = now.Add(in.TTL)
	case expires.IsZero():
		expires = now.Add(24 * time.Hour)
	}
	owner := in.Owner
	if owner == "" {
		owner = p.Owner
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret := "ak_" + base64.RawURLEncoding.EncodeToString(b[:])
	key := &domain.APIKey{ID: uuid.NewString(), Name: in.Name, Prefix: secret[:10], Hash: "hash-" + secret, Owner: owner, Company: p.Company,
		ParentID: &p.KeyID, Scopes: append([]string{}, in.Scopes...), RateLimit: in.RateLimit, ExpiresAt: expires, CreatedAt: now}
	k.keys = append(k.keys, key)
	return key, secret, nil
}

func (k *fakeKeys) ListKeysAs(_ context.Context, p domain.Principal) ([]*domain.APIKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*domain.APIKey
	for _, key := range k.keys {
		if key.Company == p.Company {
			out = append(out, key)
		}
	}
	return out, nil
}

func (k *fakeKeys) RevokeKeyAs(_ context.Context, p domain.Principal, id string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, key := range k.keys {
		if key.ID == id && key.Company == p.Company {
			k.revoked = append(k.revoked, id)
			return nil
		}
	}
	return domain.ErrNotFound
}

// fakeImages stores nothing and finds nothing.
type fakeImages struct{}

func (fakeImages) Upload(_ context.Context, data []byte) (*images.Uploaded, error) {
	mt, err := images.Check(data)
	if err != nil {
		return nil, err
	}
	return &images.Uploaded{Name: uuid.NewString() + ".png", MediaType: mt, Size: len(data)}, nil
}

func (fakeImages) Open(context.Context, string) ([]byte, string, error) {
	return nil, "", domain.ErrNotFound
}
