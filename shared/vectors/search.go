package vectors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/shared/domain"
)

// Strategy is how Search ranks chunks (the domain's retrieval strategies; scores per strategy
// are documented there and in infra/README.md).
type Strategy = domain.RetrievalStrategy

// The retrieval strategies of a knowledge base.
const (
	Dense     = domain.StrategyDense
	BM25      = domain.StrategyBM25
	Hybrid    = domain.StrategyHybrid
	HybridRRF = domain.StrategyHybridRRF
)

// Strategies lists the valid strategies, the default first.
var Strategies = domain.Strategies

// MaxTopK is the k-NN query's limit on k.
const MaxTopK = 10000

// Query is one search of one or more knowledge bases that share an index (domain.VectorQuery:
// the knowledge feature declares the index interface in domain terms).
type Query = domain.VectorQuery

// Hit is one chunk found, best first.
type Hit = domain.Hit

// sourceFields are the stored fields a search returns (never the vector).
var sourceFields = []string{"kb_id", "file_id", "file_name", "chunk_index", "text", "tags"}

// Search finds the TopK chunks of q's knowledge bases in index, best first, with exactly one
// request: a knn query with an efficient filter (dense), a bool query of match and filter
// (bm25), or a hybrid query of both with a search pipeline (hybrid, hybrid_rrf). The filter —
// kb_id, company, file ids, tags — sits inside each query, so OpenSearch chooses the k nearest
// among the tenant's chunks, never among everyone's. A missing index finds nothing. Invalid
// queries are domain invalid_request errors; a vector of the wrong length is
// ErrDimensionMismatch. Only if OpenSearch reports a hybrid pipeline missing (a new domain)
// does Search put the pipelines and ask again, once.
func (s *Store) Search(ctx context.Context, index string, q Query) ([]Hit, error) {
	if q.Strategy == "" {
		q.Strategy = Dense
	}
	if err := validate(q); err != nil {
		return nil, err
	}
	if dims := s.knownDims(index); dims > 0 && len(q.Vector) > 0 && len(q.Vector) != dims {
		return nil, fmt.Errorf("search %s: %w: the index holds %d dimensions, the query vector has %d", index, ErrDimensionMismatch, dims, len(q.Vector))
	}
	body, pipeline, err := s.searchBody(q)
	if err != nil {
		return nil, err
	}
	res, err := s.search(ctx, index, body, pipeline)
	if err != nil && pipeline != "" && isMissingPipeline(err) {
		s.forgetPipelines()
		if err := s.EnsurePipelines(ctx); err != nil {
			return nil, err
		}
		res, err = s.search(ctx, index, body, pipeline)
	}
	if err != nil {
		return nil, fmt.Errorf("search %s (%s): %w", index, q.Strategy, translate(err))
	}
	hits := make([]Hit, 0, len(res.Hits.Hits))
	for _, h := range res.Hits.Hits {
		score := float64(h.Score)
		if q.Strategy == Hybrid {
			score *= hybridScale
		}
		if q.MinScore != nil && (q.Strategy == Dense || q.Strategy == Hybrid) && score < *q.MinScore {
			continue
		}
		var d document
		if err := json.Unmarshal(h.Source, &d); err != nil {
			return nil, fmt.Errorf("search %s: hit %s: %w", index, h.ID, err)
		}
		hits = append(hits, Hit{ID: h.ID, KBID: d.KBID, FileID: d.FileID, FileName: d.FileName, ChunkIndex: d.ChunkIndex,
			Text: d.Text, Tags: d.Tags, Score: score})
		if len(hits) == q.TopK {
			break
		}
	}
	return hits, nil
}

func (s *Store) search(ctx context.Context, index string, body []byte, pipeline string) (*opensearchapi.SearchResp, error) {
	return s.client.Search(ctx, &opensearchapi.SearchReq{
		Indices: []string{index}, Body: bytes.NewReader(body),
		Params: opensearchapi.SearchParams{SearchPipeline: pipeline, IgnoreUnavailable: ptr(true)},
	})
}

// isMissingPipeline recognises OpenSearch's "Pipeline <id> is not defined".
func isMissingPipeline(err error) bool {
	se, ok := osError(err)
	return ok && se.Err.Type == "illegal_argument_exception" && strings.HasPrefix(se.Err.Reason, "Pipeline ") &&
		strings.HasSuffix(se.Err.Reason, " is not defined")
}

