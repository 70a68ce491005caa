package domain

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Session is one conversation with a configuration (inline, or an agent's current version) and
// its checkpoint: the variables kept between executions and the count of stored messages.
type Session struct {
	ID           string
	Name         string
	Title        string // the name a person gave it (PATCH /api/v1/sessions/{id}/); "" none
	Owner        string
	Company      string
	Config       map[string]any
	ConfigHash   string
	AgentID      string
	AgentName    string
	UserID       string // the end user served (ValidUserID), whose memory the agent uses; "" none
	Variables    map[string]any
	MessageCount int
	VisibleCount int
	Executions   int
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// Pending is what a paused execution waits for; nil when the session is not waiting.
	Pending *PendingAction
	// ActiveExecutionID is the execution running in the session (holding its live lease),
	// as read with the session; empty when none runs.
	ActiveExecutionID string
}

// Kinds of PendingAction.
const (
	PendingToolCalls = "tool_calls" // function tools: the client sends tool_results
	PendingApproval  = "approval"   // MCP calls that need approval: the client sends approvals
)

// PendingAction is what a paused execution waits for: the results of calls of the client's
// function tools, or a person's approval of MCP calls.
type PendingAction struct {
	Type        string // PendingToolCalls, PendingApproval or PendingElicitation
	ExecutionID string
	ToolCalls   []PendingToolCall
	// Input is the text of the user message the paused execution answers.
	Input     string
	CreatedAt time.Time
}

// PendingToolCall is one tool call a paused execution waits on (and, once made, part of the
// assistant message that asked for it).
type PendingToolCall struct {
	ID        string
	Name      string
	Arguments map[string]any
	Node      string
	Kind      string // ToolKindFunction or ToolKindMCP
	Server    string // an MCP call's server
	// Elicitation is what the call's server asks a person (PendingElicitation); nil otherwise.
	Elicitation *Elicitation
}

// CanAccess reports whether p may use the session: sessions belong to the key owner that made them.
func (s *Session) CanAccess(p Principal) bool {
	return s.Company == p.Company && s.Owner == p.Owner
}

// MaxSessionTitle is the longest title a session takes, in characters.
const MaxSessionTitle = 200

// SessionTitleRule describes a valid title for error messages.
const SessionTitleRule = "must be a string of 1 to 200 characters, not only spaces, without control characters; null clears the title"

// ValidSessionTitle reports whether t may be a session's title: 1 to MaxSessionTitle characters
// of valid UTF-8, not all white space, none a control character (C0, DEL, C1: line breaks and
// tabs too, as a title is one line).
func ValidSessionTitle(t string) bool {
	if t == "" || !utf8.ValidString(t) || utf8.RuneCountInString(t) > MaxSessionTitle || strings.TrimSpace(t) == "" {
		return false
	}
	return !strings.ContainsFunc(t, unicode.IsControl)
}

// Message is one stored conversation message.
type Message struct {
	ID          string
	Seq         int
	Role        string
	Node        string
	Content     string
	Visible     bool
	ExecutionID string
	CreatedAt   time.Time
	// Citations are the passages an assistant message drew on: nil (no field) when its agent
	// retrieved nothing, empty when it searched and found nothing.
	Citations []Citation
	// ToolCalls are the calls an assistant message asked for when its execution paused.
	ToolCalls []PendingToolCall
}

// Execution statuses.
const (
	ExecQueued    = "queued"
	ExecRunning   = "running"
	ExecCompleted = "completed"
	ExecFailed    = "failed"
	// ExecRequiresAction: the execution paused; Pending says for what.
	ExecRequiresAction = "requires_action"
	// ExecCancelled: a cancel request stopped the execution; what it produced before is kept.
	ExecCancelled = "cancelled"
)

// Execution is the record of one execute call: its status, events and result.
type Execution struct {
	ID            string
	SessionID     string
	CorrelationID *string
	Status        string
	StopReason    string
	Error         string
	ErrorType     string // error.type of Error; empty in older records (api_error)
	Events        []map[string]any
	MessageIDs    []string
	InputTokens   int
	OutputTokens  int
	// CostUSD is what the execution's model calls cost at list prices; nil when one of them
	// was of a model without a price (and in records from before costs were kept).
	CostUSD     *float64
	DurationMS  int64
	CreatedAt   time.Time
	CompletedAt *time.Time
	// Request is the pending request of an asynchronous execution, kept until it runs.
	Request map[string]any
	// Scopes are the grants (Principal.Grants) of the caller that queued an asynchronous
	// execution, kept with Request: the worker runs it with them, not with the session owner's
	// widest rights.
	Scopes []string
	// KeyID is the API key that queued an asynchronous execution, kept with Request: the
	// worker's run is counted under it in the usage report.
	KeyID string
	// Pending and Checkpoint are set while the execution waits (ExecRequiresAction): what for,
	// and the engine's state to continue from.
	Pending    *PendingAction
	Checkpoint []byte
	// Company and Owner are those of the execution's session, AgentID and AgentName its agent
	// (empty for an inline configuration's): the traces list (ExecutionFilter) holds it under
	// them. Empty in records from before they were kept, which are not listed.
	Company, Owner     string
	AgentID, AgentName string
}

// Feedback is one caller's rating of one message; giving it again updates it.
type Feedback struct {
	ID        string
	MessageID string
	SessionID string
	User      string
	Rating    *int
	Comment   *string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Commit is what one execution writes: its messages, its record, and the session's new
// checkpoint, with the lease released. The store writes it in one transaction that fails with a
// conflict if the lease was lost meanwhile.
type Commit struct {
	Session   *Session
	LeaseID   string
	Messages  []Message
	Execution *Execution
	// ExecutionFrom, when set, is the status the stored execution must still have for the
	// commit to be written (a queued run's, running): one a cancel or the watchdog settled
	// meanwhile is a conflict, and the run's outcome is not written over it.
	ExecutionFrom string
}
