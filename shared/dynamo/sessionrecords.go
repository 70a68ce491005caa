package dynamo

import (
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// The stored forms of a session partition's records (the data attribute of their items). Their
// keys are the ones the items were first written with; records_test.go holds them to those bytes.

// sessionRecord is the stored form of a session with its checkpoint.
type sessionRecord struct {
	ID           string               `json:"id"`
	Name         string               `json:"name"`
	Owner        string               `json:"owner"`
	Company      string               `json:"company"`
	Config       map[string]any       `json:"config"`
	ConfigHash   string               `json:"config_hash"`
	AgentID      string               `json:"agent_id,omitempty"`
	AgentName    string               `json:"agent_name,omitempty"`
	UserID       string               `json:"user_id,omitempty"`
	Variables    map[string]any       `json:"variables"`
	MessageCount int                  `json:"message_count"`
	VisibleCount int                  `json:"visible_message_count"`
	Executions   int                  `json:"execution_count"`
	CreatedAt    time.Time            `json:"created_at"`
	UpdatedAt    time.Time            `json:"updated_at"`
	Pending      *pendingActionRecord `json:"pending,omitempty"`
}

func newSessionRecord(s *domain.Session) sessionRecord {
	return sessionRecord{ID: s.ID, Name: s.Name, Owner: s.Owner, Company: s.Company, Config: s.Config, ConfigHash: s.ConfigHash,
		AgentID: s.AgentID, AgentName: s.AgentName, UserID: s.UserID, Variables: s.Variables, MessageCount: s.MessageCount,
		VisibleCount: s.VisibleCount, Executions: s.Executions, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		Pending: newPendingRecord(s.Pending)}
}

func (r *sessionRecord) session() *domain.Session {
	return &domain.Session{ID: r.ID, Name: r.Name, Owner: r.Owner, Company: r.Company, Config: r.Config, ConfigHash: r.ConfigHash,
		AgentID: r.AgentID, AgentName: r.AgentName, UserID: r.UserID, Variables: r.Variables, MessageCount: r.MessageCount,
		VisibleCount: r.VisibleCount, Executions: r.Executions, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Pending: r.Pending.pending()}
}

// pendingActionRecord is the stored form of what a paused execution waits for.
type pendingActionRecord struct {
	Type        string                  `json:"type"`
	ExecutionID string                  `json:"execution_id"`
	ToolCalls   []pendingToolCallRecord `json:"tool_calls"`
	Input       string                  `json:"input"`
	CreatedAt   time.Time               `json:"created_at"`
}

func newPendingRecord(p *domain.PendingAction) *pendingActionRecord {
	if p == nil {
		return nil
	}
	return &pendingActionRecord{Type: p.Type, ExecutionID: p.ExecutionID, ToolCalls: newToolCallRecords(p.ToolCalls),
		Input: p.Input, CreatedAt: p.CreatedAt}
}

func (r *pendingActionRecord) pending() *domain.PendingAction {
	if r == nil {
		return nil
	}
	return &domain.PendingAction{Type: r.Type, ExecutionID: r.ExecutionID, ToolCalls: toolCalls(r.ToolCalls),
		Input: r.Input, CreatedAt: r.CreatedAt}
}

// pendingToolCallRecord is the stored form of a tool call.
type pendingToolCallRecord struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Node      string         `json:"node,omitempty"`
	Kind      string         `json:"kind,omitempty"`
	Server    string         `json:"server,omitempty"`
	// Elicitation is the question the call's server asked (a pending elicitation).
	Elicitation *elicitationRecord `json:"elicitation,omitempty"`
}

// elicitationRecord is the stored form of a server's question.
type elicitationRecord struct {
	Message string         `json:"message"`
	Schema  map[string]any `json:"requested_schema"`
}

func newElicitationRecord(e *domain.Elicitation) *elicitationRecord {
	if e == nil {
		return nil
	}
	return &elicitationRecord{Message: e.Message, Schema: e.Schema}
}

func (r *elicitationRecord) elicitation() *domain.Elicitation {
	if r == nil {
		return nil
	}
	return &domain.Elicitation{Message: r.Message, Schema: r.Schema}
}

func newToolCallRecords(calls []domain.PendingToolCall) []pendingToolCallRecord {
	if calls == nil {
		return nil
	}
	out := make([]pendingToolCallRecord, len(calls))
	for i, c := range calls {
		out[i] = pendingToolCallRecord{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Node: c.Node, Kind: c.Kind, Server: c.Server,
			Elicitation: newElicitationRecord(c.Elicitation)}
	}
	return out
}

func toolCalls(rs []pendingToolCallRecord) []domain.PendingToolCall {
	if rs == nil {
		return nil
	}
	out := make([]domain.PendingToolCall, len(rs))
	for i, r := range rs {
		out[i] = domain.PendingToolCall{ID: r.ID, Name: r.Name, Arguments: r.Arguments, Node: r.Node, Kind: r.Kind, Server: r.Server,
			Elicitation: r.Elicitation.elicitation()}
	}
	return out
}

// messageRecord is the stored form of a message (its content has an attribute of its own; see
// messageItem).
type messageRecord struct {
	ID          string                  `json:"id"`
	Seq         int                     `json:"seq"`
	Role        string                  `json:"role"`
	Node        string                  `json:"node,omitempty"`
	Content     string                  `json:"content"`
	Visible     bool                    `json:"visible"`
	ExecutionID string                  `json:"execution_id"`
	CreatedAt   time.Time               `json:"created_at"`
	Citations   []citationRecord        `json:"citations,omitzero"` // nil: none retrieved; empty: none found
	ToolCalls   []pendingToolCallRecord `json:"tool_calls,omitempty"`
}

