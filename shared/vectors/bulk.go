package vectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
)

// Chunk is one indexed piece of a file in a knowledge base.
type Chunk = domain.Chunk

// document is a chunk as stored (the index mapping's fields).
type document struct {
	KBID        string    `json:"kb_id"`
	Company     string    `json:"company"`
	FileID      string    `json:"file_id"`
	FileName    string    `json:"file_name"`
	ChunkIndex  int       `json:"chunk_index"`
	Text        string    `json:"text"`
	Tags        []string  `json:"tags"`
	ContentHash string    `json:"content_hash,omitempty"`
	Embedding   []float32 `json:"embedding"`
}

// Limits of one _bulk request: far below the 10 MiB HTTP payload limit of the smallest Amazon
// OpenSearch Service instances, and few enough documents that one slow request does not hit
// the caller's deadline.
const (
	maxBulkBytes = 5 << 20
	maxBulkDocs  = 500
	// bulkRetries is how often items rejected with 429 (a full write queue) are sent again.
	bulkRetries = 3
)

// ItemError is one chunk that a _bulk request refused.
type ItemError struct {
	ID, FileID   string
	ChunkIndex   int
	Status       int
	Type, Reason string
	Cause        string // the innermost caused_by reason, e.g. the k-NN plugin's own
}

func (e *ItemError) Error() string {
	msg := fmt.Sprintf("chunk %d of file %s (_id %s): %d %s: %s", e.ChunkIndex, e.FileID, e.ID, e.Status, e.Type, e.Reason)
	if e.Cause != "" && e.Cause != e.Reason {
		msg += ": " + e.Cause
	}
	return msg
}

// Is makes errors.Is(err, ErrDimensionMismatch) hold for the k-NN plugin's dimension error.
func (e *ItemError) Is(target error) bool {
	return target == ErrDimensionMismatch && (mismatch(e.Reason) || mismatch(e.Cause))
}

// PutError lists the chunks a Put could not store; the others were stored.
type PutError struct {
	Index  string
	Items  []*ItemError
	Chunks int // how many chunks the Put was given
}

func (e *PutError) Error() string {
	msg := fmt.Sprintf("put %d chunks into %s: %d refused: %v", e.Chunks, e.Index, len(e.Items), e.Items[0])
	if len(e.Items) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(e.Items)-1)
	}
	return msg
}

// Unwrap exposes every item error to errors.Is and errors.As.
func (e *PutError) Unwrap() []error {
	out := make([]error, len(e.Items))
	for i, it := range e.Items {
		out[i] = it
	}
	return out
}

// Put indexes chunks under their deterministic ids (ChunkID), so putting a chunk again
// overwrites it. Requests: one _bulk per 500 chunks or 5 MB, whichever comes first (a file of
// up to ~500 chunks is one request), plus a retry of the items OpenSearch rejected with 429.
// Chunks become searchable at the next refresh (Refresh, or the index's periodic one), not at
// once. Refused chunks are reported in a *PutError; a vector of the wrong length is
// ErrDimensionMismatch, checked before any request when this process ensured the index.
func (s *Store) Put(ctx context.Context, index string, chunks []Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	dims := s.knownDims(index)
	for i := range chunks {
		if err := checkChunk(&chunks[i], dims); err != nil {
			return fmt.Errorf("put into %s: %w", index, err)
		}
	}
	var failed []*ItemError
	start := 0
	for start < len(chunks) {
		body, n, err := bulkBody(index, chunks[start:])
		if err != nil {
			return err
		}
		items, err := s.bulk(ctx, index, chunks[start:start+n], body)
		if err != nil {
			return err
		}
		failed = append(failed, items...)
		start += n
	}
	if len(failed) > 0 {
		return &PutError{Index: index, Items: failed, Chunks: len(chunks)}
	}
	return nil
}

// checkChunk refuses what OpenSearch would refuse with a vaguer message, or what would be
// stored but never found (no tenant).
func checkChunk(c *Chunk, dims int) error {
	where := fmt.Sprintf("chunk %d of file %s", c.ChunkIndex, c.FileID)
	switch {
	case c.KBID == "" || c.Company == "" || c.FileID == "":
		return fmt.Errorf("%s: kb_id, company and file_id are required", where)
	case c.ChunkIndex < 0:
		return fmt.Errorf("%s: negative chunk index", where)
	case len(c.Vector) == 0:
		return fmt.Errorf("%s: no vector", where)
	case dims > 0 && len(c.Vector) != dims:
		return fmt.Errorf("%s: %w: the index holds %d dimensions, the vector has %d", where, ErrDimensionMismatch, dims, len(c.Vector))
	}
	zero := true
	for _, v := range c.Vector {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%s: the vector has a NaN or infinite component", where)
		}
		if v != 0 {
			zero = false
		}
	}
	if zero {
		return fmt.Errorf("%s: a zero vector has no cosine similarity", where)
	}
	return nil
}

