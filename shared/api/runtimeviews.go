package api

import "github.com/agentorch/agentorch/shared/domain"

// citationJSON is a citation of a message as results, polls and message lists show it.
type citationJSON struct {
	Index           int     `json:"index"`
	KnowledgeBaseID string  `json:"knowledge_base_id"`
	FileID          string  `json:"file_id"`
	FileName        string  `json:"file_name"`
	ChunkIndex      int     `json:"chunk_index"`
	Score           float64 `json:"score"`
	Text            string  `json:"text"`
}

// citationViews keeps nil (the agent retrieved nothing: no member) apart from empty (it
// searched and found nothing: []).
func citationViews(cs []domain.Citation) []citationJSON {
	if cs == nil {
		return nil
	}
	out := make([]citationJSON, len(cs))
	for i, c := range cs {
		out[i] = citationJSON(c)
	}
	return out
}
