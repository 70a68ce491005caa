package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// Watcher is the store's part in running each queued execution once and in the watchdog: a
// queued or running execution is on the watchdog's list, due at the time after which the
// watchdog looks at it; every write that ends it takes it off.
type Watcher interface {
	// SwapExecution writes e only while the stored execution's status is from ("": while
	// there is none), otherwise it is a KindConflict error; a queued or running e is listed,
	// due at due.
	SwapExecution(ctx context.Context, e *domain.Execution, from string, due time.Time) error
	// Postpone moves a listed execution's due time, only while it is listed with w.Status
	// (KindConflict otherwise).
	Postpone(ctx context.Context, w domain.Watched, due time.Time) error
	// WatchedExecution reads an execution with its due time (zero when not listed).
	WatchedExecution(ctx context.Context, sessionID, id string) (*domain.Execution, time.Time, error)
	// DueExecutions returns up to limit listed executions due before now.
	DueExecutions(ctx context.Context, now time.Time, limit int) ([]domain.Watched, error)
	// LeaseOf reads a session's lease (domain.ErrNotFound for no session).
	LeaseOf(ctx context.Context, sessionID string) (domain.Lease, error)
	// SessionLease reads a session with its lease, in one read.
	SessionLease(ctx context.Context, id string) (*domain.Session, domain.Lease, error)
}

// The watchdog's times.
const (
	// ClaimGrace is how long after a worker took a queued execution (running) the watchdog
	// first looks at it: by then the worker holds the session's lease (it takes it within
	// LeaseWait) or has given the execution back to the queue.
	ClaimGrace = time.Minute
	// QueuedLimit is how long an execution may stay queued before the watchdog ends it: well
	// past the execution queue's own limit (its redrive to the dead-letter queue, whose
	// processor fails the execution, comes within about half an hour: WorkerBackoff and
	// maxReceiveCount), so it acts only when both lost the job.
	QueuedLimit = 2 * time.Hour
	// WatchdogBatch bounds the executions one sweep settles; the rest wait for the next.
	WatchdogBatch = 100
)

// The reason a lost run is failed with. Its error.type is api_error (the worker's failure is the
// service's, as a 500 is); the message says what happened.
const (
	msgLostRun    = "The worker running this execution stopped without finishing it (it crashed, was stopped or ran out of time); nothing of the run was saved. Send the message again."
	msgLostAnswer = "The worker applying this answer stopped without finishing it (it crashed, was stopped or ran out of time); nothing of it was saved. The session still waits for the answer: answer again."
	msgLostQueued = "The execution waited in the queue for longer than its limit without running. Send the message again."
)

// SweepReport says what one sweep of the watchdog did.
type SweepReport struct {
	Due       int // executions found due
	Failed    int // of them ended as failed (their worker or job was lost)
	Postponed int // still running under a live lease: looked at again when it ends
}

// Sweep is one round of the watchdog (the watchdog function's whole work, once a minute): it
// reads the executions due on its list (one Query per shard) and settles each. A running one
// whose session's lease is live for it is postponed to the lease's end; one whose lease ended
// (its worker died: a Lambda timeout, a crash, a killed process) is ended as failed under the
// session's lease, which it then releases, and execution.failed is published. One queued past
// QueuedLimit is failed too. An execution found dead at one sweep is failed by it: the bound is
// the lease's end plus the sweep's period.
func (s *Service) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	due, err := s.store.DueExecutions(ctx, s.now(), WatchdogBatch)
	if err != nil {
		return rep, fmt.Errorf("watchdog: %w", err)
	}
	rep.Due = len(due)
	var errs []error
	for _, w := range due {
		failed, postponed, err := s.watch(ctx, w)
		if failed {
			rep.Failed++
		}
		if postponed {
			rep.Postponed++
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("watchdog: execution %s of session %s: %w", w.ExecutionID, w.SessionID, err))
		}
	}
	return rep, errors.Join(errs...)
}

