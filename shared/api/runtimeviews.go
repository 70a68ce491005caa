package api

import (
	"encoding/json"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

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

// The runtime's answers. Their members are declared in the order encoding/json wrote them when
// they were maps (sorted by key), so that their bytes stay the same.

// executeResultJSON is the execute result in the session shape (also an execution's result).
type executeResultJSON struct {
	CompletedAt    int64               `json:"completed_at"`
	Config         map[string]any      `json:"config"`
	CreatedAt      int64               `json:"created_at"`
	ExecutionTime  int64               `json:"execution_time"`
	ID             string              `json:"id"`
	Messages       []messageView       `json:"messages"`
	Metadata       resultMetadataJSON  `json:"metadata"`
	Object         string              `json:"object"`
	RequiredAction *requiredActionJSON `json:"required_action,omitempty"`
	Status         string              `json:"status"`
}

// resultMetadataJSON is an execute result's metadata.
type resultMetadataJSON struct {
	CorrelationID *string   `json:"correlation_id"`
	EventCount    int       `json:"event_count"`
	ExecutionID   string    `json:"execution_id"`
	StopReason    string    `json:"stop_reason"`
	Usage         usageJSON `json:"usage"`
}

// usageJSON counts the tokens of a run's model calls and what they cost.
type usageJSON struct {
	CostUSD      *float64 `json:"cost_usd"` // null: a call was of a model without a price
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
}

// executeMessageJSON is the execute result in the message shape (format=message).
type executeMessageJSON struct {
	CorrelationID  string              `json:"correlation_id"`
	MessageID      string              `json:"message_id"`
	RequiredAction *requiredActionJSON `json:"required_action,omitempty"`
	Response       messageResponseJSON `json:"response"`
	Status         string              `json:"status,omitempty"` // only when the run paused or was cancelled
	Success        bool                `json:"success"`
}

// messageResponseJSON is the message shape's response.
type messageResponseJSON struct {
	Citations []citationJSON `json:"citations,omitzero"`
	Content   string         `json:"content"`
	// ToolCalls is a []toolRunJSON (the calls the run made) or, when it paused, a
	// []toolCallJSON (the calls the client must answer); jsonTypes holds both to their schemas.
	ToolCalls any `json:"tool_calls"`
}

// toolRunJSON is a tool call the run made, with what the model saw of its result.
type toolRunJSON struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Input   map[string]any `json:"input"`
	Output  string         `json:"output"`
	IsError bool           `json:"is_error"`
}

func toolRunViews(calls []sessions.ToolCall) []toolRunJSON {
	out := make([]toolRunJSON, len(calls)) // [] when none
	for i, c := range calls {
		out[i] = toolRunJSON(c)
	}
	return out
}

// requiredActionJSON is what a paused execution waits for, as results, polls and sessions show it.
type requiredActionJSON struct {
	ExecutionID string         `json:"execution_id"`
	ToolCalls   []toolCallJSON `json:"tool_calls"`
	Type        string         `json:"type"`
}

// toolCallJSON is a call a paused execution waits on.
type toolCallJSON struct {
	Arguments map[string]any `json:"arguments"`
	ID        string         `json:"id"`
	Kind      string         `json:"kind"`
	Name      string         `json:"name"`
	Node      string         `json:"node,omitempty"`
	Server    string         `json:"server,omitempty"`
	// Elicitation is the question the call's server asks a person (required_action.type
	// "elicitation"); absent otherwise.
	Elicitation *elicitationView `json:"elicitation,omitempty"`
}

// elicitationView is a server's question: its message and the form it requests.
type elicitationView struct {
	Message         string         `json:"message"`
	RequestedSchema map[string]any `json:"requested_schema"`
}

func viewRequiredAction(p *domain.PendingAction) *requiredActionJSON {
	if p == nil {
		return nil
	}
	calls := make([]toolCallJSON, len(p.ToolCalls))
	for i, c := range p.ToolCalls {
		calls[i] = viewToolCall(c)
	}
	return &requiredActionJSON{Type: p.Type, ExecutionID: p.ExecutionID, ToolCalls: calls}
}

func viewToolCall(c domain.PendingToolCall) toolCallJSON {
	args := c.Arguments
	if args == nil {
		args = map[string]any{}
	}
	v := toolCallJSON{ID: c.ID, Name: c.Name, Arguments: args, Kind: c.Kind, Node: c.Node, Server: c.Server}
	if e := c.Elicitation; e != nil {
		v.Elicitation = &elicitationView{Message: e.Message, RequestedSchema: e.Schema}
	}
	return v
}

// toolCallViews are the calls an assistant turn asked for (nil when none: the member is left out).
func toolCallViews(calls []domain.PendingToolCall) []toolCallJSON {
	if len(calls) == 0 {
		return nil
	}
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		out[i] = viewToolCall(c)
	}
	return out
}

// executionJSON is an execution as the poll endpoint shows it, with its result once completed.
type executionJSON struct {
	CompletedAt    *int64              `json:"completed_at"`
	CorrelationID  *string             `json:"correlation_id"`
	CreatedAt      int64               `json:"created_at"`
	Error          *executionErrorJSON `json:"error,omitempty"`
	ID             string              `json:"id"`
	Object         string              `json:"object"`
	RequiredAction *requiredActionJSON `json:"required_action,omitempty"`
	Result         *executeResultJSON  `json:"result,omitempty"`
	SessionID      string              `json:"session_id"`
	Status         string              `json:"status"`
}

// executionErrorJSON is a failed execution's error, as the error envelope's error shows it.
type executionErrorJSON struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// historyMessageJSON is a message of a session's history.
type historyMessageJSON struct {
	Citations []citationJSON `json:"citations,omitzero"`
	Content   string         `json:"content"`
	ID        string         `json:"id"`
	Role      string         `json:"role"`
	Timestamp string         `json:"timestamp"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

// messagesPageJSON is a page of a session's history; the messages are historyMessageJSON,
// encoded as fitPage cut the page.
type messagesPageJSON struct {
	HasMore  bool              `json:"has_more"`
	Messages []json.RawMessage `json:"messages"`
	Total    int               `json:"total"`
}

// eventsPageJSON is a page of a session's events, encoded as fitPage cut the page.
type eventsPageJSON struct {
	Events  []json.RawMessage `json:"events"`
	HasMore bool              `json:"has_more"`
	Total   int               `json:"total"`
}

// runtimeEventJSON is a runtime event as a stream sends it (the members in engine.Event's order).
type runtimeEventJSON struct {
	Type string         `json:"type"`
	Node string         `json:"node,omitempty"`
	Time time.Time      `json:"timestamp"`
	Data map[string]any `json:"data,omitempty"`
	// ExecutionID is the run's execution, known from its start: the id a cancel names.
	ExecutionID string `json:"execution_id,omitempty"`
}

// textDeltaJSON is text as the model writes it, as a stream sends it.
type textDeltaJSON struct {
	Delta string `json:"delta"`
	Node  string `json:"node"`
}