func newMessageRecord(m *domain.Message) messageRecord {
	var cites []citationRecord
	if m.Citations != nil {
		cites = make([]citationRecord, len(m.Citations))
		for i, c := range m.Citations {
			cites[i] = citationRecord(c)
		}
	}
	return messageRecord{ID: m.ID, Seq: m.Seq, Role: m.Role, Node: m.Node, Content: m.Content, Visible: m.Visible,
		ExecutionID: m.ExecutionID, CreatedAt: m.CreatedAt, Citations: cites, ToolCalls: newToolCallRecords(m.ToolCalls)}
}

func (r *messageRecord) message() domain.Message {
	var cites []domain.Citation
	if r.Citations != nil {
		cites = make([]domain.Citation, len(r.Citations))
		for i, c := range r.Citations {
			cites[i] = domain.Citation(c)
		}
	}
	return domain.Message{ID: r.ID, Seq: r.Seq, Role: r.Role, Node: r.Node, Content: r.Content, Visible: r.Visible,
		ExecutionID: r.ExecutionID, CreatedAt: r.CreatedAt, Citations: cites, ToolCalls: toolCalls(r.ToolCalls)}
}

// citationRecord is the stored form of a citation of a message.
type citationRecord struct {
	Index           int     `json:"index"`
	KnowledgeBaseID string  `json:"knowledge_base_id"`
	FileID          string  `json:"file_id"`
	FileName        string  `json:"file_name"`
	ChunkIndex      int     `json:"chunk_index"`
	Score           float64 `json:"score"`
	Text            string  `json:"text"`
}

// executionRecord is the stored form of an execution.
type executionRecord struct {
	ID            string               `json:"id"`
	SessionID     string               `json:"session_id"`
	CorrelationID *string              `json:"correlation_id"`
	Status        string               `json:"status"`
	StopReason    string               `json:"stop_reason,omitempty"`
	Error         string               `json:"error,omitempty"`
	ErrorType     string               `json:"error_type,omitempty"` // empty in records from before it was kept
	Events        []map[string]any     `json:"events"`
	MessageIDs    []string             `json:"message_ids"`
	InputTokens   int                  `json:"input_tokens"`
	OutputTokens  int                  `json:"output_tokens"`
	CostUSD       *float64             `json:"cost_usd,omitempty"`
	DurationMS    int64                `json:"execution_time"`
	CreatedAt     time.Time            `json:"created_at"`
	CompletedAt   *time.Time           `json:"completed_at"`
	Request       map[string]any       `json:"request,omitempty"`
	Scopes        []string             `json:"scopes,omitempty"`
	KeyID         string               `json:"key_id,omitempty"`
	Pending       *pendingActionRecord `json:"pending,omitempty"`
	Checkpoint    []byte               `json:"checkpoint,omitempty"` // the engine's state, as it encoded it
	// Its session's company, owner and agent, under which the traces list holds it
	// (executions.go); absent in records from before they were kept.
	Company   string `json:"company,omitempty"`
	Owner     string `json:"owner,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	AgentName string `json:"agent_name,omitempty"`
}

func newExecutionRecord(e *domain.Execution) executionRecord {
	return executionRecord{ID: e.ID, SessionID: e.SessionID, CorrelationID: e.CorrelationID, Status: e.Status,
		StopReason: e.StopReason, Error: e.Error, ErrorType: e.ErrorType, Events: e.Events, MessageIDs: e.MessageIDs,
		InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, CostUSD: e.CostUSD, DurationMS: e.DurationMS, CreatedAt: e.CreatedAt,
		CompletedAt: e.CompletedAt, Request: e.Request, Scopes: e.Scopes, KeyID: e.KeyID, Pending: newPendingRecord(e.Pending),
		Checkpoint: e.Checkpoint, Company: e.Company, Owner: e.Owner, AgentID: e.AgentID, AgentName: e.AgentName}
}

func (r *executionRecord) execution() *domain.Execution {
	return &domain.Execution{ID: r.ID, SessionID: r.SessionID, CorrelationID: r.CorrelationID, Status: r.Status,
		StopReason: r.StopReason, Error: r.Error, ErrorType: r.ErrorType, Events: r.Events, MessageIDs: r.MessageIDs,
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CostUSD: r.CostUSD, DurationMS: r.DurationMS, CreatedAt: r.CreatedAt,
		CompletedAt: r.CompletedAt, Request: r.Request, Scopes: r.Scopes, KeyID: r.KeyID, Pending: r.Pending.pending(),
		Checkpoint: r.Checkpoint, Company: r.Company, Owner: r.Owner, AgentID: r.AgentID, AgentName: r.AgentName}
}

// feedbackRecord is the stored form of a feedback.
type feedbackRecord struct {
	ID        string    `json:"id"`
	MessageID string    `json:"message"`
	SessionID string    `json:"session_id"`
	User      string    `json:"user"`
	Rating    *int      `json:"rating"`
	Comment   *string   `json:"comment"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func newFeedbackRecord(f *domain.Feedback) feedbackRecord {
	return feedbackRecord{ID: f.ID, MessageID: f.MessageID, SessionID: f.SessionID, User: f.User, Rating: f.Rating,
		Comment: f.Comment, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}
