package sessionstest

import (
	"cmp"
	"context"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// runKey is an execution's place in its owner's list, as the adapter's sort key holds it.
func runKey(e *domain.Execution) string {
	return e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + e.SessionID + "#" + e.ID
}

// ListExecutions implements sessions.Runs: the executions stored with company and owner and not
// on the watchdog's list, newest first, f.Limit of those f picks after the cursor, and the
// cursor of the next page while more match. Its cursors are the adapter's.
func (s *Store) ListExecutions(_ context.Context, company, owner string, f domain.ExecutionFilter) ([]*domain.Execution, string, error) {
	after := ""
	if f.After != "" {
		b, err := base64.RawURLEncoding.DecodeString(f.After)
		parts := strings.Split(string(b), "#")
		if err != nil || len(parts) != 3 || !domain.IsID(parts[1]) || !domain.IsID(parts[2]) {
			return nil, "", domain.Invalid([]domain.FieldError{{Field: "after", Message: "is not a cursor of this list; take the next page's address from the Link header"}})
		}
		after = string(b)
	}
	lo, hi := "", ""
	if !f.Since.IsZero() {
		lo = runKey(&domain.Execution{CreatedAt: f.Since})
		lo = lo[:strings.IndexByte(lo, '#')]
	}
	if !f.Until.IsZero() {
		hi = runKey(&domain.Execution{CreatedAt: f.Until})
		hi = hi[:strings.IndexByte(hi, '#')]
	}
	s.mu.Lock()
	var match []*domain.Execution
	for sid, execs := range s.execs {
		for id, e := range execs {
			k := runKey(e)
			if _, watched := s.listed(sid, id); watched || e.Company != company || e.Owner != owner || company == "" || owner == "" ||
				(f.AgentID != "" && e.AgentID != f.AgentID) || (f.Status != "" && e.Status != f.Status) ||
				(lo != "" && k < lo) || (hi != "" && k >= hi) || (after != "" && k >= after) {
				continue
			}
			match = append(match, e)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(match, func(a, b *domain.Execution) int { return cmp.Compare(runKey(b), runKey(a)) })
	limit := max(f.Limit, 1)
	next := ""
	if len(match) > limit {
		match = match[:limit]
		next = base64.RawURLEncoding.EncodeToString([]byte(runKey(match[limit-1])))
	}
	out := make([]*domain.Execution, len(match))
	for i, e := range match {
		c, err := roundTrip(e)
		if err != nil {
			return nil, "", err
		}
		out[i] = c
	}
	return out, next, nil
}
