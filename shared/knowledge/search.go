package knowledge

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// Search bounds.
const (
	// DefaultTopK is how many chunks a search returns when top_k is not given.
	DefaultTopK = domain.DefaultRetrievalTopK
	// MaxTopK is the largest top_k (OpenAI's file_search allows 50 as well).
	MaxTopK = domain.MaxRetrievalTopK
	// MaxQueryLength bounds a query in characters.
	MaxQueryLength = domain.MaxQueryLength
	// MaxFilterValues bounds filter.file_ids and filter.tags.
	MaxFilterValues = domain.MaxRetrievalFilterValues
)

// SearchInput is a search of a knowledge base: the query and the retrieval options (zero
// values: top_k 5, strategy dense, no threshold, no filter).
type SearchInput struct {
	Query   string
	Options domain.RetrievalConfig
	shape   library.Shape
}

// UnmarshalJSON reads the body of POST /knowledge-bases/{id}/search/: query beside the
// retrieval options (domain.ParseRetrieval, as an agent's retrieval_config).
func (in *SearchInput) UnmarshalJSON(b []byte) error {
	body, err := domain.DecodeObject(b)
	if err != nil {
		return err
	}
	*in = SearchInput{}
	opts, errs := domain.ParseRetrieval(body, "", "query")
	in.Options = opts
	in.shape.AddAll("options", errs)
	switch v := body["query"].(type) {
	case nil:
		in.shape.Add("query", "query", "is required: the text to search for")
	case string:
		in.Query = v
	default:
		in.shape.Add("query", "query", "must be a string, not "+domain.JSONType(v))
	}
	return nil
}

// Search finds the chunks of a knowledge base nearest to a query, best first (one GetKB, one
// batch read of its searchable files per 100 of them, one embedding of the query and one index
// search): top_k (default 5, at most 50), score_threshold (0..1), strategy
// (dense|bm25|hybrid|hybrid_rrf), filter {file_ids, tags}. A knowledge base that never
// completed an ingestion is a 409; archived, deleted and failed files are never found.
func (s *Service) Search(ctx context.Context, p domain.Principal, id string, in SearchInput) ([]domain.Hit, error) {
	query, opts, err := checkSearch(in)
	if err != nil {
		return nil, err
	}
	kb, err := s.kb(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if kb, err = s.settle(ctx, kb); err != nil {
		return nil, s.notFoundIf(err)
	}
	if kb.Completed == nil {
		return nil, neverCompleted(kb)
	}
	files, err := s.searchableFiles(ctx, p.Company, kb)
	if err != nil {
		return nil, err
	}
	return s.search(ctx, p.Company, []*domain.KnowledgeBase{kb}, files, query, opts)
}

// neverCompleted is the 409 of a search before the first completed ingestion.
func neverCompleted(kb *domain.KnowledgeBase) error {
	switch kb.Status {
	case domain.KBFailed:
		return domain.Errorf(domain.KindConflict, "Knowledge base '%s' has never completed an ingestion: its last run failed (%s); fix its files and run sync", kb.Name, kb.Error)
	default:
		return domain.Errorf(domain.KindConflict, "Knowledge base '%s' has not completed an ingestion yet (status %s): poll check_status until it is completed, then search", kb.Name, kb.Status)
	}
}

// search runs one query over knowledge bases of one company: one embedding per embedding
// configuration, one index search per index.
func (s *Service) search(ctx context.Context, company string, kbs []*domain.KnowledgeBase, files map[string]*domain.File, query string, opts domain.RetrievalConfig) ([]domain.Hit, error) {
	return s.searchWith(ctx, company, kbs, files, query, opts, nil)
}

// searchWith is search reusing the query's embeddings in vectors (by embedding configuration;
// nil keeps none), and adding those it makes.
func (s *Service) searchWith(ctx context.Context, company string, kbs []*domain.KnowledgeBase, files map[string]*domain.File, query string, opts domain.RetrievalConfig, vectors map[domain.Embedding][]float32) ([]domain.Hit, error) {
	if opts.TopK <= 0 {
		opts.TopK = DefaultTopK
	}
	if opts.Strategy == "" {
		opts.Strategy = domain.StrategyDense
	}
	type group struct {
		index string
		emb   domain.Embedding
		kbs   []string
	}
	var groups []*group
	exclude := map[string]bool{}
	for _, kb := range kbs {
		for id, d := range kb.Sources {
			f := files[id]
			if d.Status == domain.IngestRemoved || d.Status == domain.IngestFailed || f == nil || f.Status != domain.FileActive {
				exclude[id] = true
			}
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.index == kb.Index && g.emb == kb.Embedding })
		if i < 0 {
			groups = append(groups, &group{index: kb.Index, emb: kb.Embedding})
			i = len(groups) - 1
		}
		groups[i].kbs = append(groups[i].kbs, kb.ID)
	}
	excluded := make([]string, 0, len(exclude))
	for id := range exclude {
		excluded = append(excluded, id)
	}
	sort.Strings(excluded)
	var hits []domain.Hit
	for _, g := range groups {
		q := domain.VectorQuery{KBIDs: g.kbs, Company: company, Text: query, TopK: opts.TopK, Strategy: opts.Strategy,
			MinScore: opts.ScoreThreshold, FileIDs: opts.FileIDs, Tags: opts.Tags, ExcludeFileIDs: excluded}
		if v, ok := vectors[g.emb]; ok && opts.Strategy != domain.StrategyBM25 {
			q.Vector = v
		} else if opts.Strategy != domain.StrategyBM25 {
			emb, err := s.d.Embedders.Embedder(ctx, g.emb)
			if err != nil {
				return nil, fmt.Errorf("embedder of %s/%s: %w", g.emb.Provider, g.emb.Model, err)
			}
			if q.Vector, err = embedQuery(ctx, emb, query); err != nil {
				return nil, err
			}
			if vectors != nil {
				vectors[g.emb] = q.Vector
			}
		}
		found, err := s.d.Index.Search(ctx, g.index, q)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", g.index, err)
		}
		hits = append(hits, found...)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > opts.TopK {
		hits = hits[:opts.TopK]
	}
	for i := range hits {
		if f := files[hits[i].FileID]; f != nil {
			hits[i].FileName = f.Name
		}
	}
	if hits == nil {
		hits = []domain.Hit{}
	}
	return hits, nil
}

