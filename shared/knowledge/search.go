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

// SearchInput is a search of a knowledge base: POST /knowledge-bases/{id}/search/, the query
// beside the retrieval options of an agent's retrieval_config (left out: top_k 5, strategy
// dense, no threshold, no filter). Their words are those of domain.ParseRetrieval.
type SearchInput struct {
	Query          *string       `json:"query" got:"not"`
	TopK           *float64      `json:"top_k"`
	ScoreThreshold *float64      `json:"score_threshold"`
	Strategy       *string       `json:"strategy"`
	Filter         *SearchFilter `json:"filter" want:"an object with file_ids and tags" got:"not"`
	// Rerank is true, false or {model, candidates}; EnableRerank and RerankModel are Atthene's
	// form of it. Any JSON value is taken here and checked by domain.ParseRerank.
	Rerank       *domain.JSONValue `json:"rerank"`
	EnableRerank *domain.JSONValue `json:"enable_rerank"`
	RerankModel  *domain.JSONValue `json:"rerank_model"`
	domain.Shape `json:"-"`        // the body's shape errors, not a key of it
}

// SearchFilter keeps a search to files (FileIDs) and to chunks with one of Tags; a null item
// is refused.
type SearchFilter struct {
	FileIDs []*string `json:"file_ids" want:"an array of strings" got:"not"`
	Tags    []*string `json:"tags" want:"an array of strings" got:"not"`
}

// UnclippedKeys has the decoder name a search's unknown keys whole, as it always has.
func (*SearchInput) UnclippedKeys() {}

// UnknownField words what a search's body and its filter have.
func (*SearchInput) UnknownField(object, _ string) string {
	if object == "filter" {
		return "filter has file_ids and tags"
	}
	// rerank is not listed: the words are the API's since before it (error bodies unchanged).
	return "the fields are query, top_k, score_threshold, strategy, filter"
}

