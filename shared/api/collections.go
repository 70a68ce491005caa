package api

import (
	"context"
	"net/http"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// CollectionService is what the collections endpoints call (the knowledge feature's
// collections; a fake in handler tests).
type CollectionService interface {
	CreateCollection(ctx context.Context, p domain.Principal, in library.CollectionInput) (*library.Collection, error)
	ListCollections(ctx context.Context, p domain.Principal, offset, limit int) ([]*library.Collection, bool, error)
	GetCollection(ctx context.Context, p domain.Principal, id string) (*library.Collection, error)
	UpdateCollection(ctx context.Context, p domain.Principal, id string, in library.CollectionUpdate) (*library.Collection, error)
	DeleteCollection(ctx context.Context, p domain.Principal, id string) error
	CollectionFiles(ctx context.Context, p domain.Principal, id string, offset, limit int) ([]*domain.File, bool, error)
	AddFiles(ctx context.Context, p domain.Principal, id string, in library.FileIDsInput) ([]library.BulkItem, error)
	BulkCollection(ctx context.Context, p domain.Principal, id string, in library.CollectionBulkInput) ([]library.BulkItem, error)
}

// NewCollections is the handler of the collections endpoint group: named sets of files.
func NewCollections(svc CollectionService, opts Options) *Group {
	g := newGroup(opts)
	h := &collectionHandlers{svc: svc, g: g}
	g.handle(http.MethodPost, "/api/v1/collections/", false, h.create)
	g.handle(http.MethodGet, "/api/v1/collections/", false, listPage(domain.ScopeKnowledgeRead, func(r *http.Request, offset, limit int) ([]*collectionJSON, bool, error) {
		list, more, err := svc.ListCollections(r.Context(), principal(r), offset, limit)
		return collectionViews(list), more, err
	}))
	g.handle(http.MethodGet, "/api/v1/collections/{collection_id}/", false, getByID(domain.ScopeKnowledgeRead, "collection_id", viewed(svc.GetCollection, collectionDetailView)))
	// A change of its name or description, answered as GET answers it.
	g.handle(http.MethodPatch, "/api/v1/collections/{collection_id}/", false, h.update)
	// Deleting a collection leaves its files.
	g.handle(http.MethodDelete, "/api/v1/collections/{collection_id}/", false, deleteByID(domain.ScopeKnowledgeWrite, "collection_id", svc.DeleteCollection))
	// A collection's files, in the order they were added, a page at a time.
	g.handle(http.MethodGet, "/api/v1/collections/{collection_id}/files/", false, listPage(domain.ScopeKnowledgeRead, func(r *http.Request, offset, limit int) ([]*fileJSON, bool, error) {
		files, more, err := svc.CollectionFiles(r.Context(), principal(r), r.PathValue("collection_id"), offset, limit)
		return fileViews(files), more, err
	}))
	g.handle(http.MethodPost, "/api/v1/collections/{collection_id}/files/", false, h.addFiles)
	g.handle(http.MethodPost, "/api/v1/collections/{collection_id}/bulk/", false, h.bulk)
	return g
}

type collectionHandlers struct {
	svc CollectionService
	g   *Group
}

func (h *collectionHandlers) create(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	var in library.CollectionInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	c, err := h.svc.CreateCollection(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, collectionView(c))
	return nil
}

func (h *collectionHandlers) update(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	var in library.CollectionUpdate
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	c, err := h.svc.UpdateCollection(r.Context(), principal(r), r.PathValue("collection_id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, collectionDetailView(c))
	return nil
}

func (h *collectionHandlers) addFiles(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	var in library.FileIDsInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	res, err := h.svc.AddFiles(r.Context(), principal(r), r.PathValue("collection_id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, addFilesResultView(res))
	return nil
}

// bulk adds or removes many files (operation add_files or remove_files).
func (h *collectionHandlers) bulk(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeKnowledgeWrite); err != nil {
		return err
	}
	var in library.CollectionBulkInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	res, err := h.svc.BulkCollection(r.Context(), principal(r), r.PathValue("collection_id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, bulkResultView(res))
	return nil
}
