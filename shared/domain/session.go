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
}

// Execution statuses.
const (
	ExecQueued    = "queued"
	ExecRunning   = "running"
	ExecCompleted = "completed"
	ExecFailed    = "failed"
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
