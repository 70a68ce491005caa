package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
)

// MaxAsyncBodyBytes bounds a queued request, which waits in a DynamoDB item (400 KB at most).
const MaxAsyncBodyBytes = 300_000

// Enqueue records an asynchronous execution and hands it to the dispatcher; the caller polls it
// with GetExecution. The request is validated now, so a bad request fails at once with 400; its
// content and inputs wait in the execution's record until the worker runs it.
func (s *Service) Enqueue(ctx context.Context, p domain.Principal, sessionID string, req ExecuteRequest) (*domain.Execution, error) {
	if s.queue == nil {
		return nil, domain.Errorf(domain.KindInvalid, "Asynchronous execution is not available in this deployment")
	}
	if req.Answer != nil {
		return s.enqueueAnswer(ctx, p, sessionID, req.Answer)
	}
	sess, err := s.Get(ctx, p, sessionID)
	if err != nil {
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
		Events: []map[string]any{}, CreatedAt: s.now().UTC(), Request: stored, Scopes: p.Grants(), KeyID: p.KeyID,
	}
	stamp(e, sess) // so that a failure recorded before any run lists it too
	// Listed for the watchdog, which ends it if it is still queued after QueuedLimit.
	if err := s.store.SwapExecution(ctx, e, "", e.CreatedAt.Add(QueuedLimit)); err != nil {
		return nil, fmt.Errorf("queue execution: %w", err)
	}
	if err := s.queue.Send(ctx, encodeJob(ctx, sessionID, e.ID, p.Budget), sessionID); err != nil {
		// No job will run it: the record must not stay queued.
		_ = s.fail(ctx, e, err)
		return nil, fmt.Errorf("dispatch execution %s: %w", e.ID, err)
	}
	return e, nil
}

// enqueueAnswer queues the continuation of the session's paused execution with the answer: the
// execution itself becomes queued (the client polls the id it already has) and the worker
// resumes it. It holds the session's lease while it checks and writes, so a synchronous answer
// never runs at the same time; one that comes later finds the execution queued or done.
func (s *Service) enqueueAnswer(ctx context.Context, p domain.Principal, sessionID string, a *Answer) (*domain.Execution, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	// The worker resumes with the grants recorded below; the answer's scope is checked now.
	if err := a.permit(p); err != nil {
		return nil, err
	}
	if !domain.IsID(sessionID) {
		return nil, domain.Errorf(domain.KindNotFound, "Session %q not found", domain.Clip(sessionID, 64))
	}
	leaseID := uuid.NewString()
	sess, err := s.acquire(ctx, p, sessionID, leaseID, false)
	if err != nil {
		return nil, err
	}
	held := true
	defer func() {
		if held {
			s.release(ctx, sessionID, leaseID)
		}
	}()
	if sess.Pending == nil {
		return nil, nothingPending(a)
	}
	if err := a.match(sess.Pending); err != nil {
		return nil, err
	}
	e, err := s.store.GetExecution(ctx, sessionID, sess.Pending.ExecutionID)
	if err != nil {
		return nil, fmt.Errorf("paused execution %s: %w", sess.Pending.ExecutionID, err)
	}
	// A failed one whose session still waits is an answer that did not apply (a queued answer
	// the worker failed or the queue gave up on): it may be answered again, as it may be
	// synchronously. Queued or running, another answer is on its way.
	if e.Status != domain.ExecRequiresAction && e.Status != domain.ExecFailed {
		return nil, &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s is already being answered", e.ID)}
	}
	was := *e
	var stored map[string]any
	b, _ := json.Marshal(a) // strings and booleans: cannot fail
	_ = json.Unmarshal(b, &stored)
	e.Status, e.Request, e.Scopes, e.Pending = domain.ExecQueued, map[string]any{"answer": stored}, p.Grants(), nil
	e.KeyID = p.KeyID
	e.Error, e.ErrorType, e.CompletedAt = "", "", nil
	if err := s.store.SwapExecution(ctx, e, was.Status, s.now().Add(QueuedLimit)); err != nil {
		return nil, fmt.Errorf("queue the answer of %s: %w", e.ID, err)
	}
	// The lease goes before the job: a worker that took the job at once would otherwise find
	// the session held by this very request and give the job back. Once the execution is
	// queued, every other answer is refused (409) without the lease.
	held = false
	s.release(ctx, sessionID, leaseID)
	if err := s.queue.Send(ctx, encodeJob(ctx, sessionID, e.ID, p.Budget), sessionID); err != nil {
		// No job will run it: put the execution back as it was, so that it can be answered
		// again rather than stay queued (no one else writes a queued execution).
		_ = s.store.PutExecution(context.WithoutCancel(ctx), &was)
		return nil, fmt.Errorf("dispatch execution %s: %w", e.ID, err)
	}
	return e, nil
}