// embedQuery embeds a query with a knowledge base's embedder. A query longer than the model
// reads is embedded in pieces that fit (at word boundaries) and their vectors averaged, so that
// no part of it is ignored.
func embedQuery(ctx context.Context, emb Embedder, query string) ([]float32, error) {
	pieces := fitTokens(emb, []string{query})
	vecs, err := emb.Embed(ctx, pieces)
	if err != nil {
		return nil, fmt.Errorf("embed the query: %w", err)
	}
	if len(vecs) != len(pieces) || len(vecs) == 0 {
		return nil, fmt.Errorf("embed the query: %d vectors for %d texts", len(vecs), len(pieces))
	}
	if len(vecs) == 1 {
		return vecs[0], nil
	}
	sum := make([]float64, len(vecs[0]))
	for _, v := range vecs {
		for i, x := range v {
			sum[i] += float64(x)
		}
	}
	var norm float64
	for _, x := range sum {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	out := make([]float32, len(sum))
	for i, x := range sum {
		if norm > 0 {
			out[i] = float32(x / norm)
		}
	}
	return out, nil
}

// checkSearch validates a search: the query (trimmed) not empty and not too long; every problem
// is a 400 naming its field.
func checkSearch(in SearchInput) (string, domain.RetrievalConfig, error) {
	errs := slices.Clone(in.shape["options"])
	query := strings.TrimSpace(in.Query)
	switch e := in.shape["query"]; {
	case len(e) > 0:
		errs = append(errs, e...)
	case query == "":
		errs = append(errs, domain.FieldError{Field: "query", Message: "must not be empty: give the text to search for"})
	case utf8.RuneCountInString(query) > MaxQueryLength:
		errs = append(errs, domain.FieldError{Field: "query", Message: fmt.Sprintf("must be at most %d characters", MaxQueryLength)})
	}
	if len(errs) > 0 {
		return "", in.Options, domain.Invalid(errs)
	}
	return query, in.Options, nil
}
