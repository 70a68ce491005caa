package a2aserve

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// ResponseArtifact is the id and name of the artifact that holds an agent's reply.
const ResponseArtifact = "response"

// A task's id is its session's id and its execution's, so that tasks/get and tasks/cancel,
// which name the task alone, find it with one read: "<session id>.<execution id>".
func taskID(sessionID, execID string) a2a.TaskID { return a2a.TaskID(sessionID + "." + execID) }

// splitTaskID is the session and execution a task id names.
func splitTaskID(id a2a.TaskID) (sessionID, execID string, ok bool) {
	sessionID, execID, ok = strings.Cut(string(id), ".")
	return sessionID, execID, ok && domain.IsID(sessionID) && domain.IsID(execID)
}

// state is an execution's status as a task's state.
func state(status string) a2a.TaskState {
	switch status {
	case domain.ExecQueued:
		return a2a.TaskStateSubmitted
	case domain.ExecRunning:
		return a2a.TaskStateWorking
	case domain.ExecCompleted:
		return a2a.TaskStateCompleted
	case domain.ExecFailed:
		return a2a.TaskStateFailed
	case domain.ExecCancelled:
		return a2a.TaskStateCanceled
	case domain.ExecRequiresAction:
		return a2a.TaskStateInputRequired
	}
	return a2a.TaskStateUnknown
}

// task is an execution as an A2A task: its state, what it waits for or why it failed as the
// status's message, its reply as the "response" artifact and its messages as the history.
func task(sessionID string, e *domain.Execution, msgs []domain.Message, pending *domain.PendingAction) *a2a.Task {
	id := taskID(sessionID, e.ID)
	t := &a2a.Task{ID: id, ContextID: sessionID, Status: status(id, sessionID, e, pending), Metadata: metadata(sessionID, e)}
	for _, m := range msgs {
		t.History = append(t.History, &a2a.Message{ID: m.ID, Role: a2a.MessageRoleAgent, ContextID: sessionID, TaskID: id,
			Parts: a2a.ContentParts{a2a.TextPart{Text: m.Content}}})
	}
	if reply := replyText(msgs); reply != "" {
		t.Artifacts = []*a2a.Artifact{{ID: ResponseArtifact, Name: ResponseArtifact, Parts: a2a.ContentParts{a2a.TextPart{Text: reply}}}}
	}
	return t
}

func status(id a2a.TaskID, sessionID string, e *domain.Execution, pending *domain.PendingAction) a2a.TaskStatus {
	at := e.CreatedAt
	if e.CompletedAt != nil {
		at = *e.CompletedAt
	}
	at = at.UTC()
	st := a2a.TaskStatus{State: state(e.Status), Timestamp: &at}
	agent := func(parts ...a2a.Part) *a2a.Message {
		return &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent, ContextID: sessionID, TaskID: id, Parts: parts}
	}
	switch e.Status {
	case domain.ExecRequiresAction:
		if pending == nil {
			pending = e.Pending
		}
		if pending != nil {
			st.Message = agent(a2a.TextPart{Text: pendingText(pending)}, a2a.DataPart{Data: map[string]any{"required_action": requiredAction(pending)}})
		}
	case domain.ExecFailed:
		typ := e.ErrorType
		if typ == "" {
			typ = "api_error"
		}
		st.Message = agent(a2a.TextPart{Text: typ + ": " + e.Error})
	}
	return st
}

// failedTask is a run that failed after it started (its execution id known), as its task.
func failedTask(sessionID, execID, typ, msg string) *a2a.Task {
	now := time.Now().UTC()
	return task(sessionID, &domain.Execution{ID: execID, Status: domain.ExecFailed, ErrorType: typ, Error: msg, CreatedAt: now, CompletedAt: &now}, nil, nil)
}

func metadata(sessionID string, e *domain.Execution) map[string]any {
	m := map[string]any{"session_id": sessionID, "execution_id": e.ID, "status": e.Status}
	if e.InputTokens+e.OutputTokens > 0 {
		m["usage"] = map[string]any{"input_tokens": e.InputTokens, "output_tokens": e.OutputTokens}
	}
	return m
}

func replyText(msgs []domain.Message) string {
	var text []string
	for _, m := range msgs {
		if m.Content != "" {
			text = append(text, m.Content)
		}
	}
	return strings.Join(text, "\n\n")
}

// pendingText tells a person what the paused run waits for and how to answer.
func pendingText(p *domain.PendingAction) string {
	names := make([]string, len(p.ToolCalls))
	for i, c := range p.ToolCalls {
		names[i] = c.Name
	}
	if p.Type == domain.PendingApproval {
		return "The run waits for approval of " + strings.Join(names, ", ") + `: answer with a data part {"approvals":[{"tool_call_id":…,"approve":true}]} in a message with this taskId.`
	}
	return "The run waits for the results of " + strings.Join(names, ", ") + `: answer with a data part {"tool_results":[{"tool_call_id":…,"output":…}]} in a message with this taskId.`
}

// requiredAction is what a paused execution waits for, in the execute result's shape
// (required_action).
func requiredAction(p *domain.PendingAction) map[string]any {
	calls := make([]map[string]any, len(p.ToolCalls))
	for i, c := range p.ToolCalls {
		args := c.Arguments
		if args == nil {
			args = map[string]any{}
		}
		call := map[string]any{"id": c.ID, "name": c.Name, "arguments": args, "kind": c.Kind}
		if c.Node != "" {
			call["node"] = c.Node
		}
		if c.Server != "" {
			call["server"] = c.Server
		}
		calls[i] = call
	}
	return map[string]any{"type": p.Type, "execution_id": p.ExecutionID, "tool_calls": calls}
}

// answerOf is a data part's answer to a paused run: {"tool_results":[…]} or {"approvals":[…]},
// as the execute body carries them (an output that is not a string is given as its JSON). ok
// is false when the data carries neither.
func answerOf(data map[string]any) (a *sessions.Answer, ok bool, err error) {
	_, results := data["tool_results"]
	_, approvals := data["approvals"]
	if !results && !approvals {
		return nil, false, nil
	}
	var body struct {
		ToolResults []struct {
			ToolCallID string          `json:"tool_call_id"`
			Output     json.RawMessage `json:"output"`
			IsError    bool            `json:"is_error"`
		} `json:"tool_results"`
		Approvals []sessions.ApprovalInput `json:"approvals"`
	}
	raw, _ := json.Marshal(data) // it was decoded from JSON
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, true, invalidParams("The data part's tool_results or approvals are not in the execute body's shape")
	}
	a = &sessions.Answer{HasResults: results, HasApprovals: approvals, Approvals: body.Approvals}
	for _, r := range body.ToolResults {
		out := string(r.Output)
		var s string
		if json.Unmarshal(r.Output, &s) == nil {
			out = s
		}
		a.ToolResults = append(a.ToolResults, sessions.ToolResultInput{ToolCallID: r.ToolCallID, Output: out, IsError: r.IsError})
	}
	return a, true, nil
}
