package api_test

import (
	"context"
	"slices"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// ListExecutions lists the fake's executions of the caller's sessions, newest first, in one page.
func (s *fakeSessions) ListExecutions(_ context.Context, p domain.Principal, _ sessions.ExecutionsQuery) ([]*domain.Execution, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := map[string]bool{}
	for _, sess := range s.list {
		mine[sess.ID] = sess.CanAccess(p)
	}
	out := []*domain.Execution{}
	for _, e := range s.execs {
		if mine[e.SessionID] {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *domain.Execution) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, "", nil
}
