package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
)

// StopCancelled is the stop_reason of an execution a cancel request stopped.
const StopCancelled = "cancelled"

// How long Cancel waits for a running execution's process to commit it cancelled, and how often
// it looks. The run sees the request within its supervisor's CancelPoll (1 s) and commits at
// once; a run that has not within cancelWait (its process stuck in a call that ignores its
// context) is answered as still stopping.
const (
	cancelWait = 10 * time.Second
	cancelPoll = 200 * time.Millisecond
)

// Cancel stops an execution of the caller's session wherever it is:
//
//   - queued: recorded cancelled at once (a write conditional on its still being queued); the
//     worker that takes its job later finds it finished and leaves it.
//   - paused (requires_action, or its answer queued): recorded cancelled at once under the
//     session's lease, the session's pending action cleared, so that the next message runs.
//   - running (a synchronous execute, a stream or the worker — other processes): a cancel mark
//     is written for the run's lease, conditional on the live lease being that execution's;
//     the run's supervisor sees it within a second, cancels the run's context (the model or
//     tool call in flight ends) and commits the turn cancelled with what it produced. Cancel
//     waits for that commit (up to cancelWait) and returns the cancelled execution.
//
// A run whose process died (no live lease runs it; cancelUnleased) is recorded cancelled under
// the lease, as a paused one is. execution.cancelled is published in every case, once. A finished execution
// (completed, failed, cancelled) is a KindConflict error and nothing changes; stopped is false
// when the run had not committed within cancelWait (the mark stays until it does).
func (s *Service) Cancel(ctx context.Context, p domain.Principal, sessionID, execID string) (e *domain.Execution, stopped bool, err error) {
	sess, err := s.Get(ctx, p, sessionID)
	if err != nil {
		return nil, false, err
	}
	if !domain.IsID(execID) {
		return nil, false, domain.Errorf(domain.KindNotFound, "Execution %q not found", domain.Clip(execID, 64))
	}
	// Each round reads the execution and acts on what it finds; a write that finds it changed
	// meanwhile (the worker took it, the run paused or ended) starts another round.
	for range 5 {
		e, err := s.store.GetExecution(ctx, sessionID, execID)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			e = nil // a synchronous run's record is written when it ends
		case err != nil:
			return nil, false, fmt.Errorf("cancel execution %s: %w", execID, err)
		}
		switch {
		case e != nil && paused(sess, e):
			if c, stopped, again, err := s.cancelHeld(ctx, p, sess, e); !again {
				return c, stopped, err
			}
		case e != nil && finished(e.Status):
			return nil, false, finishedConflict(e)
		case e != nil && e.Status == domain.ExecQueued:
			c := cancelledCopy(e, s.now())
			err := s.store.CancelQueued(ctx, c)
			if err == nil {
				s.publish(ctx, sess.Company, c)
				return c, true, nil
			}
			if domain.KindOf(err) != domain.KindConflict {
				return nil, false, fmt.Errorf("cancel execution %s: %w", execID, err)
			}
		default: // running, or a synchronous run with no record yet
			err := s.store.RequestCancel(ctx, sessionID, execID, s.now())
			switch {
			case err == nil:
				c, stopped, err := s.awaitCancel(ctx, sessionID, execID, e)
				if !errors.Is(err, errPausedMeanwhile) {
					return c, stopped, err
				}
				// It paused first: the next round cancels the paused execution.
			case !errors.Is(err, domain.ErrNotFound):
				return nil, false, fmt.Errorf("cancel execution %s: %w", execID, err)
			case e == nil:
				// No record and no run: unknown, unless the run committed just now.
				if _, err := s.store.GetExecution(ctx, sessionID, execID); errors.Is(err, domain.ErrNotFound) {
					return nil, false, domain.Errorf(domain.KindNotFound, "Execution %s not found", execID)
				}
				continue
			default:
				if c, stopped, again, err := s.cancelUnleased(ctx, p, sess, execID); !again {
					return c, stopped, err
				}
			}
		}
		if sess, err = s.Get(ctx, p, sessionID); err != nil {
			return nil, false, err
		}
	}
	return nil, false, &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s kept changing while it was being cancelled; try again", execID)}
}

