package api

import (
	"context"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
)

// MemoryService is what the memory endpoints call; memory.Service is the implementation. It
// checks the caller's scopes and company itself: another company's item is not found.
type MemoryService interface {
	CreateRecord(ctx context.Context, p domain.Principal, in memory.RecordInput) (*domain.MemoryRecord, error)
	GetRecord(ctx context.Context, p domain.Principal, id string) (*domain.MemoryRecord, error)
	ListRecords(ctx context.Context, p domain.Principal, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryRecord, bool, error)
	UpdateRecord(ctx context.Context, p domain.Principal, id string, in memory.RecordUpdate) (*domain.MemoryRecord, error)
	DeleteRecord(ctx context.Context, p domain.Principal, id string) error
	CreateBlock(ctx context.Context, p domain.Principal, in memory.BlockInput) (*domain.MemoryBlock, error)
	GetBlock(ctx context.Context, p domain.Principal, id string) (*domain.MemoryBlock, error)
	ListBlocks(ctx context.Context, p domain.Principal, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryBlock, bool, error)
	UpdateBlock(ctx context.Context, p domain.Principal, id string, in memory.BlockUpdate) (*domain.MemoryBlock, error)
	DeleteBlock(ctx context.Context, p domain.Principal, id string) error
	Forget(ctx context.Context, p domain.Principal, userID string) (records, blocks int, err error)
}

// NewMemory is the handler of the memory endpoint group alone.
func NewMemory(svc MemoryService, opts Options) *Group {
	return newGroup(opts).WithMemory(svc)
}

// WithMemory adds the memory routes to g and returns it: the records and blocks agents keep of
// the end users they serve (docs/memory.md), and forgetting one user.
func (g *Group) WithMemory(svc MemoryService) *Group {
	h := &memoryHandlers{svc: svc, g: g}
	// Closures rather than method values, so a group is built (its routes listed) without a service.
	getRecord := func(ctx context.Context, p domain.Principal, id string) (*domain.MemoryRecord, error) {
		return svc.GetRecord(ctx, p, id)
	}
	getBlock := func(ctx context.Context, p domain.Principal, id string) (*domain.MemoryBlock, error) {
		return svc.GetBlock(ctx, p, id)
	}
	delRecord := func(ctx context.Context, p domain.Principal, id string) error { return svc.DeleteRecord(ctx, p, id) }
	delBlock := func(ctx context.Context, p domain.Principal, id string) error { return svc.DeleteBlock(ctx, p, id) }

	g.handle(http.MethodDelete, "/api/v1/memory/", false, h.forget)
	g.handle(http.MethodPost, "/api/v1/memory/records/", false, h.createRecord)
	g.handle(http.MethodGet, "/api/v1/memory/records/", false, listPage(domain.ScopeMemoryRead, viewedList(
		func(r *http.Request, offset, limit int) ([]*domain.MemoryRecord, bool, error) {
			f, err := memoryFilter(r)
			if err != nil {
				return nil, false, err
			}
			return svc.ListRecords(r.Context(), principal(r), f, offset, limit)
		}, memoryRecordView)))
	g.handle(http.MethodGet, "/api/v1/memory/records/{id}/", false, getByID(domain.ScopeMemoryRead, "id", viewed(getRecord, memoryRecordView)))
	g.handle(http.MethodPatch, "/api/v1/memory/records/{id}/", false, h.updateRecord)
	g.handle(http.MethodDelete, "/api/v1/memory/records/{id}/", false, deleteByID(domain.ScopeMemoryWrite, "id", delRecord))
	g.handle(http.MethodPost, "/api/v1/memory/blocks/", false, h.createBlock)
	g.handle(http.MethodGet, "/api/v1/memory/blocks/", false, listPage(domain.ScopeMemoryRead, viewedList(
		func(r *http.Request, offset, limit int) ([]*domain.MemoryBlock, bool, error) {
			f, err := memoryFilter(r)
			if err != nil {
				return nil, false, err
			}
			return svc.ListBlocks(r.Context(), principal(r), f, offset, limit)
		}, memoryBlockView)))
	g.handle(http.MethodGet, "/api/v1/memory/blocks/{id}/", false, getByID(domain.ScopeMemoryRead, "id", viewed(getBlock, memoryBlockView)))
	g.handle(http.MethodPatch, "/api/v1/memory/blocks/{id}/", false, h.updateBlock)
	g.handle(http.MethodDelete, "/api/v1/memory/blocks/{id}/", false, deleteByID(domain.ScopeMemoryWrite, "id", delBlock))
	return g
}

type memoryHandlers struct {
	svc MemoryService
	g   *Group
}

