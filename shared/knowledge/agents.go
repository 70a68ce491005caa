package knowledge

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// SearchKnowledge is the retrieval of an agent (engine.Retriever): query searched in the
// knowledge bases of refs within company, each with its own retrieval_config (topK > 0
// overrides every top_k: the knowledge_base_search tool's argument). Entries with the same
// options share their searches: one embedding of the query per embedding model and one index
// search per (index, options) group, so at most one of each per knowledge base (the tokens of
// the query's embeddings are in the result, for the caller's usage count; a group whose rerank
// is on adds one Rerank request). The hits are merged best first: by score when every entry's
// scores are of one scale (the same strategy, or reranked by the same model), else by rank (the
// best of each group, then the second best …), because BM25, cosine and relevance scores are
// not comparable. An entry whose rerank the deployment cannot serve (no reranker, another
// model) is searched without it and reported as a Problem.
//
// A knowledge base that cannot be searched — deleted, another company's, never ingested — is a
// Problem and the others are searched; err is for the search itself failing.
func (s *Service) SearchKnowledge(ctx context.Context, company, query string, refs []domain.KnowledgeBaseRef, topK int) (*domain.RetrievalResult, error) {
	query = strings.TrimSpace(query)
	if utf8.RuneCountInString(query) > domain.MaxQueryLength {
		query = string([]rune(query)[:domain.MaxQueryLength])
	}
	res := &domain.RetrievalResult{Hits: []domain.Hit{}}
	type group struct {
		opts domain.RetrievalConfig
		kbs  []*domain.KnowledgeBase
	}
	var groups []*group
	p := domain.Principal{Company: company}
	seen := map[string]bool{}
	for _, ref := range refs {
		if seen[ref.ID] {
			continue
		}
		seen[ref.ID] = true
		kb, err := s.kb(ctx, p, ref.ID)
		if domain.KindOf(err) == domain.KindNotFound {
			res.Problems = append(res.Problems, domain.RetrievalProblem{KnowledgeBaseID: ref.ID,
				Message: fmt.Sprintf("knowledge base %q (%s) not found: it was deleted or is not your company's; it was not searched", domain.Clip(ref.Name, 60), domain.Clip(ref.ID, 60))})
			continue
		}
		if err != nil {
			return nil, err
		}
		if kb.Completed == nil {
			res.Problems = append(res.Problems, domain.RetrievalProblem{KnowledgeBaseID: ref.ID,
				Message: fmt.Sprintf("knowledge base %q has not completed an ingestion yet (status %s); it was not searched", domain.Clip(kb.Name, 60), kb.Status)})
			continue
		}
		opts := ref.Retrieval
		if topK > 0 {
			opts.TopK = topK
		}
		if opts.TopK <= 0 {
			opts.TopK = domain.DefaultRetrievalTopK
		}
		if opts.Strategy == "" {
			opts.Strategy = domain.StrategyDense
		}
		if e := domain.CheckRerankModel(opts.Rerank, s.rerankModels()); e != nil {
			// The agent still answers, from the first stage's order, and its client is told.
			res.Problems = append(res.Problems, domain.RetrievalProblem{KnowledgeBaseID: ref.ID,
				Message: fmt.Sprintf("knowledge base %q was searched without reranking: %s: %s", domain.Clip(kb.Name, 60), e.Field, e.Message)})
			opts.Rerank = nil
		} else if opts.Rerank != nil && opts.Rerank.Model == "" {
			r := *opts.Rerank // the default by its name, so that it groups with entries naming it
			r.Model = s.rerankModels()[0]
			opts.Rerank = &r
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return sameOptions(g.opts, opts) })
		if i < 0 {
			groups = append(groups, &group{opts: opts})
			i = len(groups) - 1
		}
		groups[i].kbs = append(groups[i].kbs, kb)
	}
	if len(groups) == 0 || query == "" {
		return res, nil
	}
	var all []*domain.KnowledgeBase
	for _, g := range groups {
		all = append(all, g.kbs...)
	}
	files, err := s.searchableFiles(ctx, company, all...)
	if err != nil {
		return nil, err
	}
	qe := &queryEmbeddings{}
	ranked := make([][]domain.Hit, len(groups))
	mixed := false
	for i, g := range groups {
		mixed = mixed || scale(g.opts) != scale(groups[0].opts)
		if ranked[i], err = s.searchWith(ctx, company, g.kbs, files, query, g.opts, qe); err != nil {
			return nil, err
		}
	}
	res.EmbeddingTokens = qe.tokens
	if !mixed {
		for _, hs := range ranked {
			res.Hits = append(res.Hits, hs...)
		}
		sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].Score > res.Hits[j].Score })
		return res, nil
	}
	for rank := 0; ; rank++ {
		more := false
		for _, hs := range ranked {
			if rank < len(hs) {
				res.Hits = append(res.Hits, hs[rank])
				more = true
			}
		}
		if !more {
			return res, nil
		}
	}
}

// sameOptions reports whether two entries can share their searches.
func sameOptions(a, b domain.RetrievalConfig) bool {
	sameMin := (a.ScoreThreshold == nil) == (b.ScoreThreshold == nil) && (a.ScoreThreshold == nil || *a.ScoreThreshold == *b.ScoreThreshold)
	return a.TopK == b.TopK && a.Strategy == b.Strategy && sameMin && slices.Equal(a.FileIDs, b.FileIDs) && slices.Equal(a.Tags, b.Tags) &&
		a.Rerank.Same(b.Rerank)
}

// scale names what a group's scores measure: its strategy's score, or the relevance of its rerank
// model (reranked groups of one model compare by score whatever their first stage).
func scale(o domain.RetrievalConfig) string {
	if o.Rerank != nil {
		return "rerank:" + o.Rerank.Model
	}
	return string(o.Strategy)
}
