package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// MaxAsyncBodyBytes bounds a queued request, which waits in a DynamoDB item (400 KB at most).
const MaxAsyncBodyBytes = 300_000

// Enqueue records an asynchronous execution and hands it to the dispatcher; the caller polls it
// with GetExecution. The request is validated now, so a bad request fails at once with 400; its
// content and inputs wait in the execution's record until the worker runs it.
func (s *Service) Enqueue(ctx context.Context, p domain.Principal, sessionID string, req ExecuteRequest) (*domain.Execution, error) {
	if req.Answer != nil {
		return nil, field(answerField(req.Answer), "answers to pending tool calls are sent without async (plain or ?stream=true): the run continues at once")
	}
	if s.queue == nil {
		return nil, domain.Errorf(domain.KindInvalid, "Asynchronous execution is not available in this deployment")
	}
	if _, err := s.Get(ctx, p, sessionID); err != nil {
		return nil, err
	}
	if _, _, err := s.parseContent(ctx, req.Content); err != nil {
		return nil, err
	}
	if req.CorrelationID != nil && len(*req.CorrelationID) > 256 {
		return nil, field("correlation_id", "must be at most 256 characters")
	}
	stored := map[string]any{"content": req.Content}
	if req.Inputs != nil {
		stored["inputs"] = req.Inputs
	}
	if jsonSize(stored) > MaxAsyncBodyBytes {
		return nil, domain.Errorf(domain.KindTooLarge, "Asynchronous execute bodies are limited to %d bytes; pass images and files by URL", MaxAsyncBodyBytes)
	}
	e := &domain.Execution{
		ID: newExecutionID(), SessionID: sessionID, CorrelationID: req.CorrelationID, Status: domain.ExecQueued,
		Events: []map[string]any{}, CreatedAt: s.now().UTC(), Request: stored, Scopes: p.Grants(),
	}
	if err := s.store.PutExecution(ctx, e); err != nil {
		return nil, fmt.Errorf("queue execution: %w", err)
	}
	if err := s.queue.Send(ctx, encodeJob(sessionID, e.ID), sessionID); err != nil {
		return nil, fmt.Errorf("dispatch execution %s: %w", e.ID, err)
	}
	return e, nil
}

// jsonSize is the size of v as the store encodes it: JSON without HTML escaping.
func jsonSize(v any) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return 0 // not reached: a body decoded from JSON always encodes
	}
	return b.Len() - 1 // the encoder's newline
}

// RunQueued runs a queued execution (called by the dispatcher's worker). Its outcome is written
// to the execution record: completed with the result, or failed with a client-safe error.
func (s *Service) RunQueued(ctx context.Context, sessionID, execID string) error {
	e, err := s.store.GetExecution(ctx, sessionID, execID)
	if err != nil {
		return fmt.Errorf("load execution %s: %w", execID, err)
	}
	// A queue delivers again only when an earlier attempt did not finish (the worker died or
	// the session was busy), so a running execution is run again; a finished one is left alone.
	if e.Status != domain.ExecQueued && e.Status != domain.ExecRunning {
		return nil
	}
	sess, err := s.store.GetSession(ctx, sessionID)
	if err != nil {
		return s.fail(ctx, e, err)
	}
	e.Status = domain.ExecRunning
	if err := s.store.PutExecution(ctx, e); err != nil {
		return err
	}
	req := ExecuteRequest{Content: e.Request["content"], CorrelationID: e.CorrelationID}
	if in, ok := e.Request["inputs"].(map[string]any); ok {
		req.Inputs = in
	}
	p := domain.Principal{Owner: sess.Owner, Company: sess.Company, Scopes: e.Scopes}
	if len(p.Scopes) == 0 {
		// Queued before executions recorded their caller's grants: run with what executing
		// needs and nothing more.
		p.Scopes = []string{domain.ScopeSessionsWrite}
	}
	if _, err := s.execute(ctx, p, sessionID, execID, req, Observer{}); err != nil {
		if domain.KindOf(err) == domain.KindConflict && !errors.Is(err, errPending) {
			// The session is busy with another execution: leave this one queued and let the
			// queue deliver it again later.
			e.Status = domain.ExecQueued
			_ = s.store.PutExecution(context.WithoutCancel(ctx), e)
			return &domain.Error{Kind: domain.KindOverloaded, Message: "session busy; retry later", Err: err}
		}
		return s.fail(ctx, e, err)
	}
	return nil
}

// fail records a failed execution with its error as the error envelope would show it: the
// kind's error.type and a client-safe message (a generic one for internal errors).
func (s *Service) fail(ctx context.Context, e *domain.Execution, cause error) error {
	kind, msg := domain.KindInternal, domain.MsgInternal
	if de := (*domain.Error)(nil); asDomain(cause, &de) && de.Kind != domain.KindInternal {
		kind, msg = de.Kind, de.Message
	}
	now := s.now().UTC()
	e.Status, e.Error, e.ErrorType, e.CompletedAt, e.Request, e.Scopes = domain.ExecFailed, msg, kind.Type(), &now, nil, nil
	if err := s.store.PutExecution(context.WithoutCancel(ctx), e); err != nil {
		// The cause is told, not wrapped: whether the job is retried follows the failed write
		// (platform.SQSHandler reads the kind), never the cause's kind, which is recorded.
		return fmt.Errorf("record failed execution %s: %w (after %v)", e.ID, err, cause) //nolint:errorlint // see above

	}
	return cause
}

// GetExecution returns the caller's session and one of its executions, with its new messages once done.
func (s *Service) GetExecution(ctx context.Context, p domain.Principal, sessionID, execID string) (*domain.Session, *domain.Execution, []domain.Message, error) {
	sess, err := s.Get(ctx, p, sessionID)
	if err != nil {
		return nil, nil, nil, err
	}
	if !domain.IsID(execID) {
		return nil, nil, nil, domain.Errorf(domain.KindNotFound, "Execution %q not found", domain.Clip(execID, 64))
	}
	e, err := s.store.GetExecution(ctx, sessionID, execID)
	if err != nil {
		if domain.KindOf(err) == domain.KindNotFound {
			return nil, nil, nil, domain.Errorf(domain.KindNotFound, "Execution %s not found", execID)
		}
		return nil, nil, nil, err
	}
	var msgs []domain.Message
	if e.Status == domain.ExecCompleted && len(e.MessageIDs) > 0 {
		want := map[string]bool{}
		for _, id := range e.MessageIDs {
			want[id] = true
		}
		// Newest first: skip the messages of later executions, take this one's, stop after them.
		found := false
		recent, err := s.store.History(ctx, sessionID, func(m domain.Message) bool {
			if m.ExecutionID == e.ID {
				found = true
				return true
			}
			return !found && !m.CreatedAt.Before(e.CreatedAt)
		})
		if err != nil {
			return nil, nil, nil, err
		}
		for _, m := range recent {
			if want[m.ID] {
				msgs = append(msgs, m)
			}
		}
	}
	e.Request, e.Scopes = nil, nil
	return sess, e, msgs, nil
}
