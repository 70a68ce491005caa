package vectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
)

// MaxDimensions is the k-NN plugin's limit on a knn_vector's dimension.
const MaxDimensions = 16000

// The HNSW graph parameters of every index (the plugin's defaults are m 16, ef_construction
// 100; 128 buys recall at ingestion time, which is off the request path).
const (
	hnswM              = 16
	hnswEfConstruction = 128
)

// rrfRankConstant is the rank constant of the hybrid strategies' reciprocal rank fusion (the
// usual 60, also the plugin's default; 10 to 100 ranked alike on the eval sets).
const rrfRankConstant = 60

// fieldText is the chunk's text as the standard analyzer reads it; fieldTextEnglish the same text
// as the english analyzer does (possessives, stop words, Porter stems), a multi-field of it.
const (
	fieldText        = "text"
	fieldTextEnglish = "text.en"
)

// indexSchema ends the name of every index made with today's mapping (the english sub-field).
// Indices named without it are legacy: they keep serving the knowledge bases that live in them
// (a match on the missing sub-field finds nothing, so BM25 falls back to the standard field),
// and a sync moves a knowledge base to the current index (Store.Legacy).
const indexSchema = "-v2"

// indexBody is the settings and mapping of an embedding space's index. dynamic: strict makes a
// misspelt field an error instead of a silent new mapping.
func (s *Store) indexBody(dims int) ([]byte, error) {
	keyword := map[string]any{"type": "keyword"}
	body := map[string]any{
		"settings": map[string]any{"index": map[string]any{
			"knn":                true,
			"number_of_shards":   s.shards,
			"number_of_replicas": s.replicas,
		}},
		"mappings": map[string]any{
			"dynamic": "strict",
			"properties": map[string]any{
				"kb_id":       keyword,
				"company":     keyword,
				"file_id":     keyword,
				"file_name":   keyword,
				"chunk_index": map[string]any{"type": "integer"},
				fieldText: map[string]any{"type": "text", "analyzer": "standard",
					"fields": map[string]any{"en": map[string]any{"type": "text", "analyzer": "english"}}},
				"tags":         keyword,
				"content_hash": keyword,
				fieldEmbedding: map[string]any{
					"type":      "knn_vector",
					"dimension": dims,
					"method": map[string]any{
						"name":       "hnsw",
						"engine":     "faiss",
						"space_type": "cosinesimil",
						"parameters": map[string]any{"m": hnswM, "ef_construction": hnswEfConstruction},
					},
				},
			},
		},
	}
	return json.Marshal(body)
}

const fieldEmbedding = "embedding"

// EnsureIndex creates the index of an embedding space unless this process already knows it,
// and returns its name. An index that exists already (created by another instance, maybe in a
// race with this one) is success. One request the first time per process, none after.
func (s *Store) EnsureIndex(ctx context.Context, model string, dims int) (string, error) {
	if dims < 1 || dims > MaxDimensions {
		return "", fmt.Errorf("vectors: embedding dimension %d outside 1..%d", dims, MaxDimensions)
	}
	name := s.IndexName(model, dims)
	if s.knownDims(name) > 0 {
		return name, nil
	}
	body, err := s.indexBody(dims)
	if err != nil {
		return "", err
	}
	_, err = s.client.Indices.Create(ctx, opensearchapi.IndicesCreateReq{Index: name, Body: bytes.NewReader(body)})
	if err != nil && !isType(err, "resource_already_exists_exception") {
		return "", fmt.Errorf("create index %s: %w", name, translate(err))
	}
	s.mu.Lock()
	s.dims[name] = dims
	s.mu.Unlock()
	return name, nil
}

// knownDims is the dimension of an index this process has ensured, 0 if none.
func (s *Store) knownDims(index string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dims[index]
}

// RRFPipeline is the search pipeline of the hybrid strategies: reciprocal rank fusion of the
// BM25 and k-NN lists (the neural-search plugin's score-ranker-processor, 2.19+).
func (s *Store) RRFPipeline() string { return s.prefix + "-hybrid-rrf-v1" }

