package domain

import "context"

// The model-facing types: what the engine sends a language model and gets back, and what a tool
// is. They live here, with no dependency, so that the model adapters (bedrock, openai, localmodel)
// and the tools implement them without importing the engine.

// Roles of conversation turns.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Part types.
const (
	PartText       = "text"
	PartImage      = "image"
	PartDocument   = "document"
	PartToolUse    = "tool_use"
	PartToolResult = "tool_result"
)

// Part is one piece of a turn's content.
type Part struct {
	Type       string
	Text       string
	Image      *Media
	Document   *Media
	ToolUse    *ToolUse
	ToolResult *ToolResult
}

// Media is an image or document given to the model as bytes.
type Media struct {
	Format string // png, jpeg, gif, webp; pdf, txt, csv, md, html, doc, docx, xls, xlsx
	Name   string
	Data   []byte
}

// ToolUse is the model asking for a tool call.
type ToolUse struct {
	ID    string
	Name  string
	Input map[string]any
}

// ToolResult answers a ToolUse; IsError reports a failed call (the model sees the error text).
type ToolResult struct {
	ToolUseID string
	Content   string
	IsError   bool
}

// Turn is one message of the conversation as the model sees it. Tool results travel in user
// turns, as both Bedrock Converse and the engine's history expect.
type Turn struct {
	Role  string
	Parts []Part
}

// ToolSpec describes a tool to the model: its name, what it does and a JSON schema of its input.
type ToolSpec struct {
	Name        string
	Description string
	Schema      map[string]any
}

// ModelRequest is one call to a model.
type ModelRequest struct {
	Provider    string // bedrock, openai, local; empty means the deployment default
	Model       string
	System      string
	Turns       []Turn
	Tools       []ToolSpec
	MaxTokens   int
	Temperature *float64
	TopP        *float64
	// OnText, when set, receives text as the model produces it (whole text at once for
	// adapters that do not stream).
	OnText func(delta string)
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Add sums usage.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
}

// Stop reasons of a model response.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopFiltered  = "content_filtered"
)

// ModelResponse is the model's answer: text and tool-use parts.
type ModelResponse struct {
	Parts      []Part
	StopReason string
	Usage      Usage
}

// Text joins the text parts of a response.
func (r *ModelResponse) Text() string {
	var s string
	for _, p := range r.Parts {
		if p.Type == PartText {
			s += p.Text
		}
	}
	return s
}

// Model is a language model provider adapter. Adapters retry throttling with backoff within the
// context deadline and return errors of domain kinds (overloaded, invalid) where they apply.
type Model interface {
	Converse(ctx context.Context, req ModelRequest) (*ModelResponse, error)
}

// Tool is a callable tool. Call returns the result text for the model; an error is reported to
// the model as an error result and never ends the run.
type Tool interface {
	Spec() ToolSpec
	Call(ctx context.Context, input map[string]any) (string, error)
}

// ToolMeta says what a tool is beyond its spec: a Tool without it (DescribedTool) is a built-in
// that runs when the model calls it.
type ToolMeta struct {
	Kind   string // ToolKindBuiltin, ToolKindMCP or ToolKindFunction
	Server string // an MCP tool's server, by name
	// ServerID is an MCP tool's server record (MCPServer.ID): an approval binds to it, so a
	// server deleted, or replaced under the same name, never runs a call approved for the old one.
	ServerID string
	// NeedsApproval: a call waits for a person's approval before it runs.
	NeedsApproval bool
	// Check validates a call's arguments against the tool's schema before the call is handed
	// to a person or to the client (nil: no check); Call checks them itself.
	Check func(args map[string]any) error
}

// DescribedTool is a tool that says what it is: an MCP server's tool or a function the client
// runs. A function tool's Call is never made: the engine hands the call to the client.
type DescribedTool interface {
	Tool
	Meta() ToolMeta
}