// memoryFilter reads a list's filters: user_id (one user's), agent_id (one agent's) or
// shared=true (the memory shared across the company's agents); neither of the last two lists
// every agent's and the shared.
func memoryFilter(r *http.Request) (domain.MemoryFilter, error) {
	q := r.URL.Query()
	var f domain.MemoryFilter
	var errs []domain.FieldError
	if q.Has("user_id") {
		f.UserID = q.Get("user_id")
		if !domain.ValidUserID(f.UserID) {
			errs = append(errs, domain.FieldError{Field: "user_id", Message: domain.UserIDRule})
		}
	}
	shared, err := boolParam(q, "shared")
	if err != nil {
		return f, err
	}
	if q.Has("agent_id") {
		f.AgentID, f.AgentSet = q.Get("agent_id"), true
		switch n := utf8.RuneCountInString(f.AgentID); {
		case n == 0:
			errs = append(errs, domain.FieldError{Field: "agent_id", Message: "must not be empty (shared=true lists the memory shared across agents)"})
		case n > memory.MaxAgentIDLength:
			errs = append(errs, domain.FieldError{Field: "agent_id", Message: "must be at most 256 characters"})
		case shared:
			errs = append(errs, domain.FieldError{Field: "shared", Message: "cannot be true with agent_id: give one or the other"})
		}
	} else if shared {
		f.AgentSet = true
	}
	if len(errs) > 0 {
		return f, domain.Invalid(errs)
	}
	return f, nil
}

// forget deletes every record (with its vector) and block of one user; again, it deletes none.
func (h *memoryHandlers) forget(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeMemoryWrite); err != nil {
		return err
	}
	q := r.URL.Query()
	user := q.Get("user_id")
	switch {
	case !q.Has("user_id") || user == "":
		return domain.Invalid([]domain.FieldError{{Field: "user_id", Message: "is required: the user whose memory to forget (?user_id=)"}})
	case !domain.ValidUserID(user):
		return domain.Invalid([]domain.FieldError{{Field: "user_id", Message: domain.UserIDRule}})
	}
	records, blocks, err := h.svc.Forget(r.Context(), principal(r), user)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, forgetJSON{UserID: user, RecordsDeleted: records, BlocksDeleted: blocks})
	return nil
}

func (h *memoryHandlers) createRecord(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeMemoryWrite); err != nil {
		return err
	}
	var in memory.RecordInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	rec, err := h.svc.CreateRecord(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, memoryRecordView(rec))
	return nil
}

func (h *memoryHandlers) updateRecord(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeMemoryWrite); err != nil {
		return err
	}
	var in memory.RecordUpdate
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	rec, err := h.svc.UpdateRecord(r.Context(), principal(r), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, memoryRecordView(rec))
	return nil
}

func (h *memoryHandlers) createBlock(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeMemoryWrite); err != nil {
		return err
	}
	var in memory.BlockInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	b, err := h.svc.CreateBlock(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, memoryBlockView(b))
	return nil
}

func (h *memoryHandlers) updateBlock(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeMemoryWrite); err != nil {
		return err
	}
	var in memory.BlockUpdate
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	b, err := h.svc.UpdateBlock(r.Context(), principal(r), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, memoryBlockView(b))
	return nil
}

// forgetJSON is the answer of DELETE /api/v1/memory/?user_id=: what forgetting the user deleted.
type forgetJSON struct {
	UserID         string `json:"user_id"`
	RecordsDeleted int    `json:"records_deleted"`
	BlocksDeleted  int    `json:"blocks_deleted"`
}

// memorySourceJSON is who wrote a record or a block: an execution (a memory tool call, or the
// extraction after a turn) or an API key.
type memorySourceJSON struct {
	Type        string  `json:"type"`
	ExecutionID *string `json:"execution_id"`
	SessionID   *string `json:"session_id"`
	KeyID       *string `json:"key_id"`
}

// memoryRecordJSON is a record as the API shows it; agent_id null is the user's memory shared
// across the company's agents.
type memoryRecordJSON struct {
	ID             string           `json:"id"`
	UserID         string           `json:"user_id"`
	AgentID        *string          `json:"agent_id"`
	Text           string           `json:"text"`
	Source         memorySourceJSON `json:"source"`
	EmbeddingModel string           `json:"embedding_model"`
	CreatedAt      time.Time        `json:"created_at"`
	UpdatedAt      time.Time        `json:"updated_at"`
}

// memoryBlockJSON is a block as the API shows it; source is its last write's.
type memoryBlockJSON struct {
	ID          string           `json:"id"`
	UserID      string           `json:"user_id"`
	AgentID     *string          `json:"agent_id"`
	Label       string           `json:"label"`
	Description string           `json:"description"`
	Value       string           `json:"value"`
	Limit       int              `json:"limit"`
	Source      memorySourceJSON `json:"source"`
	CreatedAt   time.Time        `json:"created_at"`
	UpdatedAt   time.Time        `json:"updated_at"`
}

// orNull is s, or null when it is empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func memorySourceView(s domain.MemorySource) memorySourceJSON {
	return memorySourceJSON{Type: s.Type, ExecutionID: orNull(s.ExecutionID), SessionID: orNull(s.SessionID), KeyID: orNull(s.KeyID)}
}

func memoryRecordView(r *domain.MemoryRecord) memoryRecordJSON {
	return memoryRecordJSON{ID: r.ID, UserID: r.UserID, AgentID: orNull(r.AgentID), Text: r.Text, Source: memorySourceView(r.Source),
		EmbeddingModel: r.EmbeddingModel, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

func memoryBlockView(b *domain.MemoryBlock) memoryBlockJSON {
	return memoryBlockJSON{ID: b.ID, UserID: b.UserID, AgentID: orNull(b.AgentID), Label: b.Label, Description: b.Description,
		Value: b.Value, Limit: b.Limit, Source: memorySourceView(b.Source), CreatedAt: b.CreatedAt.UTC(), UpdatedAt: b.UpdatedAt.UTC()}
}