// options checks the retrieval options, field by field as domain.ParseRetrieval does (the
// body's unknown keys, top_k, score_threshold, strategy, filter, rerank).
func (in *SearchInput) options() (domain.RetrievalConfig, []domain.FieldError) {
	var c domain.RetrievalConfig
	errs := in.UnknownIn("")
	add := func(field, format string, args ...any) {
		errs = append(errs, domain.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if in.WrongAt("top_k") != nil {
		add("top_k", "must be an integer from 1 to %d", MaxTopK)
	} else if in.TopK != nil {
		if f := *in.TopK; f != float64(int(f)) || f < 1 || f > MaxTopK {
			add("top_k", "must be an integer from 1 to %d", MaxTopK)
		} else {
			c.TopK = int(f)
		}
	}
	if in.WrongAt("score_threshold") != nil {
		add("score_threshold", "must be a number")
	} else if c.ScoreThreshold = in.ScoreThreshold; c.ScoreThreshold != nil && (*c.ScoreThreshold < 0 || *c.ScoreThreshold > 1) {
		add("score_threshold", "must be between 0 and 1")
	}
	switch {
	case in.WrongAt("strategy") != nil:
		add("strategy", "must be a string")
	case in.Strategy == nil:
	case strings.TrimSpace(*in.Strategy) == "":
		add("strategy", "must not be empty")
	case !slices.Contains(domain.Strategies, domain.RetrievalStrategy(*in.Strategy)):
		names := make([]string, len(domain.Strategies))
		for i, s := range domain.Strategies {
			names[i] = string(s)
		}
		add("strategy", "must be one of %s, not %q", strings.Join(names, ", "), domain.Clip(*in.Strategy, 40))
	default:
		c.Strategy = domain.RetrievalStrategy(*in.Strategy)
	}
	if e := in.WrongAt("filter"); e != nil {
		return c, append(errs, *e)
	}
	errs = append(errs, in.UnknownIn("filter")...)
	if in.Filter != nil {
		var listErrs []domain.FieldError
		c.FileIDs, listErrs = in.filterValues(in.Filter.FileIDs, "filter.file_ids")
		errs = append(errs, listErrs...)
		c.Tags, listErrs = in.filterValues(in.Filter.Tags, "filter.tags")
		errs = append(errs, listErrs...)
	}
	rerank := map[string]any{}
	for k, v := range map[string]*domain.JSONValue{"rerank": in.Rerank, "enable_rerank": in.EnableRerank, "rerank_model": in.RerankModel} {
		if v != nil {
			rerank[k] = v.V
		}
	}
	var rerankErrs []domain.FieldError
	c.Rerank, rerankErrs = domain.ParseRerank(rerank, "")
	return c, append(errs, rerankErrs...)
}

// filterValues checks a filter's list: at most MaxFilterValues non-empty strings; the values
// once each, in order.
func (in *SearchInput) filterValues(list []*string, field string) ([]string, []domain.FieldError) {
	if e := in.WrongAt(field); e != nil {
		return nil, []domain.FieldError{*e}
	}
	var out []string
	var errs []domain.FieldError
	if len(list) > MaxFilterValues {
		errs = append(errs, domain.FieldError{Field: field, Message: fmt.Sprintf("must have at most %d values", MaxFilterValues)})
	}
	for i, s := range list {
		item := fmt.Sprintf("%s.%d", field, i)
		switch {
		case s == nil: // null, or a value of the wrong type
			errs = append(errs, domain.FieldError{Field: item, Message: "must be a string"})
		case strings.TrimSpace(*s) == "":
			errs = append(errs, domain.FieldError{Field: item, Message: "must not be empty"})
		case !slices.Contains(out, *s):
			out = append(out, *s)
		}
	}
	return out, errs
}

// Search finds the chunks of a knowledge base nearest to a query, best first (one GetKB, one
// batch read of its searchable files per 100 of them, one embedding of the query and one index
// search, and one Rerank request when rerank is on): top_k (default 5, at most 50),
// score_threshold (0..1), strategy (dense|bm25|hybrid|hybrid_rrf), filter {file_ids, tags},
// rerank. A knowledge base that never completed an ingestion is a 409; archived, deleted and
// failed files are never found.
func (s *Service) Search(ctx context.Context, p domain.Principal, id string, in SearchInput) ([]domain.Hit, error) {
	query, opts, err := checkSearch(in)
	if err != nil {
		return nil, err
	}
	if err := s.checkRerank(opts.Rerank); err != nil {
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
	qe := &queryEmbeddings{}
	hits, err := s.searchWith(ctx, p.Company, []*domain.KnowledgeBase{kb}, files, query, opts, qe)
	s.countEmbedding(ctx, p.Company, p.KeyID, qe.tokens)
	return hits, err
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

// queryEmbeddings are a search's query vectors by embedding configuration (one embedding per
// configuration, shared by the search's groups) and the tokens embedding them took.
type queryEmbeddings struct {
	vectors map[domain.Embedding][]float32
	tokens  int
}

// searchWith runs one query over knowledge bases of one company (one embedding per embedding
// configuration, one index search per index, then one Rerank request of the hits when
// opts.Rerank is on: the first stage then finds its candidates), reusing the query's embeddings
// in qe and adding those it makes, and their tokens.
func (s *Service) searchWith(ctx context.Context, company string, kbs []*domain.KnowledgeBase, files map[string]*domain.File, query string, opts domain.RetrievalConfig, qe *queryEmbeddings) ([]domain.Hit, error) {
	if qe.vectors == nil {
		qe.vectors = map[domain.Embedding][]float32{}
	}
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
	firstK := opts.TopK
	if opts.Rerank != nil {
		firstK = opts.Rerank.RerankCandidates(opts.TopK)
	}
	excluded := make([]string, 0, len(exclude))
	for id := range exclude {
		excluded = append(excluded, id)
	}
	sort.Strings(excluded)
	var hits []domain.Hit
	for _, g := range groups {
		q := domain.VectorQuery{KBIDs: g.kbs, Company: company, Text: query, TopK: firstK, Strategy: opts.Strategy,
			MinScore: opts.ScoreThreshold, FileIDs: opts.FileIDs, Tags: opts.Tags, ExcludeFileIDs: excluded}
		if v, ok := qe.vectors[g.emb]; ok && opts.Strategy != domain.StrategyBM25 {
			q.Vector = v
		} else if opts.Strategy != domain.StrategyBM25 {
			emb, err := s.d.Embedders.Embedder(ctx, g.emb)
			if err != nil {
				return nil, fmt.Errorf("embedder of %s/%s: %w", g.emb.Provider, g.emb.Model, err)
			}
			var n int
			q.Vector, n, err = embedQuery(ctx, emb, query)
			qe.tokens += n
			if err != nil {
				return nil, err
			}
			qe.vectors[g.emb] = q.Vector
		}
		found, err := s.d.Index.Search(ctx, g.index, q)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", g.index, err)
		}
		hits = append(hits, found...)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > firstK {
		hits = hits[:firstK]
	}
	if opts.Rerank != nil {
		var err error
		if hits, err = s.rerank(ctx, query, hits, opts.Rerank, opts.TopK); err != nil {
			return nil, err
		}
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

// embedQuery embeds a query with a knowledge base's embedder and says how many tokens that took.
// A query longer than the model reads is embedded in pieces that fit (at word boundaries) and
// their vectors averaged, so that no part of it is ignored.
func embedQuery(ctx context.Context, emb Embedder, query string) ([]float32, int, error) {
	pieces := fitTokens(emb, []string{query})
	vecs, tokens, err := embed(ctx, emb, pieces)
	if err != nil {
		return nil, tokens, fmt.Errorf("embed the query: %w", err)
	}
	if len(vecs) != len(pieces) || len(vecs) == 0 {
		return nil, tokens, fmt.Errorf("embed the query: %d vectors for %d texts", len(vecs), len(pieces))
	}
	if len(vecs) == 1 {
		return vecs[0], tokens, nil
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
	return out, tokens, nil
}

// checkSearch validates a search: the options as an agent's retrieval_config, then the query
// (trimmed) not empty and not too long; every problem is a 400 naming its field.
func checkSearch(in SearchInput) (string, domain.RetrievalConfig, error) {
	opts, errs := in.options()
	var query string
	if in.Query != nil {
		query = strings.TrimSpace(*in.Query)
	}
	switch e := in.WrongAt("query"); {
	case e != nil:
		errs = append(errs, *e)
	case in.Query == nil:
		errs = append(errs, domain.FieldError{Field: "query", Message: "is required: the text to search for"})
	case query == "":
		errs = append(errs, domain.FieldError{Field: "query", Message: "must not be empty: give the text to search for"})
	case utf8.RuneCountInString(query) > MaxQueryLength:
		errs = append(errs, domain.FieldError{Field: "query", Message: fmt.Sprintf("must be at most %d characters", MaxQueryLength)})
	}
	if len(errs) > 0 {
		return "", opts, domain.Invalid(errs)
	}
	return query, opts, nil
}
