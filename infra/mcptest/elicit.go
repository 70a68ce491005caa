package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// PathElicit serves a server (Streamable HTTP, stateful: it sends requests to the client) whose
// ask tool asks the person behind the client for input (elicitation/create, form mode).
const PathElicit = "/elicit"

// AskSchema is the form ask requests: a name with a default, a required age, a verified flag
// with a default.
var AskSchema = map[string]any{"type": "object", "required": []any{"age"}, "properties": map[string]any{
	"name":     map[string]any{"type": "string", "description": "Your name", "default": "John Doe"},
	"age":      map[string]any{"type": "integer", "description": "Your age"},
	"verified": map[string]any{"type": "boolean", "default": true},
}}

// NewElicitServer returns the server of PathElicit. Its ask tool asks questions (default 1)
// questions, "Question i of n: who are you?", one after the other, and answers each answer on
// a line: the action and, when accepted, the content as JSON ("accept {...}", "decline").
func NewElicitServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "agentorch-mcptest-elicit", Version: "1.0.0"}, nil)
	s.AddTool(&sdk.Tool{Name: "ask", Description: "Asks the person who they are, then says what they answered.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"questions": map[string]any{"type": "number"}}}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct {
				Questions int `json:"questions"`
			}
			if len(req.Params.Arguments) > 0 {
				_ = json.Unmarshal(req.Params.Arguments, &args)
			}
			n := max(args.Questions, 1)
			var lines []string
			for i := 1; i <= n; i++ {
				res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: fmt.Sprintf("Question %d of %d: who are you?", i, n),
					RequestedSchema: AskSchema})
				if err != nil {
					return nil, fmt.Errorf("elicit: %w", err)
				}
				line := res.Action
				if res.Action == "accept" {
					b, _ := json.Marshal(res.Content)
					line += " " + string(b)
				}
				lines = append(lines, line)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(lines, "\n")}}}, nil
		})
	return s
}
