package knowledge

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentorch/agentorch/shared/domain"
)

// Reranker orders a search's first-stage hits by their relevance to the query (Bedrock's Rerank
// API): the port declared in domain, which shared/rerank implements.
type Reranker = domain.Reranker

// rerankModels are the models a rerank may name, the default first; none without a reranker.
func (s *Service) rerankModels() []string {
	if s.d.Reranker == nil {
		return nil
	}
	return s.d.Reranker.Models()
}

// checkRerank is the 400 of a search's rerank option the deployment cannot serve: no reranker
// configured, or a model it does not have.
func (s *Service) checkRerank(r *domain.Rerank) error {
	if e := domain.CheckRerankModel(r, s.rerankModels()); e != nil {
		return domain.Invalid([]domain.FieldError{*e})
	}
	return nil
}

// rerank orders hits (the first stage's, best first) by the reranker's relevance to query with
// one Rerank request, and returns the topK most relevant, each with its relevance score as its
// Score. No hits, no request.
func (s *Service) rerank(ctx context.Context, query string, hits []domain.Hit, r *domain.Rerank, topK int) ([]domain.Hit, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	if s.d.Reranker == nil {
		return nil, domain.Invalid([]domain.FieldError{{Field: r.Field, Message: domain.RerankNotConfigured}})
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = h.Text
	}
	ranked, err := s.d.Reranker.Rerank(ctx, domain.RerankRequest{Model: r.Model, Query: query, Texts: texts, TopN: min(topK, len(hits))})
	if err != nil {
		return nil, fmt.Errorf("rerank %d hits: %w", len(hits), err)
	}
	out := make([]domain.Hit, 0, len(ranked))
	seen := make([]bool, len(hits))
	for _, rel := range ranked {
		if rel.Index < 0 || rel.Index >= len(hits) || seen[rel.Index] {
			return nil, fmt.Errorf("rerank %d hits: the reranker answered index %d", len(hits), rel.Index)
		}
		seen[rel.Index] = true
		h := hits[rel.Index]
		h.Score = rel.Score
		out = append(out, h)
	}
	// The reranker answers best first; a stable sort keeps its order among equal scores.
	slices.SortStableFunc(out, func(a, b domain.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if len(out) > topK {
		out = out[:topK]
	}
	return out, nil
}