// queuedAnswer is the answer a queued continuation carries, or nil.
func queuedAnswer(e *domain.Execution) *Answer {
	raw, ok := e.Request["answer"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var a Answer
	if json.Unmarshal(b, &a) != nil {
		return nil
	}
	return &a
}

// queuedContent is the content a queued execution carries, as its request keeps it (JSON, checked
// when it was queued); content that does not read is refused when the execution runs.
func queuedContent(e *domain.Execution) Content {
	var c Content
	b, err := json.Marshal(e.Request["content"])
	if err != nil || json.Unmarshal(b, &c) != nil {
		return Content{form: contentOther}
	}
	return c
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

// RunQueued runs a queued execution (called by the dispatcher's worker) at most once, however
// often the queue delivers its job. The worker takes the execution with one conditional write
// (queued → running, listed for the watchdog ClaimGrace later): of two deliveries at once, one
// takes it and the other has nothing to do. Its outcome is written to the execution record:
// completed with the result, or failed with a client-safe error. A delivery that finds it
// running leaves it to its worker while that worker's lease lives, and fails it as lost once the
// lease has ended (its worker died; it is not run again: what the run did before is unknown); a
// delivery that finds it finished (or paused, or cancelled) does nothing.
//
// Before it takes the execution it holds the run to the monthly budgets of the key that queued
// it and of its company, as the API's edge held the execute (Budgets): one queued before a
// budget ran out and spent now is failed with the edge's rate_limit_error and no model call.
func (s *Service) RunQueued(ctx context.Context, sessionID, execID string) error {
	return s.runQueued(ctx, job{SessionID: sessionID, ExecutionID: execID})
}

// Budgets holds runs to the monthly budgets of their key and company: auth.Service.CheckBudget,
// the check the API's edge makes before an execute. It reads nothing when neither has a budget
// (the company's limits come through its cache), else the month's counters in one call.
type Budgets interface {
	CheckBudget(ctx context.Context, p domain.Principal) (reset time.Time, err error)
}

// runQueued is RunQueued of a job, held to the key's budget the job carries.
func (s *Service) runQueued(ctx context.Context, j job) error {
	sessionID, execID := j.SessionID, j.ExecutionID
	e, due, err := s.store.WatchedExecution(ctx, sessionID, execID)
	if err != nil {
		return fmt.Errorf("load execution %s: %w", execID, err)
	}
	switch e.Status {
	case domain.ExecQueued:
	case domain.ExecRunning:
		return s.redelivered(ctx, e, due)
	default:
		return nil
	}
	sess, lease, err := s.store.SessionLease(ctx, sessionID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil // deleted with its executions
	}
	if err != nil {
		return fmt.Errorf("run execution %s: %w", execID, err)
	}
	if lease.Live(s.now()) {
		if lease.ExecutionID == execID {
			// Another delivery of this job claimed it and runs it now (it read the execution
			// queued too): this one has nothing to do. Were that run lost, the watchdog fails it.
			return nil
		}
		// The session is busy: the execution stays queued (a poll shows it so) and the queue
		// delivers it again soon, without a claim nor a wait for the lease.
		return &domain.Error{Kind: domain.KindOverloaded, Message: "session busy; retry later"}
	}
	p := domain.Principal{Owner: sess.Owner, Company: sess.Company, Scopes: e.Scopes, KeyID: e.KeyID, Budget: j.budget()}
	if spent, err := s.overBudget(ctx, p); err != nil {
		return fmt.Errorf("run execution %s: %w", execID, err) // the job comes again
	} else if spent != nil {
		return s.failQueued(ctx, sess.Company, e, spent)
	}
	e.Status = domain.ExecRunning
	if err := s.store.SwapExecution(ctx, e, domain.ExecQueued, s.now().Add(ClaimGrace)); err != nil {
		if domain.KindOf(err) == domain.KindConflict {
			return nil // another delivery took it, or it was cancelled
		}
		return err
	}
	if len(p.Scopes) == 0 {
		// Queued before executions recorded their caller's grants: run with what executing
		// needs and nothing more.
		p.Scopes = []string{domain.ScopeSessionsWrite}
	}
	req := ExecuteRequest{CorrelationID: e.CorrelationID}
	if a := queuedAnswer(e); a != nil {
		req.Answer = a
	} else {
		req.Content = queuedContent(e)
		if in, ok := e.Request["inputs"].(map[string]any); ok {
			req.Inputs = in
		}
	}
	// Whether the engine began: a run that never began may be given back to the queue.
	var began atomic.Bool
	var span trace.SpanContext // the run's, which its failure is published under
	obs := Observer{OnEvent: func(engine.Event) { began.Store(true) }, OnEnd: func(out *engine.Result, _ error) {
		if out != nil {
			span = out.Span
		}
	}}
	_, err = s.execute(ctx, p, sessionID, execID, req, obs)
	switch {
	case err == nil:
		return nil
	case !began.Load() && domain.KindOf(err) == domain.KindConflict && !errors.Is(err, errPending):
		// The session is busy with another execution: give this one back to the queue, which
		// delivers it again later (unless the watchdog or a cancel settled it meanwhile).
		e.Status = domain.ExecQueued
		if err := s.store.SwapExecution(context.WithoutCancel(ctx), e, domain.ExecRunning, s.now().Add(QueuedLimit)); err != nil {
			return nil //nolint:nilerr // settled by another writer: nothing left to run
		}
		return &domain.Error{Kind: domain.KindOverloaded, Message: "session busy; retry later", Err: err}
	case req.Answer != nil && errors.Is(err, errNothingPending):
		// A synchronous answer applied first; its commit wrote the execution.
		err = domain.Errorf(domain.KindConflict, "The answer was not applied: the session's pending tool calls were answered already")
	}
	werr := s.failFrom(ctx, e, domain.ExecRunning, err, "")
	if werr == err { //nolint:errorlint // identity: failFrom returns cause once recorded
		s.publish(runContext(ctx, &engine.Result{Span: span}), sess.Company, e)
	} else if domain.KindOf(werr) == domain.KindConflict {
		return nil // settled by another writer (a commit, the watchdog, a cancel)
	}
	return werr
}

// overBudget is the refusal of a run of p whose key's or company's monthly budget is spent (nil
// when neither is, or without Budgets); err is a failure to tell.
func (s *Service) overBudget(ctx context.Context, p domain.Principal) (spent, err error) {
	if s.budgets == nil {
		return nil, nil
	}
	if _, err := s.budgets.CheckBudget(ctx, p); err != nil {
		if domain.KindOf(err) == domain.KindRateLimited {
			return err, nil
		}
		return nil, err
	}
	return nil, nil
}

// failQueued fails a still queued execution with cause (a spent budget) and publishes
// execution.failed; one a cancel or the watchdog settled meanwhile is left as it is.
func (s *Service) failQueued(ctx context.Context, company string, e *domain.Execution, cause error) error {
	werr := s.failFrom(ctx, e, domain.ExecQueued, cause, "")
	switch {
	case werr == cause: //nolint:errorlint // identity: failFrom returns cause once recorded
		s.publish(ctx, company, e)
		return nil // the outcome is the execution's, recorded for the client: the job is done
	case domain.KindOf(werr) == domain.KindConflict:
		return nil // settled by another writer
	}
	return werr
}

// redelivered handles a job whose execution is running: another delivery's worker runs it
// (it is not yet due on the watchdog's list, or its session's lease lives for it), or that
// worker died, and the execution is failed as lost now rather than at the watchdog's next sweep.
// One running off the list (written so before the list was kept) is judged by its lease alone.
func (s *Service) redelivered(ctx context.Context, e *domain.Execution, due time.Time) error {
	now := s.now()
	if now.Before(due) {
		return nil // its worker took it less than ClaimGrace ago, or its lease lived at the last look
	}
	lease, err := s.store.LeaseOf(ctx, e.SessionID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lease of execution %s: %w", e.ID, err)
	}
	if alive(lease, e.ID, now) {
		return nil
	}
	_, err = s.settleLost(ctx, e.SessionID, e.ID, domain.ExecRunning)
	return err
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
	if (e.Status == domain.ExecCompleted || e.Status == domain.ExecCancelled) && len(e.MessageIDs) > 0 {
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
