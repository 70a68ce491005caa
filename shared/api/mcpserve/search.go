package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// SearchToolName is the tool that searches a knowledge base, beside the agents; no agent's
// tool takes its name.
const SearchToolName = "search_knowledge_base"

var searchSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"knowledge_base_id": map[string]any{"type": "string", "description": "The knowledge base's id (GET /api/v1/knowledge-bases/ lists them)."},
		"query":             map[string]any{"type": "string", "description": "What to look for."},
		"top_k":             map[string]any{"type": "integer", "minimum": 1, "maximum": knowledge.MaxTopK, "description": fmt.Sprintf("How many passages to return (default %d).", knowledge.DefaultTopK)},
	},
	"required": []string{"knowledge_base_id", "query"},
}

// addSearch adds search_knowledge_base: POST /knowledge-bases/{id}/search/ as a tool, for a key
// with knowledge:read, over its company's knowledge bases only.
func (h *mcpServe) addSearch(s *mcp.Server, r *http.Request, p domain.Principal) {
	s.AddTool(&mcp.Tool{Name: SearchToolName, Title: "Search a knowledge base",
		Description: "Finds the passages of one of the company's knowledge bases nearest to a query, best first, with their file and score.",
		InputSchema: searchSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := h.search(ctx, p, req.Params.Arguments)
			if err != nil {
				return errorResult(h.g, r, err), nil
			}
			return res, nil
		})
}

func (h *mcpServe) search(ctx context.Context, p domain.Principal, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct {
		ID    string   `json:"knowledge_base_id"`
		Query *string  `json:"query"`
		TopK  *float64 `json:"top_k"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, domain.Invalid([]domain.FieldError{{Field: "arguments", Message: "must be an object with a string knowledge_base_id and query and a numeric top_k"}})
		}
	}
	if in.ID == "" {
		return nil, domain.Invalid([]domain.FieldError{{Field: "knowledge_base_id", Message: "is required"}})
	}
	hits, err := h.kb.Search(ctx, p, in.ID, knowledge.SearchInput{Query: in.Query, TopK: in.TopK})
	if err != nil {
		return nil, err
	}
	var text []string
	for i, hit := range hits {
		text = append(text, fmt.Sprintf("[%d] %s (chunk %d, score %.3f)\n%s", i+1, hit.FileName, hit.ChunkIndex, hit.Score, hit.Text))
	}
	if len(text) == 0 {
		text = append(text, "No passage matches the query.")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(text, "\n\n")}}, StructuredContent: api.SearchView(hits)}, nil
}