// pipelineBody is the RRF search pipeline. Changing it means a new name (-v2): running instances
// keep using the pipeline they know.
func pipelineBody() map[string]any {
	return map[string]any{
		"description": "agentorch knowledge bases: hybrid BM25 + k-NN, reciprocal rank fusion",
		"phase_results_processors": []any{map[string]any{"score-ranker-processor": map[string]any{
			"combination": map[string]any{"technique": "rrf", "rank_constant": rrfRankConstant},
		}}},
	}
}

// EnsurePipelines puts the hybrid search pipeline (a PUT replaces a pipeline with the same
// body, so concurrent callers are harmless). One request the first time per process, none
// after. Search calls it by itself when OpenSearch reports the pipeline missing.
func (s *Store) EnsurePipelines(ctx context.Context) error {
	s.mu.Lock()
	done := s.pipelines
	s.mu.Unlock()
	if done {
		return nil
	}
	body, err := json.Marshal(pipelineBody())
	if err != nil {
		return err
	}
	name := s.RRFPipeline()
	req := rawRequest{path: "/_search/pipeline/" + url.PathEscape(name), body: body}
	if err := s.do(ctx, http.MethodPut, req); err != nil {
		return fmt.Errorf("put search pipeline %s: %w", name, translate(err))
	}
	s.mu.Lock()
	s.pipelines = true
	s.mu.Unlock()
	return nil
}

// forgetPipelines makes the next EnsurePipelines put them again (someone deleted them).
func (s *Store) forgetPipelines() {
	s.mu.Lock()
	s.pipelines = false
	s.mu.Unlock()
}

// Refresh makes everything written to index so far searchable (and deletable by query). Call
// it once where a caller needs read-after-write, e.g. at the end of a file's ingestion, not
// after every bulk. index may be a comma list or a wildcard expression; a missing index is no
// error. One request.
func (s *Store) Refresh(ctx context.Context, index string) error {
	_, err := s.client.Indices.Refresh(ctx, &opensearchapi.IndicesRefreshReq{
		Index: []string{index}, Params: opensearchapi.IndicesRefreshParams{IgnoreUnavailable: ptr(true)}})
	if err != nil {
		return fmt.Errorf("refresh %s: %w", index, translate(err))
	}
	return nil
}

// Count is the number of searchable chunks of a knowledge base in index (chunks written since
// the last refresh are not counted yet); a missing index counts 0. One request.
func (s *Store) Count(ctx context.Context, index, kbID string) (int, error) {
	if kbID == "" {
		return 0, errors.New("vectors: count needs a knowledge base id")
	}
	body, err := json.Marshal(map[string]any{"query": map[string]any{"term": map[string]any{"kb_id": kbID}}})
	if err != nil {
		return 0, err
	}
	res, err := s.client.Indices.Count(ctx, &opensearchapi.IndicesCountReq{
		Indices: []string{index}, Body: bytes.NewReader(body),
		Params: opensearchapi.IndicesCountParams{IgnoreUnavailable: ptr(true)}})
	if err != nil {
		return 0, fmt.Errorf("count %s in %s: %w", kbID, index, translate(err))
	}
	return res.Count, nil
}

// rawRequest is a request the typed API lacks (search pipelines are a plugin's endpoint).
type rawRequest struct {
	path string
	body []byte
}

// GetRequest builds the HTTP request; it implements opensearch.Request.
func (r rawRequest) GetRequest(method string) (*http.Request, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(method, r.path, body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do performs a raw request, ignoring the answer's body unless it is an error, which becomes
// OpenSearch's structured error as the typed API returns it.
func (s *Store) do(ctx context.Context, method string, req rawRequest) error {
	res, err := opensearch.Do(ctx, s.client.Client, method, req, (*opensearch.NoBody)(nil))
	if err != nil {
		return err
	}
	if res.IsError() {
		return opensearch.ParseError(res)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
