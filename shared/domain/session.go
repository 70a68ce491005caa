package domain

import "time"

// Session is one conversation with a configuration (inline, or an agent's current version) and
// its checkpoint: the variables kept between executions and the count of stored messages.
type Session struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Owner        string         `json:"owner"`
	Company      string         `json:"company"`
	Config       map[string]any `json:"config"`
	ConfigHash   string         `json:"config_hash"`
	AgentID      string         `json:"agent_id,omitempty"`
	AgentName    string         `json:"agent_name,omitempty"`
	Variables    map[string]any `json:"variables"`
	MessageCount int            `json:"message_count"`
	VisibleCount int            `json:"visible_message_count"`
	Executions   int            `json:"execution_count"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
	// Pending is what a paused execution waits for; nil when the session is not waiting.
	Pending *PendingAction `json:"pending,omitempty"`
}

// Kinds of PendingAction.
const (
	PendingToolCalls = "tool_calls" // function tools: the client sends tool_results
	PendingApproval  = "approval"   // MCP calls that need approval: the client sends approvals
)

// PendingAction is what a paused execution waits for: the results of calls of the client's
// function tools, or a person's approval of MCP calls.
type PendingAction struct {
	Type        string            `json:"type"` // PendingToolCalls or PendingApproval
	ExecutionID string            `json:"execution_id"`
	ToolCalls   []PendingToolCall `json:"tool_calls"`
	// Input is the text of the user message the paused execution answers.
	Input     string    `json:"input"`
	CreatedAt time.Time `json:"created_at"`
}

// PendingToolCall is one tool call a paused execution waits on (and, once made, part of the
// assistant message that asked for it).
type PendingToolCall struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Node      string         `json:"node,omitempty"`
	Kind      string         `json:"kind,omitempty"`   // ToolKindFunction or ToolKindMCP
	Server    string         `json:"server,omitempty"` // an MCP call's server
}

// CanAccess reports whether p may use the session: sessions belong to the key owner that made them.
func (s *Session) CanAccess(p Principal) bool {
	return s.Company == p.Company && s.Owner == p.Owner
}

// Message is one stored conversation message.
type Message struct {
	ID          string    `json:"id"`
	Seq         int       `json:"seq"`
	Role        string    `json:"role"`
	Node        string    `json:"node,omitempty"`
	Content     string    `json:"content"`
	Visible     bool      `json:"visible"`
	ExecutionID string    `json:"execution_id"`
	CreatedAt   time.Time `json:"created_at"`
	// Citations are the passages an assistant message drew on: nil (no field) when its agent
	// retrieved nothing, empty when it searched and found nothing.
	Citations []Citation `json:"citations,omitzero"`
	// ToolCalls are the calls an assistant message asked for when its execution paused.
	ToolCalls []PendingToolCall `json:"tool_calls,omitempty"`
}

// Execution statuses.
const (
	ExecQueued    = "queued"
	ExecRunning   = "running"
	ExecCompleted = "completed"
	ExecFailed    = "failed"
	// ExecRequiresAction: the execution paused; Pending says for what.
	ExecRequiresAction = "requires_action"
)

// Execution is the record of one execute call: its status, events and result.
type Execution struct {
	ID            string           `json:"id"`
	SessionID     string           `json:"session_id"`
	CorrelationID *string          `json:"correlation_id"`
	Status        string           `json:"status"`
	StopReason    string           `json:"stop_reason,omitempty"`
	Error         string           `json:"error,omitempty"`
	ErrorType     string           `json:"error_type,omitempty"` // error.type of Error; empty in older records (api_error)
	Events        []map[string]any `json:"events"`
	MessageIDs    []string         `json:"message_ids"`
	InputTokens   int              `json:"input_tokens"`
	OutputTokens  int              `json:"output_tokens"`
	DurationMS    int64            `json:"execution_time"`
	CreatedAt     time.Time        `json:"created_at"`
	CompletedAt   *time.Time       `json:"completed_at"`
	// Request is the pending request of an asynchronous execution, kept until it runs.
	Request map[string]any `json:"request,omitempty"`
	// Scopes are the grants (Principal.Grants) of the caller that queued an asynchronous
	// execution, kept with Request: the worker runs it with them, not with the session owner's
	// widest rights.
	Scopes []string `json:"scopes,omitempty"`
	// Pending and Checkpoint are set while the execution waits (ExecRequiresAction): what for,
	// and the engine's state to continue from.
	Pending    *PendingAction `json:"pending,omitempty"`
	Checkpoint []byte         `json:"checkpoint,omitempty"`
}

// Feedback is one caller's rating of one message; giving it again updates it.
type Feedback struct {
	ID        string    `json:"id"`
	MessageID string    `json:"message"`
	SessionID string    `json:"session_id"`
	User      string    `json:"user"`
	Rating    *int      `json:"rating"`
	Comment   *string   `json:"comment"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Commit is what one execution writes: its messages, its record, and the session's new
// checkpoint, with the lease released. The store writes it in one transaction that fails with a
// conflict if the lease was lost meanwhile.
type Commit struct {
	Session   *Session
	LeaseID   string
	Messages  []Message
	Execution *Execution
}
