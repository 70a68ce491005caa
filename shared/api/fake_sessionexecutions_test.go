package api_test

import (
	"context"
	"slices"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// SessionExecutions pages the fake's executions of one session by creation time, each with
// its messages as the fake's GetExecution gives them.
func (s *fakeSessions) SessionExecutions(_ context.Context, p domain.Principal, sid string, limit, offset int) (*domain.Session, []sessions.SessionExecution, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, err := s.find(p, sid)
	if err != nil {
		return nil, nil, false, err
	}
	var all []sessions.SessionExecution
	for _, e := range s.execs {
		if e.SessionID != sid {
			continue
		}
		x := sessions.SessionExecution{Execution: e}
		for _, m := range s.messages[sid] {
			if m.ExecutionID == e.ID && m.Role == "assistant" {
				x.Messages = append(x.Messages, m)
			}
		}
		all = append(all, x)
	}
	slices.SortFunc(all, func(a, b sessions.SessionExecution) int { return a.Execution.CreatedAt.Compare(b.Execution.CreatedAt) })
	list, more := page(all, offset, limit)
	return sess, list, more, nil
}