// cancelUnleased cancels an execution recorded running that no live lease runs: its worker
// marks it running before it takes the lease (which it does within LeaseWait, or gives the
// execution back to the queue), or it died. It looks again every 300 ms; once the worker holds
// the lease the run is asked to stop, and one still without a lease after LeaseWait and a
// second is dead and settled cancelled under the lease. again is true when the record changed
// otherwise (the caller looks again).
func (s *Service) cancelUnleased(ctx context.Context, p domain.Principal, sess *domain.Session, execID string) (c *domain.Execution, stopped, again bool, err error) {
	dead := time.Now().Add(s.limits.LeaseWait + time.Second)
	for {
		if !backoff.Wait(ctx, 300*time.Millisecond) {
			return nil, false, false, ctx.Err()
		}
		e, err := s.store.GetExecution(ctx, sess.ID, execID)
		if err != nil || e.Status != domain.ExecRunning {
			return nil, false, true, nil
		}
		switch err := s.store.RequestCancel(ctx, sess.ID, execID, s.now()); {
		case err == nil:
			c, stopped, err := s.awaitCancel(ctx, sess.ID, execID, e)
			if errors.Is(err, errPausedMeanwhile) {
				return nil, false, true, nil
			}
			return c, stopped, false, err
		case !errors.Is(err, domain.ErrNotFound):
			return nil, false, false, fmt.Errorf("cancel execution %s: %w", execID, err)
		}
		if time.Now().After(dead) {
			return s.cancelHeld(ctx, p, sess, e)
		}
	}
}

// paused reports whether e waits for its session's answer: requires_action, its answer queued,
// or an answer that failed while the session still waits.
func paused(sess *domain.Session, e *domain.Execution) bool {
	waits := sess.Pending != nil && sess.Pending.ExecutionID == e.ID
	switch e.Status {
	case domain.ExecRequiresAction:
		return true
	case domain.ExecQueued:
		return queuedAnswer(e) != nil
	case domain.ExecFailed:
		return waits
	}
	return false
}

// finished reports whether an execution of this status has ended for good.
func finished(status string) bool {
	return status == domain.ExecCompleted || status == domain.ExecFailed || status == domain.ExecCancelled
}

func finishedConflict(e *domain.Execution) error {
	return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s has already finished (%s); there is nothing to cancel", e.ID, e.Status)}
}

// cancelledCopy is e as a cancel records it: ended now, waiting for nothing.
func cancelledCopy(e *domain.Execution, now time.Time) *domain.Execution {
	c := *e
	at := now.UTC()
	c.Status, c.StopReason, c.CompletedAt = domain.ExecCancelled, StopCancelled, &at
	c.Error, c.ErrorType, c.Request, c.Scopes, c.Pending, c.Checkpoint = "", "", nil, nil, nil, nil
	return &c
}

// cancelHeld records e cancelled under the session's lease (taken without waiting): a paused
// execution, whose session then waits for nothing, or a running one whose process died. When
// the session is held by a run of e (an answer being applied, a run alive after all), that run
// is asked to stop instead. again is true when the session is busy otherwise or e changed
// meanwhile: the caller looks again.
func (s *Service) cancelHeld(ctx context.Context, p domain.Principal, sess *domain.Session, e *domain.Execution) (c *domain.Execution, stopped, again bool, err error) {
	leaseID := uuid.NewString()
	held, err := s.acquire(ctx, p, sess.ID, leaseID, false)
	if domain.KindOf(err) == domain.KindConflict {
		if err := s.store.RequestCancel(ctx, sess.ID, e.ID, s.now()); err != nil {
			return nil, false, true, nil
		}
		c, stopped, err := s.awaitCancel(ctx, sess.ID, e.ID, e)
		if errors.Is(err, errPausedMeanwhile) {
			return nil, false, true, nil
		}
		return c, stopped, false, err
	}
	if err != nil {
		return nil, false, false, err
	}
	committed := false
	defer func() {
		if !committed {
			s.release(ctx, sess.ID, leaseID)
		}
	}()
	cur, err := s.store.GetExecution(ctx, sess.ID, e.ID) // read again under the lease
	if err != nil {
		return nil, false, false, fmt.Errorf("cancel execution %s: %w", e.ID, err)
	}
	if !paused(held, cur) && cur.Status != domain.ExecRunning {
		return nil, false, true, nil
	}
	c = cancelledCopy(cur, s.now())
	next := *held
	next.UpdatedAt = *c.CompletedAt
	if next.Pending != nil && next.Pending.ExecutionID == e.ID {
		next.Pending = nil
	}
	if err := s.store.Commit(ctx, domain.Commit{Session: &next, LeaseID: leaseID, Execution: c}); err != nil {
		return nil, false, false, fmt.Errorf("cancel execution %s: %w", e.ID, err)
	}
	committed = true
	s.publish(ctx, sess.Company, c)
	return c, true, false, nil
}

