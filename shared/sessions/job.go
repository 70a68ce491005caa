package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/propagation"

	"github.com/agentorch/agentorch/shared/domain"
)

// maxJobBytes bounds a job body: two UUIDs and their keys need about 100 bytes, a trace
// context at most about 400 more (maxJobTraceState), a key's budget at most about 80.
const maxJobBytes = 1024

// maxJobTraceState bounds the tracestate a job carries; a longer one is left out (the
// traceparent alone still joins the trace).
const maxJobTraceState = 256

// job is the body of an execution-queue message. The sessions feature owns its format: the
// queue adapter only carries bodies.
type job struct {
	SessionID   string `json:"session_id"`
	ExecutionID string `json:"execution_id"`
	// Trace is the W3C trace context (traceparent, tracestate) the execute was queued under,
	// so that the worker's run joins the caller's trace; absent when there was none.
	Trace map[string]string `json:"trace_context,omitempty"`
	// KeyBudget is the monthly budget of the key that queued it, for the worker's budget check
	// (the key's record is not read again); absent when the key has none, and in jobs queued
	// before it was carried (those are held to their company's budget only).
	KeyBudget *jobBudget `json:"key_budget,omitempty"`
}

// jobBudget is a domain.Budget as a job carries it.
type jobBudget struct {
	MonthlyTokens  *int64   `json:"monthly_tokens,omitempty"`
	MonthlyCostUSD *float64 `json:"monthly_cost_usd,omitempty"`
}

// budget is the key's budget the job carries (none when it carries none).
func (j job) budget() domain.Budget {
	if j.KeyBudget == nil {
		return domain.Budget{}
	}
	return domain.Budget{MonthlyTokens: j.KeyBudget.MonthlyTokens, MonthlyCostUSD: j.KeyBudget.MonthlyCostUSD}
}

// encodeJob is the body of the message that runs a queued execution, with ctx's trace context
// and the budget of the key that queued it.
func encodeJob(ctx context.Context, sessionID, executionID string, budget domain.Budget) string {
	j := job{SessionID: sessionID, ExecutionID: executionID}
	if budget.Set() {
		j.KeyBudget = &jobBudget{MonthlyTokens: budget.MonthlyTokens, MonthlyCostUSD: budget.MonthlyCostUSD}
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	if len(c["tracestate"]) > maxJobTraceState {
		delete(c, "tracestate")
	}
	if len(c) > 0 {
		j.Trace = c
	}
	b, _ := json.Marshal(j) // strings: cannot fail
	return string(b)
}

// ParseJob reads the session and execution ids from a message body that Enqueue sent. Both must
// be UUIDs in canonical form; anything else is an invalid_request_error naming the field. Unknown
// fields are ignored, so a newer sender may add some while older workers drain the queue.
func ParseJob(body string) (sessionID, executionID string, err error) {
	j, err := parseJob(body)
	return j.SessionID, j.ExecutionID, err
}

// parseJob is ParseJob with the job's trace context.
func parseJob(body string) (job, error) {
	if len(body) > maxJobBytes {
		return job{}, domain.Invalid([]domain.FieldError{{Message: "job body is larger than 1 KiB"}})
	}
	var j job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		return job{}, &domain.Error{Kind: domain.KindInvalid, Message: "job body is not a JSON object of strings", Err: err}
	}
	var bad []domain.FieldError
	for _, f := range []struct{ name, v string }{{"session_id", j.SessionID}, {"execution_id", j.ExecutionID}} {
		switch {
		case f.v == "":
			bad = append(bad, domain.FieldError{Field: f.name, Message: "is required"})
		case !domain.IsID(f.v):
			bad = append(bad, domain.FieldError{Field: f.name, Message: "must be a UUID"})
		}
	}
	if bad != nil {
		return job{}, domain.Invalid(bad)
	}
	return j, nil
}

// ProcessJob runs the queued execution an execution-queue message names: the worker function's
// whole work. What the error's kind says decides the message's fate (domain.Kind.Retryable):
// internal failures, overload (the session is busy) and rate limits are delivered again; an
// outcome RunQueued recorded on the execution for the client (invalid, not found, permission …)
// is not. A body that is not a job is an internal error, so that it ends in the dead-letter
// queue rather than vanish.
func (s *Service) ProcessJob(ctx context.Context, body string) error {
	j, err := parseJob(body)
	if err != nil {
		return &domain.Error{Kind: domain.KindInternal, Message: "malformed execution job", Err: err}
	}
	if len(j.Trace) > 0 { // the run joins the trace of the execute that queued it
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(j.Trace))
	}
	return s.runQueued(ctx, j)
}

// Client-facing errors of an execution whose job the queue gave up on.
const (
	msgDeadMessage = "The execution did not run: the execution queue gave up on it after repeated attempts (its session stayed busy, or the worker stopped). Send the message again."
	msgDeadAnswer  = "The answer was not applied: the execution queue gave up on it after repeated attempts (its session stayed busy, or the worker stopped). The session still waits for it: answer again."
)

// HandleDeadLetter settles a job the execution queue gave up on (the dead-letter queue's
// processor): an execution still queued or running is recorded failed, with an
// overloaded_error saying so, so that no poll waits for it forever. A queued answer that fails
// leaves its session waiting for an answer, as a failed synchronous one does: the paused
// execution can be answered again. The write is made under the session's lease, so it never
// overwrites a run that finished meanwhile; a session busy now is an overloaded error (the
// message is delivered again). A job whose execution or session is gone, or is already
// finished, has nothing to settle; a body that is not a job is invalid (dropped: it names no
// execution).
func (s *Service) HandleDeadLetter(ctx context.Context, body string) error {
	sessionID, execID, err := ParseJob(body)
	if err != nil {
		return err
	}
	e, err := s.store.GetExecution(ctx, sessionID, execID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("dead letter of execution %s: %w", execID, err)
	case !unsettled(e):
		return nil
	}
	sess, err := s.store.GetSession(ctx, sessionID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dead letter of execution %s: %w", execID, err)
	}
	leaseID := uuid.NewString()
	if _, err := s.acquire(ctx, domain.Principal{Owner: sess.Owner, Company: sess.Company}, sessionID, leaseID, true); err != nil {
		if domain.KindOf(err) == domain.KindConflict {
			return &domain.Error{Kind: domain.KindOverloaded, Message: "session busy; retry later", Err: err}
		}
		if errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("dead letter of execution %s: %w", execID, err)
	}
	defer s.release(ctx, sessionID, leaseID)
	// Read again under the lease: a run may have finished it since.
	if e, err = s.store.GetExecution(ctx, sessionID, execID); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("dead letter of execution %s: %w", execID, err)
	}
	if !unsettled(e) {
		return nil
	}
	msg := msgDeadMessage
	if queuedAnswer(e) != nil {
		msg = msgDeadAnswer
	}
	cause := &domain.Error{Kind: domain.KindOverloaded, Message: msg}
	// fail returns cause itself once recorded (errors.Is would match any overloaded error).
	if err := s.fail(ctx, e, cause); err != error(cause) { //nolint:errorlint // identity, see above
		return err // the write failed: internal, so the message is delivered again
	}
	s.publish(ctx, sess.Company, e) // only once the failure is written
	return nil
}

// unsettled reports whether a queued execution is still waiting for its job.
func unsettled(e *domain.Execution) bool {
	return e.Status == domain.ExecQueued || e.Status == domain.ExecRunning
}
