package sessions

import (
	"context"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
)

// MemoryQueue queues the extraction of memory after a turn (the memory feature implements it:
// one SQS send).
type MemoryQueue interface {
	Enqueue(ctx context.Context, job domain.MemoryExtractJob) error
}

// Reasons of a memory_extract event that queued nothing.
const (
	extractNoWrite  = "this API key lacks the memory:write scope"
	extractNoQueue  = "this deployment has no memory extraction queue"
	extractNoText   = "the turn has no text to extract from"
	extractNotSent  = "the extraction could not be queued"
	extractTimeout  = 5 * time.Second
	extractEventKey = "queued"
)

// memoryRun is the memory of a run of sess with g for p: the session's user's memory of its
// agent (the stored agent's id, InlineAgentID of an inline configuration's name, or the memory
// shared across agents with memory.shared); nil when memory is off or the session names no user.
func memoryRun(sess *domain.Session, g *domain.AgentConfig, execID string) *engine.MemoryRun {
	if !g.Memory.Enabled || sess.UserID == "" {
		return nil
	}
	return &engine.MemoryRun{Scope: memoryScope(sess, g), Config: g.Memory, SessionID: sess.ID, ExecutionID: execID}
}

// memoryScope is whose memory a session's agent reads and writes.
func memoryScope(sess *domain.Session, g *domain.AgentConfig) domain.MemoryScope {
	sc := domain.MemoryScope{Company: sess.Company, UserID: sess.UserID}
	switch {
	case g.Memory.Shared:
	case sess.AgentID != "":
		sc.AgentID = sess.AgentID
	default:
		sc.AgentID = domain.InlineAgentID(g.Name)
	}
	return sc
}

// extraction decides the memory extraction of a finished turn and records it as a
// memory_extract event in t's events, before the commit: the job to queue once the turn is
// committed (nil when none). Nothing is decided for a turn that paused or was cancelled, nor
// when memory or its extraction is off or the session names no user.
func (s *Service) extraction(t *turn, visible []domain.Message, paused, cancelled bool) *domain.MemoryExtractJob {
	mr := memoryRun(t.sess, t.g, t.exec.ID)
	if mr == nil || !mr.Config.Extract.Enabled || paused || cancelled {
		return nil
	}
	user := ""
	if t.user != nil {
		user = t.user.Content
	} else if t.sess.Pending != nil {
		user = t.sess.Pending.Input
	}
	var replies []string
	for _, m := range visible {
		if m.Role == domain.RoleAssistant && strings.TrimSpace(m.Content) != "" {
			replies = append(replies, strings.TrimSpace(m.Content))
		}
	}
	job := &domain.MemoryExtractJob{Scope: mr.Scope, SessionID: t.sess.ID, ExecutionID: t.exec.ID,
		Provider: mr.Config.Extract.Provider, Model: mr.Config.Extract.Model, Instructions: mr.Config.Extract.Instructions,
		User: strings.TrimSpace(user), Reply: strings.Join(replies, "\n\n")}
	if job.Provider == "" && job.Model == "" {
		if n := t.g.Nodes[t.g.Entry]; n != nil {
			job.Provider, job.Model = n.Provider, n.Model
		}
	}
	reason := ""
	switch {
	case !t.canWriteMemory:
		reason = extractNoWrite
	case s.memory == nil:
		reason = extractNoQueue
	case job.User == "":
		reason = extractNoText
	}
	data := map[string]any{extractEventKey: reason == ""}
	if reason != "" {
		data["reason"] = reason
		job = nil
	}
	t.extractAt, t.extractEvent = len(t.events), &engine.Event{Type: engine.EventMemoryExtract, Time: s.now().UTC(), Data: data}
	t.events = append(t.events, eventRecord(*t.extractEvent, t.exec.ID, t.req.CorrelationID, len(t.events)))
	return job
}

// enqueueExtraction queues job after the turn's commit, then tells the observer (a stream) of
// the memory_extract event. A send that fails never fails the turn: the event is corrected to
// queued false (one write of the execution record, when the commit stored one).
func (s *Service) enqueueExtraction(ctx context.Context, t *turn, stored *domain.Execution, job *domain.MemoryExtractJob) {
	ev := t.extractEvent
	if ev == nil {
		return
	}
	if job != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), extractTimeout)
		defer cancel()
		if err := s.memory.Enqueue(ctx, *job); err != nil {
			ev.Data = map[string]any{extractEventKey: false, "reason": extractNotSent}
			if stored != nil && t.extractAt < len(stored.Events) && stored.Events[t.extractAt]["type"] == engine.EventMemoryExtract {
				// (capped events keep their place; one whose data was dropped stays without)
				if _, ok := stored.Events[t.extractAt]["data"]; ok {
					stored.Events[t.extractAt]["data"] = ev.Data
				}
				_ = s.store.PutExecution(ctx, stored)
			}
		}
	}
	if t.onEvent != nil {
		t.onEvent(*ev)
	}
}
