package api

import (
	"net/http"

	"github.com/agentorch/agentorch/shared/knowledge"
)

// chunkJSON is one chunk of a file in a knowledge base (the contract's Chunk): its position in
// the file (chunk_index, from 0 in document order), its text as indexed, its length in characters
// and, when the knowledge base's embedding model could count them, its tokens.
type chunkJSON struct {
	Object          string   `json:"object"`
	KnowledgeBaseID string   `json:"knowledge_base_id"`
	FileID          string   `json:"file_id"`
	FileName        string   `json:"file_name"`
	ChunkIndex      int      `json:"chunk_index"`
	Text            string   `json:"text"`
	Characters      int      `json:"characters"`
	Tokens          *int     `json:"tokens,omitempty"`
	Tags            []string `json:"tags"`
}

// chunksPage lists GET /knowledge-bases/{kb_id}/chunks/?file_id&limit&offset: offset is the
// position of the page's first chunk in the file.
func chunksPage(svc KnowledgeService) func(r *http.Request, offset, limit int) ([]chunkJSON, bool, error) {
	return func(r *http.Request, offset, limit int) ([]chunkJSON, bool, error) {
		chunks, more, err := svc.Chunks(r.Context(), principal(r), r.PathValue("kb_id"),
			knowledge.ChunksInput{FileID: r.URL.Query().Get("file_id"), Offset: offset, Limit: limit})
		if err != nil {
			return nil, false, err
		}
		out := make([]chunkJSON, len(chunks))
		for i, c := range chunks {
			v := chunkJSON{Object: "knowledge_base.chunk", KnowledgeBaseID: c.KBID, FileID: c.FileID, FileName: c.FileName,
				ChunkIndex: c.ChunkIndex, Text: c.Text, Characters: len([]rune(c.Text)), Tags: c.Tags}
			if c.Tokens >= 0 {
				v.Tokens = &c.Tokens
			}
			if v.Tags == nil {
				v.Tags = []string{}
			}
			out[i] = v
		}
		return out, more, nil
	}
}