// watch settles one due execution.
func (s *Service) watch(ctx context.Context, w domain.Watched) (failed, postponed bool, err error) {
	now := s.now()
	if w.Status == domain.ExecRunning {
		lease, err := s.store.LeaseOf(ctx, w.SessionID)
		if errors.Is(err, domain.ErrNotFound) {
			return false, false, nil // the session and its executions are being deleted
		}
		if err != nil {
			return false, false, err
		}
		if alive(lease, w.ExecutionID, now) {
			err := s.store.Postpone(ctx, w, lease.Until)
			if domain.KindOf(err) == domain.KindConflict {
				err = nil // it ended meanwhile
			}
			return false, err == nil, err
		}
	}
	failed, err = s.settleLost(ctx, w.SessionID, w.ExecutionID, w.Status)
	return failed, false, err
}

// alive reports whether a live lease may be held by the run of execID: it names that run, or
// its holder did not say which run it is.
func alive(l domain.Lease, execID string, now time.Time) bool {
	return l.Live(now) && (l.ExecutionID == execID || l.ExecutionID == "")
}

// settleLost fails an execution whose run or job was lost, if it is still as the caller found
// it (status from). A running one is failed under the session's lease: taking it shows that
// its worker's lease has ended, and a worker that still lived could not commit after it. The
// lease is released at once. It reports whether it failed the execution.
func (s *Service) settleLost(ctx context.Context, sessionID, execID, from string) (bool, error) {
	sess, lease, err := s.store.SessionLease(ctx, sessionID)
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if from == domain.ExecRunning {
		if lease.Live(s.now()) {
			// Held by another run: this one's worker lost the lease and cannot commit.
			if alive(lease, execID, s.now()) {
				return false, nil
			}
		} else {
			leaseID := uuid.NewString()
			p := domain.Principal{Owner: sess.Owner, Company: sess.Company}
			if _, err := s.acquire(ctx, p, sessionID, leaseID, false); err != nil {
				if domain.KindOf(err) == domain.KindConflict || errors.Is(err, domain.ErrNotFound) {
					return false, nil // a new run took the session: looked at again next time
				}
				return false, err
			}
			defer s.release(ctx, sessionID, leaseID)
		}
	}
	e, err := s.store.GetExecution(ctx, sessionID, execID)
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if e.Status != from {
		return false, nil
	}
	msg := msgLostRun
	switch {
	case from == domain.ExecQueued:
		msg = msgLostQueued
	case queuedAnswer(e) != nil:
		msg = msgLostAnswer
	}
	lost := errors.New("the execution's worker or job was lost")
	if err := s.failFrom(ctx, e, from, lost, msg); err != lost { //nolint:errorlint // identity: failFrom returns cause once recorded
		if domain.KindOf(err) == domain.KindConflict {
			return false, nil // settled meanwhile
		}
		return false, err
	}
	s.publish(ctx, sess.Company, e)
	return true, nil
}

// failFrom records e failed with cause, as fail does (msg, when not empty, is the client-safe
// message of an internal cause), but only while its stored status is from: an execution another
// writer settled meanwhile (a commit, a cancel, the watchdog) is left as it is, and the error is
// that KindConflict. It returns cause once recorded.
func (s *Service) failFrom(ctx context.Context, e *domain.Execution, from string, cause error, msg string) error {
	kind := domain.KindInternal
	if msg == "" {
		msg = domain.MsgInternal
	}
	if de := (*domain.Error)(nil); asDomain(cause, &de) && de.Kind != domain.KindInternal {
		kind, msg = de.Kind, de.Message
	}
	now := s.now().UTC()
	failed := *e
	failed.Status, failed.Error, failed.ErrorType, failed.CompletedAt = domain.ExecFailed, msg, kind.Type(), &now
	failed.Request, failed.Scopes = nil, nil
	if err := s.store.SwapExecution(context.WithoutCancel(ctx), &failed, from, time.Time{}); err != nil {
		return fmt.Errorf("record failed execution %s: %w (after %v)", e.ID, err, cause) //nolint:errorlint // the write's kind decides, as in fail
	}
	*e = failed
	return cause
}

// WithClock makes the service read the time from now (a test moves it past a lease's end, as
// the watchdog would find it minutes later); it returns s.
func (s *Service) WithClock(now func() time.Time) *Service {
	s.now = now
	return s
}
