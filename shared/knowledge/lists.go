package knowledge

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// allKBs reads every knowledge base of a company (as allCollections).
func (s *Service) allKBs(ctx context.Context, company string) ([]*domain.KnowledgeBase, error) {
	kbs, _, err := library.Collect(ctx, func(ctx context.Context, after string, n int) ([]*domain.KnowledgeBase, string, error) {
		return s.d.Store.ListKBs(ctx, company, after, n)
	}, nil, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("list knowledge bases: %w", err)
	}
	return kbs, nil
}

// sourceFiles loads the files knowledge bases name (datasources and selected files), by id.
func (s *Service) sourceFiles(ctx context.Context, company string, kbs ...*domain.KnowledgeBase) (map[string]*domain.File, error) {
	var ids []string
	for _, kb := range kbs {
		for id := range kb.Sources {
			ids = append(ids, id)
		}
		ids = append(ids, kb.Files...)
	}
	return s.FilesOf(ctx, company, ids)
}

// searchableFiles loads the files of knowledge bases' datasources that a search may find (not
// removed, not failed), by id: one batch read per 100 of them, whatever the company's size.
func (s *Service) searchableFiles(ctx context.Context, company string, kbs ...*domain.KnowledgeBase) (map[string]*domain.File, error) {
	var ids []string
	for _, kb := range kbs {
		for id, d := range kb.Sources {
			if d.Status != domain.IngestRemoved && d.Status != domain.IngestFailed {
				ids = append(ids, id)
			}
		}
	}
	return s.FilesOf(ctx, company, ids)
}
