package knowledge

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// MaxChunksLimit bounds a page of a file's chunks (GET …/chunks/?limit), as the other lists.
const MaxChunksLimit = 100

// ChunksInput asks for a page of one file's chunks in a knowledge base: the file (required),
// the position of the first chunk (offset: ingestion numbers a file's chunks 0, 1, 2 … in
// document order) and how many (1 to MaxChunksLimit).
type ChunksInput struct {
	FileID        string
	Offset, Limit int
}

// Chunk is one stored chunk as GET …/chunks/ shows it: its text as indexed, its position in the
// file, and its tokens as the knowledge base's embedding model counts them (-1 when that model
// cannot be had to count them: the chunks are still shown).
type Chunk struct {
	domain.Chunk
	Tokens int
}

// Chunks reads a page of one file's chunks in a knowledge base, in document order, and whether
// more follow: one GetKB and one index search (of limit+1 positions, to know whether another page
// follows). A knowledge base of another company, or none, is a 404, as is a file that is not one
// of its datasources; a missing or empty file_id is a 400 naming it. A datasource whose chunks are
// gone (removed, failed) or not yet indexed has none.
func (s *Service) Chunks(ctx context.Context, p domain.Principal, kbID string, in ChunksInput) ([]Chunk, bool, error) {
	switch {
	case in.FileID == "":
		return nil, false, domain.Invalid([]domain.FieldError{{Field: "file_id", Message: "is required: the id of a file of the knowledge base"}})
	case !domain.IsID(in.FileID):
		return nil, false, domain.Invalid([]domain.FieldError{{Field: "file_id", Message: "must be a file id (a UUID)"}})
	case in.Offset < 0:
		return nil, false, domain.Invalid([]domain.FieldError{{Field: "offset", Message: "must not be negative"}})
	case in.Limit < 1 || in.Limit > MaxChunksLimit:
		return nil, false, domain.Invalid([]domain.FieldError{{Field: "limit", Message: fmt.Sprintf("must be an integer from 1 to %d", MaxChunksLimit)}})
	}
	kb, err := s.kb(ctx, p, kbID)
	if err != nil {
		return nil, false, err
	}
	if _, ok := kb.Sources[in.FileID]; !ok {
		return nil, false, domain.Errorf(domain.KindNotFound, "File not found in knowledge base '%s'", kb.Name)
	}
	if kb.Index == "" {
		return []Chunk{}, false, nil
	}
	found, err := s.d.Index.Chunks(ctx, kb.Index, p.Company, kb.ID, in.FileID, in.Offset, in.Limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("chunks of %s in %s: %w", in.FileID, kb.ID, err)
	}
	more := len(found) > in.Limit
	if more {
		found = found[:in.Limit]
	}
	count := func(string) int { return -1 }
	if emb, err := s.d.Embedders.Embedder(ctx, kb.Embedding); err == nil {
		count = emb.Tokens
	}
	out := make([]Chunk, len(found))
	for i, c := range found {
		out[i] = Chunk{Chunk: c, Tokens: count(c.Text)}
	}
	return out, more, nil
}
