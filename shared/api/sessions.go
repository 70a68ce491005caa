package api

import (
	"context"
	"net/http"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// SessionService is what the sessions group calls; sessions.Service is the implementation.
type SessionService interface {
	Create(ctx context.Context, p domain.Principal, in sessions.CreateInput) (*domain.Session, error)
	FromAgent(ctx context.Context, p domain.Principal, agentKey string, userID *string) (*domain.Session, *domain.Agent, error)
	Feedback(ctx context.Context, p domain.Principal, messageID string, rating *int, comment *string) (*domain.Feedback, error)
	List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.Session, bool, error)
	Get(ctx context.Context, p domain.Principal, id string) (*domain.Session, error)
	Delete(ctx context.Context, p domain.Principal, id string) error
	// Rename gives the session a title, or takes it away (nil).
	Rename(ctx context.Context, p domain.Principal, id string, title *string) (*domain.Session, error)
}

// NewSessions is the handler of the sessions endpoint group.
func NewSessions(svc SessionService, opts Options) *Group {
	g := newGroup(opts)
	h := &sessionHandlers{svc: svc, g: g}
	g.handle(http.MethodPost, "/api/v1/sessions/", false, h.create)
	g.handle(http.MethodGet, "/api/v1/sessions/", false, listPage(domain.ScopeSessionRead, h.list))
	g.handle(http.MethodGet, "/api/v1/sessions/from-agent/", false, h.fromAgent)
	g.handle(http.MethodPost, "/api/v1/sessions/feedback/", false, h.feedback)
	g.handle(http.MethodGet, "/api/v1/sessions/{id}/", false, getByID(domain.ScopeSessionRead, "id", viewed(svc.Get, viewSession)))
	g.handle(http.MethodPatch, "/api/v1/sessions/{id}/", false, h.rename)
	g.handle(http.MethodDelete, "/api/v1/sessions/{id}/", false, deleteByID(domain.ScopeSessionsWrite, "id", svc.Delete))
	return g
}

type sessionHandlers struct {
	svc SessionService
	g   *Group
}

// sessionView is a session as the API shows it (the checkpoint's variables included).
type sessionView struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Title        *string        `json:"title"` // the name a person gave it; null for none
	ConfigHash   string         `json:"config_hash"`
	Config       map[string]any `json:"config"`
	AgentID      *string        `json:"agent_id"`
	UserID       *string        `json:"user_id"` // the end user served; null for none
	Variables    map[string]any `json:"variables"`
	MessageCount int            `json:"message_count"`
	Executions   int            `json:"execution_count"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
	// RequiredAction is what a paused execution of the session waits for.
	RequiredAction *requiredActionJSON `json:"required_action,omitempty"`
	// ActiveExecutionID is the execution running now (a cancel names it); absent when none.
	ActiveExecutionID string `json:"active_execution_id,omitempty"`
}

func viewSession(s *domain.Session) sessionView {
	v := sessionView{ID: s.ID, Name: s.Name, ConfigHash: s.ConfigHash, Config: s.Config, Variables: s.Variables,
		MessageCount: s.VisibleCount, Executions: s.Executions, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if s.AgentID != "" {
		v.AgentID = &s.AgentID
	}
	if s.UserID != "" {
		v.UserID = &s.UserID
	}
	if s.Title != "" {
		v.Title = &s.Title
	}
	if v.Variables == nil {
		v.Variables = map[string]any{}
	}
	v.RequiredAction = viewRequiredAction(s.Pending)
	v.ActiveExecutionID = s.ActiveExecutionID
	return v
}

func (h *sessionHandlers) create(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionsWrite); err != nil {
		return err
	}
	body, err := decodeObject(w, r, h.g.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	// user_id sits beside the configuration's fields: it is no part of the configuration
	// stored, shown and hashed.
	in := sessions.CreateInput{}
	if x, ok := body["user_id"]; ok {
		delete(body, "user_id")
		if x != nil {
			id, ok := x.(string)
			if !ok {
				return domain.Invalid([]domain.FieldError{{Field: "user_id", Message: domain.UserIDRule}})
			}
			in.UserID = &id
		}
	}
	in.Config = domain.ConfigDocOf(body)
	s, err := h.svc.Create(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, sessionCreatedJSON{Success: true, SessionID: s.ID, ConfigHash: s.ConfigHash})
	return nil
}

func (h *sessionHandlers) fromAgent(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionsWrite); err != nil {
		return err
	}
	key := r.URL.Query().Get("agent_key")
	if key == "" {
		return domain.Invalid([]domain.FieldError{{Field: "agent_key", Message: "query parameter is required"}})
	}
	var userID *string
	if q := r.URL.Query(); q.Has("user_id") {
		id := q.Get("user_id")
		userID = &id
	}
	s, a, err := h.svc.FromAgent(r.Context(), principal(r), key, userID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sessionFromAgentJSON{Success: true, SessionID: s.ID, ConfigHash: s.ConfigHash, AgentID: a.ID, AgentName: a.Name})
	return nil
}

// sessionPatchRequest is the body of PATCH /api/v1/sessions/{id}/: the title, required, a
// string or null (which takes the title away).
type sessionPatchRequest struct {
	Title *string `json:"title"`
}

// rename answers the session renamed, as GET shows it. Any field but title is a 400 naming it,
// as are a title left out and one of another type.
func (h *sessionHandlers) rename(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionsWrite); err != nil {
		return err
	}
	m, b, err := readObject(w, r, h.g.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	var req sessionPatchRequest
	if err := decodeJSON(m, b, &req); err != nil {
		return err
	}
	if _, ok := m["title"]; !ok {
		return domain.Invalid([]domain.FieldError{{Field: "title", Message: "is required: a string of 1 to 200 characters, or null to take the title away"}})
	}
	s, err := h.svc.Rename(r.Context(), principal(r), r.PathValue("id"), req.Title)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewSession(s))
	return nil
}

type feedbackRequest struct {
	firstError
	Message *string `json:"message"`
	Rating  *int    `json:"rating"`
	Comment *string `json:"comment"`
}

func (h *sessionHandlers) feedback(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionsWrite); err != nil {
		return err
	}
	var req feedbackRequest
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.Message == nil {
		return domain.Invalid([]domain.FieldError{{Field: "message", Message: "is required"}})
	}
	f, err := h.svc.Feedback(r.Context(), principal(r), *req.Message, req.Rating, req.Comment)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewFeedback(f))
	return nil
}

// list is the caller's sessions, newest first, as the API shows them.
func (h *sessionHandlers) list(r *http.Request, offset, limit int) ([]sessionView, bool, error) {
	list, more, err := h.svc.List(r.Context(), principal(r), offset, limit)
	if err != nil {
		return nil, false, err
	}
	out := make([]sessionView, len(list))
	for i, s := range list {
		out[i] = viewSession(s)
	}
	return out, more, nil
}