// bulkBody encodes as many leading chunks as fit one request; it returns the body and how many
// chunks it holds (at least one, even if that one alone passes the byte limit).
func bulkBody(index string, chunks []Chunk) ([]byte, int, error) {
	var buf bytes.Buffer
	n := 0
	for _, c := range chunks {
		action, err := json.Marshal(map[string]any{"index": map[string]any{"_index": index, "_id": ChunkID(c.KBID, c.FileID, c.ChunkIndex)}})
		if err != nil {
			return nil, 0, err
		}
		tags := c.Tags
		if tags == nil {
			tags = []string{}
		}
		doc, err := json.Marshal(document{KBID: c.KBID, Company: c.Company, FileID: c.FileID, FileName: c.FileName,
			ChunkIndex: c.ChunkIndex, Text: c.Text, Tags: tags, ContentHash: c.ContentHash, Embedding: c.Vector})
		if err != nil {
			return nil, 0, fmt.Errorf("encode chunk %d of file %s: %w", c.ChunkIndex, c.FileID, err)
		}
		size := len(action) + len(doc) + 2
		if n > 0 && (n == maxBulkDocs || buf.Len()+size > maxBulkBytes) {
			break
		}
		buf.Write(action)
		buf.WriteByte('\n')
		buf.Write(doc)
		buf.WriteByte('\n')
		n++
	}
	return buf.Bytes(), n, nil
}

// bulk sends one _bulk request for chunks and returns the items it refused; items refused with
// 429 (a full write queue) are sent again after a pause, up to bulkRetries times.
func (s *Store) bulk(ctx context.Context, index string, chunks []Chunk, body []byte) ([]*ItemError, error) {
	var failed []*ItemError
	var again []Chunk // items refused with 429 in the last attempt, to send again
	var hard error    // a failure of the request itself: no retry
	_ = backoff.Retry(ctx, backoff.Policy{MaxRetries: bulkRetries, BaseDelay: 200 * time.Millisecond, MaxDelay: 2 * time.Second},
		func(attempt int) (time.Duration, bool, error) {
			if attempt > 0 {
				// again is a subset of one request's chunks, so it fits one request too.
				chunks, again = again, nil
				var err error
				if body, _, err = bulkBody(index, chunks); err != nil {
					hard = err
					return 0, false, err
				}
			}
			res, err := s.client.Bulk(ctx, opensearchapi.BulkReq{Body: bytes.NewReader(body)})
			if err != nil {
				hard = fmt.Errorf("bulk into %s: %w", index, translate(err))
				return 0, false, hard
			}
			if len(res.Items) != len(chunks) {
				hard = fmt.Errorf("bulk into %s: %d items answered for %d chunks", index, len(res.Items), len(chunks))
				return 0, false, hard
			}
			if !res.Errors {
				return 0, false, nil
			}
			for i, item := range res.Items {
				it, ok := item["index"]
				if !ok || it.Error == nil {
					continue
				}
				if it.Status == http.StatusTooManyRequests && attempt < bulkRetries {
					again = append(again, chunks[i])
					continue
				}
				e := &ItemError{ID: it.ID, FileID: chunks[i].FileID, ChunkIndex: chunks[i].ChunkIndex, Status: it.Status,
					Type: it.Error.Type, Reason: it.Error.Reason, Cause: it.Error.Cause.Reason}
				if c := it.Error.Cause.Cause; c != nil && c.Reason != nil {
					e.Cause = *c.Reason
				}
				failed = append(failed, e)
			}
			if len(again) == 0 {
				return 0, false, nil
			}
			return 0, true, errFullQueue
		})
	if hard != nil {
		return nil, hard
	}
	// Items still waiting for a retry when the deadline (or the caller) left no time for one.
	for _, c := range again {
		failed = append(failed, &ItemError{ID: ChunkID(c.KBID, c.FileID, c.ChunkIndex), FileID: c.FileID, ChunkIndex: c.ChunkIndex,
			Status: http.StatusTooManyRequests, Type: "es_rejected_execution_exception", Reason: "rejected by a full write queue; no time left to retry"})
	}
	return failed, nil
}

// errFullQueue marks an attempt of bulk that left items refused by a full write queue.
var errFullQueue = errors.New("items rejected by a full write queue")