// validate checks a query before any request; its errors are the API client's.
func validate(q Query) error {
	var bad []domain.FieldError
	add := func(field, msg string) { bad = append(bad, domain.FieldError{Field: field, Message: msg}) }
	known := false
	for _, st := range Strategies {
		known = known || q.Strategy == st
	}
	if !known {
		add("strategy", fmt.Sprintf("must be one of dense, bm25, hybrid, hybrid_rrf, not %q", q.Strategy))
	}
	if q.TopK < 1 || q.TopK > MaxTopK {
		add("top_k", fmt.Sprintf("must be between 1 and %d", MaxTopK))
	}
	if q.MinScore != nil && (*q.MinScore < 0 || *q.MinScore > 1) {
		add("score_threshold", "must be between 0 and 1")
	}
	if len(q.KBIDs) == 0 {
		add("knowledge_base_id", "at least one knowledge base is required")
	}
	for _, id := range q.KBIDs {
		if id == "" {
			add("knowledge_base_id", "must not be empty")
		}
	}
	if q.Company == "" {
		add("company", "is required")
	}
	if known && q.Strategy != BM25 && len(q.Vector) == 0 {
		add("vector", "the "+string(q.Strategy)+" strategy needs the query's embedding")
	}
	if known && q.Strategy != Dense && strings.TrimSpace(q.Text) == "" {
		add("query", "the "+string(q.Strategy)+" strategy needs the query text")
	}
	if len(bad) > 0 {
		return domain.Invalid(bad)
	}
	return nil
}

// searchBody builds the request body and names the pipeline it needs ("" for none).
func (s *Store) searchBody(q Query) ([]byte, string, error) {
	clauses := []map[string]any{terms("kb_id", q.KBIDs), term("company", q.Company)}
	if len(q.FileIDs) > 0 {
		clauses = append(clauses, terms("file_id", q.FileIDs))
	}
	if len(q.Tags) > 0 {
		clauses = append(clauses, terms("tags", q.Tags))
	}
	filter := filters(clauses...)
	if len(q.ExcludeFileIDs) > 0 {
		// Archived and deleting files: out of every answer even before the index forgets them.
		not := terms("file_id", q.ExcludeFileIDs)
		filter["bool"].(map[string]any)["must_not"] = []any{not}
		clauses = append(clauses, map[string]any{"bool": map[string]any{"must_not": []any{not}}})
	}
	k := q.TopK
	if q.Strategy == Hybrid || q.Strategy == HybridRRF {
		k = fusionDepth(q.TopK)
	}
	knn := map[string]any{"knn": map[string]any{fieldEmbedding: map[string]any{
		"vector": q.Vector, "k": k, "filter": filter}}}
	// BM25 is the sum of the text's standard and english analyses (Elasticsearch's most_fields):
	// the stems find "terminates" for "termination", the standard field keeps exact forms and
	// serves legacy indices, which have no english sub-field. One of them must match.
	match := map[string]any{"bool": map[string]any{
		"should": []any{
			map[string]any{"match": map[string]any{fieldTextEnglish: map[string]any{"query": q.Text}}},
			map[string]any{"match": map[string]any{fieldText: map[string]any{"query": q.Text}}},
		},
		"minimum_should_match": 1,
		"filter":               clauses,
	}}
	body := map[string]any{"size": q.TopK, "_source": map[string]any{"includes": sourceFields}}
	pipeline := ""
	switch q.Strategy {
	case Dense:
		body["query"] = knn
	case BM25:
		body["query"] = match
	case Hybrid, HybridRRF:
		// The filter goes into each sub-query: the hybrid query's own filter needs 3.0.
		body["query"] = map[string]any{"hybrid": map[string]any{"queries": []any{match, knn}, "pagination_depth": k}}
		pipeline = s.RRFPipeline()
	}
	b, err := json.Marshal(body)
	return b, pipeline, err
}

// fusionDepth is how deep each hybrid sub-query's list goes before reciprocal rank fusion cuts
// the fused list to topK: half as deep again (5 → 8). A chunk both lists rank just below topK
// still gets both votes, and few chunks found low in both lists push out one that a list ranks
// first: on the three eval sets, depths 7 to 9 for top_k 5 kept hybrid at or above both dense and
// BM25 alone, 5 to 6 and 10 or more did not (docs/knowledge.md, retrieval quality).
func fusionDepth(topK int) int { return min(topK+(topK+1)/2, MaxTopK) }

// hybridScale turns an RRF score of the two lists into hybrid's 0..1 score: 1 for a chunk first
// in both lists, 0.5 for one first in one list and absent from the other.
const hybridScale = (rrfRankConstant + 1) / 2.0

// terms is a terms query on a keyword field (any of values).
func terms(field string, values []string) map[string]any {
	return map[string]any{"terms": map[string]any{field: values}}
}
