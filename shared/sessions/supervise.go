package sessions

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// RunLeases are the store's writes and reads of a run's lease beyond taking and releasing it
// (dynamo/runs.go keeps them on the session item).
type RunLeases interface {
	// ExtendLease moves the lease's end to until while leaseID holds it (a KindConflict error
	// once it does not), recording execID as its execution when not empty.
	ExtendLease(ctx context.Context, id, leaseID, execID string, until time.Time) error
	// RequestCancel marks the session's run of execID to stop; domain.ErrNotFound when no
	// live lease runs execID.
	RequestCancel(ctx context.Context, id, execID string, now time.Time) error
	// CancelRequested reports whether a cancel of the run under leaseID was asked for (one
	// cheap, eventually consistent read).
	CancelRequested(ctx context.Context, id, leaseID string) (bool, error)
	// CancelQueued writes e (cancelled) only over a record still queued; a KindConflict
	// error otherwise.
	CancelQueued(ctx context.Context, e *domain.Execution) error
}

// Why a supervised run's context was cancelled.
var (
	errCancelRequested = errors.New("the execution was cancelled by request")
	errLeaseLost       = errors.New("the run lost its session's lease")
)

// supervisor watches one run from the process that runs it, wherever that is (the runtime or
// stream function, the worker): a cancel request is written to DynamoDB by another process, so
// the run looks for it there.
//
// Timing (Limits): the first look is CancelPoll (1 s) after the run starts, then one every
// CancelPoll, so a run shorter than that makes no extra call and a cancel stops a run within
// about CancelPoll plus one read. Every Heartbeat (10 s) it moves the lease's end to RunLease
// (30 s) ahead, so the lease's lease_until keeps its one meaning — once now is past it, the
// holder is dead — and a run whose process died (Lambda timeout, crash) leaves a lease that
// expires at most RunLease after its last heartbeat, for the watchdog to find.
type supervisor struct {
	ctx    context.Context // the run's: cancelled on a cancel request or a lost lease
	cancel context.CancelCauseFunc
	quit   context.CancelFunc // ends the watching goroutine
	done   chan struct{}
	once   sync.Once
	cause  error
}

// supervise starts watching the run of execID under leaseID; the caller runs the engine with
// sv.ctx and calls stop when the engine has returned.
func (s *Service) supervise(ctx context.Context, sessionID, leaseID, execID string) *supervisor {
	rctx, cancel := context.WithCancelCause(ctx)
	// The goroutine's own calls are not the run's: they end when it is stopped.
	gctx, quit := context.WithCancel(context.WithoutCancel(ctx))
	sv := &supervisor{ctx: rctx, cancel: cancel, quit: quit, done: make(chan struct{})}
	go func() {
		defer close(sv.done)
		poll := time.NewTicker(s.limits.CancelPoll)
		defer poll.Stop()
		beat := time.NewTicker(s.limits.Heartbeat)
		defer beat.Stop()
		for {
			select {
			case <-gctx.Done():
				return
			case <-rctx.Done():
				return // the run's own deadline: nothing left to watch
			case <-poll.C:
				// A failed read is tried again at the next tick.
				if yes, err := s.store.CancelRequested(gctx, sessionID, leaseID); err == nil && yes {
					cancel(errCancelRequested)
					return
				}
			case <-beat.C:
				err := s.store.ExtendLease(gctx, sessionID, leaseID, "", s.now().Add(s.limits.RunLease))
				if domain.KindOf(err) == domain.KindConflict {
					cancel(errLeaseLost) // its commit could not be written anyway
					return
				}
			}
		}
	}()
	return sv
}

// stop ends the watch (waiting for its goroutine, so that no heartbeat runs into the commit)
// and tells why the run's context was cancelled: errCancelRequested, errLeaseLost, or nil. It
// may be called again (a deferred call after a panic), answering the same.
func (sv *supervisor) stop() error {
	sv.once.Do(func() {
		sv.quit()
		<-sv.done
		cause := context.Cause(sv.ctx)
		sv.cancel(nil)
		if errors.Is(cause, errCancelRequested) || errors.Is(cause, errLeaseLost) {
			sv.cause = cause
		}
	})
	return sv.cause
}

// leaseLost is the error of a run whose lease was taken from it (its heartbeat failed for
// longer than the lease lasts, and the watchdog or another run took the session): nothing of
// it is committed.
func leaseLost(err error) error {
	return &domain.Error{Kind: domain.KindOverloaded, Err: err,
		Message: "The execution lost its hold on the session (its lease could not be renewed) and was stopped; send the message again"}
}
