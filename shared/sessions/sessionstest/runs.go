package sessionstest

import (
	"context"
	"fmt"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// ExtendLease implements sessions.Store: only the lease's holder moves its end.
func (s *Store) ExtendLease(_ context.Context, id, leaseID, execID string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[id]
	if !ok || l.id != leaseID {
		return &domain.Error{Kind: domain.KindConflict, Message: "The session's lease was lost"}
	}
	l.until = until.UnixMilli()
	if execID != "" {
		l.exec = execID
	}
	s.leases[id] = l
	return nil
}

// RequestCancel implements sessions.Store: marked only while a live lease runs execID.
func (s *Store) RequestCancel(_ context.Context, id, execID string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[id]
	if !ok || l.exec != execID || l.until <= now.UnixMilli() {
		return domain.ErrNotFound
	}
	l.cancel = true
	s.leases[id] = l
	return nil
}

// CancelRequested implements sessions.Store: the mark belongs to the lease it was made for.
func (s *Store) CancelRequested(_ context.Context, id, leaseID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[id]
	return ok && l.id == leaseID && l.cancel, nil
}

// CancelQueued implements sessions.Store: written only over a queued record.
func (s *Store) CancelQueued(_ context.Context, e *domain.Execution) error {
	c, err := roundTrip(e)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.execs[e.SessionID][e.ID]; !ok || old.Status != domain.ExecQueued {
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s is no longer queued", e.ID)}
	}
	s.putExecution(e.SessionID, c)
	return nil
}
