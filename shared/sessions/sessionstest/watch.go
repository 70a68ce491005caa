package sessionstest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// watchEntry is an execution on the watchdog's list: due at due while the stored record is
// still the one SwapExecution wrote (any other write of it takes it off, as the adapter's
// whole-item writes drop its index keys).
type watchEntry struct {
	rec *domain.Execution
	w   domain.Watched
}

// listed is the entry of a listed execution, if it is still on the list. s.mu is held.
func (s *Store) listed(sessionID, id string) (watchEntry, bool) {
	en, ok := s.watch[sessionID+"/"+id]
	if !ok || s.execs[sessionID][id] != en.rec {
		return watchEntry{}, false
	}
	return en, true
}

// SwapExecution implements sessions.Store.
func (s *Store) SwapExecution(_ context.Context, e *domain.Execution, from string, due time.Time) error {
	c, err := roundTrip(e)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.execs[e.SessionID][e.ID]
	switch {
	case from == "" && ok:
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s exists", e.ID)}
	case from != "" && (!ok || old.Status != from):
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s is no longer %s", e.ID, from)}
	}
	s.putExecution(e.SessionID, c)
	if e.Status == domain.ExecQueued || e.Status == domain.ExecRunning {
		s.watch[e.SessionID+"/"+e.ID] = watchEntry{rec: c, w: domain.Watched{SessionID: e.SessionID, ExecutionID: e.ID, Status: e.Status,
			Due: due.UTC()}}
	}
	return nil
}

// Postpone implements sessions.Store.
func (s *Store) Postpone(_ context.Context, w domain.Watched, due time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	en, ok := s.listed(w.SessionID, w.ExecutionID)
	if !ok || en.rec.Status != w.Status {
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("Execution %s is no longer %s", w.ExecutionID, w.Status)}
	}
	en.w.Due = due.UTC()
	s.watch[w.SessionID+"/"+w.ExecutionID] = en
	return nil
}

// WatchedExecution implements sessions.Store.
func (s *Store) WatchedExecution(ctx context.Context, sessionID, id string) (*domain.Execution, time.Time, error) {
	e, err := s.GetExecution(ctx, sessionID, id)
	if err != nil {
		return nil, time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	en, _ := s.listed(sessionID, id)
	return e, en.w.Due, nil
}

// DueExecutions implements sessions.Store: the earliest due first.
func (s *Store) DueExecutions(_ context.Context, now time.Time, limit int) ([]domain.Watched, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Watched
	for _, en := range s.watch {
		if cur, ok := s.listed(en.w.SessionID, en.w.ExecutionID); ok && cur.w.Due.Before(now) {
			out = append(out, cur.w)
		}
	}
	slices.SortFunc(out, func(a, b domain.Watched) int {
		if c := a.Due.Compare(b.Due); c != 0 {
			return c
		}
		return strings.Compare(a.ExecutionID, b.ExecutionID)
	})
	return out[:min(len(out), limit)], nil
}

// SessionLease implements sessions.Store.
func (s *Store) SessionLease(ctx context.Context, id string) (*domain.Session, domain.Lease, error) {
	sess, err := s.GetSession(ctx, id)
	if err != nil {
		return nil, domain.Lease{}, err
	}
	l, err := s.LeaseOf(ctx, id)
	return sess, l, err
}

// LeaseOf implements sessions.Store.
func (s *Store) LeaseOf(_ context.Context, sessionID string) (domain.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[sessionID]; !ok {
		return domain.Lease{}, domain.ErrNotFound
	}
	l, ok := s.leases[sessionID]
	if !ok {
		return domain.Lease{}, nil
	}
	return domain.Lease{Until: time.UnixMilli(l.until).UTC(), ExecutionID: l.exec}, nil
}
