package api

import (
	"context"
	"net/http"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// KnowledgeService is what the knowledge-bases endpoints call (the knowledge feature's
// knowledge bases; a fake in handler tests).
type KnowledgeService interface {
	CreateKB(ctx context.Context, p domain.Principal, in knowledge.KBInput) (*knowledge.KB, error)
	ListKBs(ctx context.Context, p domain.Principal, f knowledge.KBFilter) ([]*knowledge.KB, bool, error)
	GetKB(ctx context.Context, p domain.Principal, id string) (*knowledge.KB, error)
	DeleteKB(ctx context.Context, p domain.Principal, id string) error
	CheckStatus(ctx context.Context, p domain.Principal, id string) (*knowledge.KBStatus, error)
	SyncKB(ctx context.Context, p domain.Principal, id string) (*knowledge.KB, error)
	Search(ctx context.Context, p domain.Principal, id string, in knowledge.SearchInput) ([]domain.Hit, error)
	Chunks(ctx context.Context, p domain.Principal, id string, in knowledge.ChunksInput) ([]knowledge.Chunk, bool, error)
}

// NewKnowledge is the handler of the knowledge-bases endpoint group: creation (ingestion starts
// in the background), status, re-ingestion, deletion and search.
func NewKnowledge(svc KnowledgeService, opts Options) *Group {
	g := newGroup(opts)
	h := &kbHandlers{svc: svc, g: g}
	g.handle(http.MethodPost, "/api/v1/knowledge-bases/", false, h.create)
	g.handle(http.MethodGet, "/api/v1/knowledge-bases/", false, listPage(domain.ScopeKnowledgeRead, func(r *http.Request, offset, limit int) ([]*kbListJSON, bool, error) {
		q := r.URL.Query()
		list, more, err := svc.ListKBs(r.Context(), principal(r), knowledge.KBFilter{
			Status: q.Get("status"), Engine: q.Get("processing_engine"), Offset: offset, Limit: limit})
		return kbListViews(list), more, err
	}))
	g.handle(http.MethodGet, "/api/v1/knowledge-bases/{kb_id}/", false, getByID(domain.ScopeKnowledgeRead, "kb_id", viewed(svc.GetKB, kbDetailView)))
	// Deleting a knowledge base removes its indexed chunks; collections and files remain.
	g.handle(http.MethodDelete, "/api/v1/knowledge-bases/{kb_id}/", false, deleteByID(domain.ScopeKnowledgeWrite, "kb_id", svc.DeleteKB))
	g.handle(http.MethodGet, "/api/v1/knowledge-bases/{kb_id}/check_status/", false, getByID(domain.ScopeKnowledgeRead, "kb_id", viewed(svc.CheckStatus, statusView)))
	g.handle(http.MethodPost, "/api/v1/knowledge-bases/{kb_id}/sync/", false, h.sync)
	g.handle(http.MethodPost, "/api/v1/knowledge-bases/{kb_id}/search/", false, h.search)
	// One file's chunks as indexed, in document order, a page at a time (kbchunks.go).
	g.handle(http.MethodGet, "/api/v1/knowledge-bases/{kb_id}/chunks/", false, listPage(domain.ScopeKnowledgeRead, chunksPage(svc)))
	return g
}

type kbHandlers struct {
	svc KnowledgeService
	g   *Group
}

func (h *kbHandlers) create(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	var in knowledge.KBInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	kb, err := h.svc.CreateKB(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, kbDetailView(kb))
	return nil
}

// sync starts a re-ingestion and answers 202 with the record; check_status follows it.
func (h *kbHandlers) sync(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	id := r.PathValue("kb_id")
	kb, err := h.svc.SyncKB(r.Context(), principal(r), id)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/knowledge-bases/"+id+"/check_status/")
	writeJSON(w, http.StatusAccepted, kbDetailView(kb))
	return nil
}

func (h *kbHandlers) search(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeRead); err != nil {
		return err
	}
	var in knowledge.SearchInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	res, err := h.svc.Search(r.Context(), principal(r), r.PathValue("kb_id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, searchView(res))
	return nil
}
