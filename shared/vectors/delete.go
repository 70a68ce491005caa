package vectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
)

// deleteAttempts bounds the refresh + delete-by-query rounds of one delete; a round repeats only
// when a chunk changed between the refresh and the delete (a version conflict).
const deleteAttempts = 5

// DeleteFile deletes every chunk of a file in a knowledge base from index and returns how many
// it deleted. When it returns nil, no search finds them again: it refreshes first (a delete by
// query only sees what a refresh made searchable, so chunks put a moment ago would survive)
// and deletes with refresh=true. Requests: two (_refresh, _delete_by_query), two more per
// version conflict. A missing index has nothing to delete.
//
// A Put that runs after DeleteFile stores its chunks again: callers that delete a file while it
// is being ingested must stop the ingestion from writing (mark the file deleted first, have the
// ingestion check that mark after its last Put and delete again), as the knowledge feature does.
func (s *Store) DeleteFile(ctx context.Context, index, company, kbID, fileID string) (int, error) {
	if company == "" || kbID == "" || fileID == "" {
		return 0, errors.New("vectors: delete file needs company, knowledge base and file ids")
	}
	return s.deleteByQuery(ctx, index, filters(term("company", company), term("kb_id", kbID), term("file_id", fileID)))
}

// DeleteKB deletes every chunk of a knowledge base from index (AllIndices reaches every
// embedding space), with DeleteFile's guarantees and costs.
func (s *Store) DeleteKB(ctx context.Context, index, company, kbID string) (int, error) {
	if company == "" || kbID == "" {
		return 0, errors.New("vectors: delete knowledge base needs company and knowledge base ids")
	}
	return s.deleteByQuery(ctx, index, filters(term("company", company), term("kb_id", kbID)))
}

// DeleteFileEverywhere deletes a company's file from every knowledge base in every index of the
// store (the file itself was deleted), with DeleteFile's guarantees and costs.
func (s *Store) DeleteFileEverywhere(ctx context.Context, company, fileID string) (int, error) {
	if company == "" || fileID == "" {
		return 0, errors.New("vectors: delete file needs company and file ids")
	}
	return s.deleteByQuery(ctx, s.AllIndices(), filters(term("company", company), term("file_id", fileID)))
}

// deleteByQuery refreshes index and deletes what query matches, again while version conflicts
// (a chunk re-put between the refresh and the delete) leave matches behind.
func (s *Store) deleteByQuery(ctx context.Context, index string, query map[string]any) (int, error) {
	body, err := json.Marshal(map[string]any{"query": query})
	if err != nil {
		return 0, err
	}
	deleted := 0
	err = backoff.Retry(ctx, backoff.Policy{MaxRetries: deleteAttempts - 1, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second},
		func(attempt int) (time.Duration, bool, error) {
			if err := s.Refresh(ctx, index); err != nil {
				return 0, false, err
			}
			res, err := s.client.Document.DeleteByQuery(ctx, opensearchapi.DocumentDeleteByQueryReq{
				Indices: []string{index}, Body: bytes.NewReader(body),
				Params: opensearchapi.DocumentDeleteByQueryParams{Conflicts: "proceed", Refresh: ptr(true), IgnoreUnavailable: ptr(true)},
			})
			if err != nil {
				return 0, false, fmt.Errorf("delete by query in %s: %w", index, translate(err))
			}
			deleted += res.Deleted
			if len(res.Failures) > 0 {
				return 0, false, fmt.Errorf("delete by query in %s: %d failures, first: %+v", index, len(res.Failures), res.Failures[0])
			}
			if res.VersionConflicts == 0 {
				return 0, false, nil
			}
			return 0, true, fmt.Errorf("delete by query in %s: %d version conflicts after %d attempts: %w",
				index, res.VersionConflicts, attempt+1, domain.ErrConflict)
		})
	return deleted, err
}

// term is a term query on a keyword field.
func term(field, value string) map[string]any {
	return map[string]any{"term": map[string]any{field: value}}
}

// filters is a bool query of non-scoring clauses.
func filters(clauses ...map[string]any) map[string]any {
	return map[string]any{"bool": map[string]any{"filter": clauses}}
}
