package api_test

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
)

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

func (s *fakeSessions) Create(_ context.Context, p domain.Principal, in sessions.CreateInput) (*domain.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	sess := &domain.Session{ID: uuid.NewString(), Name: in.Config.Name(), Owner: p.Owner, Company: p.Company, Config: in.Config.Object(), ConfigHash: in.Config.Hash(),
		CreatedAt: now, UpdatedAt: now}
	s.list = append([]*domain.Session{sess}, s.list...)
	return sess, nil
}

// FromAgent starts a session on the configuration of the agent of agentKey that p may read.
func (s *fakeSessions) FromAgent(ctx context.Context, p domain.Principal, agentKey string, _ *string) (*domain.Session, *domain.Agent, error) {
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
	sess, err := s.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(agent.SystemConfig)})
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

// Rename sets the title as the store does; the feature's rules of a title are not the fake's.
func (s *fakeSessions) Rename(_ context.Context, p domain.Principal, id string, title *string) (*domain.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, err := s.find(p, id)
	if err != nil {
		return nil, err
	}
	sess.Title = ""
	if title != nil {
		sess.Title = *title
	}
	c := *sess
	return &c, nil
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
	text := req.Content.Text
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

func (s *fakeSessions) Enqueue(_ context.Context, p domain.Principal, sid string, req sessions.ExecuteRequest) (*domain.Execution, error) {
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

func (s *fakeSessions) Cancel(_ context.Context, p domain.Principal, sid, execID string) (*domain.Execution, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.find(p, sid); err != nil {
		return nil, false, err
	}
	e, ok := s.execs[execID]
	switch {
	case !ok || e.SessionID != sid:
		return nil, false, domain.ErrNotFound
	case e.Status == domain.ExecCompleted || e.Status == domain.ExecFailed || e.Status == domain.ExecCancelled:
		return nil, false, &domain.Error{Kind: domain.KindConflict, Message: "Execution " + execID + " has already finished"}
	}
	now := time.Now().UTC()
	e.Status, e.StopReason, e.CompletedAt = domain.ExecCancelled, sessions.StopCancelled, &now
	return e, true, nil
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