// errPausedMeanwhile: the run asked to stop paused first; the paused execution is cancelled next.
var errPausedMeanwhile = errors.New("the execution paused before it saw the cancel")

// awaitCancel waits for a run that was asked to stop to commit: the cancelled execution, a
// conflict when it ended otherwise first, errPausedMeanwhile when it paused; stopped is false
// when it has not ended within cancelWait (or ctx's deadline, less a margin for the answer).
// before is the record as it was when the run was asked (nil when there was none): a record
// still as it was has not been committed by the run yet (an answer being applied leaves its
// paused record as it is until it commits).
func (s *Service) awaitCancel(ctx context.Context, sessionID, execID string, before *domain.Execution) (*domain.Execution, bool, error) {
	end := time.Now().Add(cancelWait)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-2*time.Second).Before(end) {
		end = dl.Add(-2 * time.Second)
	}
	for {
		e, err := s.store.GetExecution(ctx, sessionID, execID)
		if err == nil && unchanged(before, e) {
			e, err = nil, domain.ErrNotFound // not committed yet: as a synchronous run's missing record
		}
		switch {
		case err == nil && e.Status == domain.ExecCancelled:
			e.Request, e.Scopes = nil, nil
			return e, true, nil
		case err == nil && e.Status == domain.ExecRequiresAction:
			return nil, false, errPausedMeanwhile
		case err == nil && finished(e.Status):
			// It ended before it saw the request; the mark went with its commit.
			return nil, false, &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf(
				"Execution %s ended (%s) before it could be cancelled", execID, e.Status)}
		case err != nil && !errors.Is(err, domain.ErrNotFound):
			return nil, false, fmt.Errorf("cancel execution %s: %w", execID, err)
		}
		if !time.Now().Add(cancelPoll).Before(end) {
			switch {
			case e != nil:
			case before != nil:
				c := *before
				e = &c
			default: // a synchronous run, stored when it ends; its UUIDv7 id tells when it began
				e = &domain.Execution{ID: execID, SessionID: sessionID, Status: domain.ExecRunning, Events: []map[string]any{}}
				if id, err := uuid.Parse(execID); err == nil && id.Version() == 7 {
					sec, nsec := id.Time().UnixTime()
					e.CreatedAt = time.Unix(sec, nsec).UTC()
				}
			}
			e.Request, e.Scopes = nil, nil
			return e, false, nil
		}
		if !backoff.Wait(ctx, cancelPoll) {
			return nil, false, ctx.Err()
		}
	}
}

// unchanged reports whether the record e is still the one a run was asked to stop from: the
// same status, completion and pending action.
func unchanged(before, e *domain.Execution) bool {
	if before == nil || e.Status != before.Status || (e.CompletedAt == nil) != (before.CompletedAt == nil) ||
		(e.CompletedAt != nil && !e.CompletedAt.Equal(*before.CompletedAt)) || (e.Pending == nil) != (before.Pending == nil) {
		return false
	}
	return e.Pending == nil || e.Pending.CreatedAt.Equal(before.Pending.CreatedAt)
}
