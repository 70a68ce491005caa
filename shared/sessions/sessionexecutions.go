package sessions

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// SessionExecution is one execution of a session's list with the messages it wrote, as
// GetExecution gives them (none unless it completed or was cancelled).
type SessionExecution struct {
	Execution *domain.Execution
	Messages  []domain.Message
}

// SessionExecutions pages through a session's executions in the order they were created, limit
// after skipping offset, each as GetExecution answers it; the session is found for p as
// Messages finds it (the same not-found for another owner's or company's). It reads the session,
// one Query of the executions, and, when one of them wrote messages, the history newest first
// back to the page's oldest such execution (one Query while that fits in 1 MB).
func (s *Service) SessionExecutions(ctx context.Context, p domain.Principal, sessionID string, limit, offset int) (*domain.Session, []SessionExecution, bool, error) {
	sess, err := s.Get(ctx, p, sessionID)
	if err != nil {
		return nil, nil, false, err
	}
	list, more, err := s.store.SessionExecutions(ctx, sess.ID, limit, offset)
	if err != nil {
		return nil, nil, false, fmt.Errorf("executions of %s: %w", sess.ID, err)
	}
	out := make([]SessionExecution, len(list))
	want := map[string]int{} // message id → its execution's place on the page
	var oldest *domain.Execution
	for i, e := range list {
		e.Request, e.Scopes = nil, nil
		out[i].Execution = e
		if (e.Status == domain.ExecCompleted || e.Status == domain.ExecCancelled) && len(e.MessageIDs) > 0 {
			for _, id := range e.MessageIDs {
				want[id] = i
			}
			if oldest == nil {
				oldest = e
			}
		}
	}
	if oldest == nil {
		return sess, out, more, nil
	}
	// Newest first: the messages of later executions are skipped, the page's taken, and the
	// read stops at the first message older than the page's oldest execution's.
	found := false
	recent, err := s.store.History(ctx, sess.ID, func(m domain.Message) bool {
		if _, ok := want[m.ID]; ok {
			found = found || m.ExecutionID == oldest.ID
			return true
		}
		return !found && !m.CreatedAt.Before(oldest.CreatedAt)
	})
	if err != nil {
		return nil, nil, false, fmt.Errorf("messages of the executions of %s: %w", sess.ID, err)
	}
	for _, m := range recent {
		if i, ok := want[m.ID]; ok {
			out[i].Messages = append(out[i].Messages, m)
		}
	}
	return sess, out, more, nil
}
