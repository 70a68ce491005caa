package sessionstest

import (
	"context"
	"maps"
	"slices"

	"github.com/agentorch/agentorch/shared/domain"
)

// SessionExecutions implements sessions.Store: a session's executions in id order (the
// adapter's sort key), limit after skipping offset.
func (s *Store) SessionExecutions(_ context.Context, sessionID string, limit, offset int) ([]*domain.Execution, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*domain.Execution{}
	ids := slices.Sorted(maps.Keys(s.execs[sessionID]))
	for i, id := range ids {
		if i < offset {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, copyOf(s.execs[sessionID][id]))
	}
	return out, false, nil
}
