package vectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
)

// MaxChunksPage bounds one Chunks read: its positions go into one terms query.
const MaxChunksPage = 1000

// chunkFields are the stored fields Chunks reads (never the vector).
var chunkFields = []string{"kb_id", "file_id", "file_name", "chunk_index", "text", "tags", "content_hash"}

// Chunks reads the chunks of one file of a knowledge base at positions from to from+limit-1, in
// document order (chunk_index), without their vectors: one request. Ingestion numbers a file's
// chunks 0, 1, 2 … without gaps, so the positions page through the file as offsets do; a
// position past the file's end is simply absent. The filter carries company and knowledge base
// as every query does: another tenant's chunks are never read. A missing index has no chunks.
//
// The positions are asked for by value (a terms query on chunk_index), and the order is made
// here: a search without a sort answers in score order, which a filter leaves undefined.
func (s *Store) Chunks(ctx context.Context, index, company, kbID, fileID string, from, limit int) ([]Chunk, error) {
	if company == "" || kbID == "" || fileID == "" {
		return nil, errors.New("vectors: reading chunks needs company, knowledge base and file ids")
	}
	if from < 0 || limit < 1 || limit > MaxChunksPage {
		return nil, fmt.Errorf("vectors: chunks from %d, %d of them: from must be ≥ 0 and the count 1 to %d", from, limit, MaxChunksPage)
	}
	positions := make([]int, limit)
	for i := range positions {
		positions[i] = from + i
	}
	body, err := json.Marshal(map[string]any{
		"size":             limit,
		"track_total_hits": false,
		"_source":          map[string]any{"includes": chunkFields},
		"query": filters(term("company", company), term("kb_id", kbID), term("file_id", fileID),
			map[string]any{"terms": map[string]any{"chunk_index": positions}}),
	})
	if err != nil {
		return nil, err
	}
	res, err := s.client.Search(ctx, &opensearchapi.SearchReq{
		Indices: []string{index}, Body: bytes.NewReader(body),
		Params: opensearchapi.SearchParams{IgnoreUnavailable: ptr(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("read chunks of %s/%s in %s: %w", kbID, fileID, index, translate(err))
	}
	out := make([]Chunk, 0, len(res.Hits.Hits))
	for _, h := range res.Hits.Hits {
		var d document
		if err := json.Unmarshal(h.Source, &d); err != nil {
			return nil, fmt.Errorf("read chunks of %s/%s in %s: hit %s: %w", kbID, fileID, index, h.ID, err)
		}
		out = append(out, Chunk{KBID: d.KBID, Company: company, FileID: d.FileID, FileName: d.FileName, ChunkIndex: d.ChunkIndex,
			Text: d.Text, Tags: d.Tags, ContentHash: d.ContentHash})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ChunkIndex < out[j].ChunkIndex })
	return out, nil
}
