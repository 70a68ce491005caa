package sessions

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Runs is the store's list of an owner's executions (the traces list).
type Runs interface {
	// ListExecutions reads one page of the executions of owner in company, newest first, as f
	// picks them, and the cursor of the next page ("" at the end). A page may hold fewer than
	// f.Limit with a cursor to go on from; a cursor not of the list is a 400 on "after".
	ListExecutions(ctx context.Context, company, owner string, f domain.ExecutionFilter) ([]*domain.Execution, string, error)
}

// ExecutionsQuery is a request for a page of the caller's executions, as the query string
// gives it: every member optional.
type ExecutionsQuery struct {
	AgentID string // a stored agent's id
	Status  string // one of domain.ExecutionStatuses
	Since   string // RFC 3339: created at or after
	Until   string // RFC 3339: created before
	After   string // the cursor of the page before
	Limit   int
}

// ListExecutions returns a page of the caller's executions, newest first, as q picks them, and
// the cursor of the next page ("" at the end): the runs of the sessions p owns in its company,
// each listed once it finished or paused. A bad filter is a 400 naming it.
func (s *Service) ListExecutions(ctx context.Context, p domain.Principal, q ExecutionsQuery) ([]*domain.Execution, string, error) {
	f, err := q.filter()
	if err != nil {
		return nil, "", err
	}
	return s.store.ListExecutions(ctx, p.Company, p.Owner, f)
}

// filter checks q and reads it into a filter.
func (q ExecutionsQuery) filter() (domain.ExecutionFilter, error) {
	f := domain.ExecutionFilter{AgentID: q.AgentID, Status: q.Status, After: q.After, Limit: q.Limit}
	var bad []domain.FieldError
	if q.AgentID != "" && !domain.IsID(q.AgentID) {
		bad = append(bad, domain.FieldError{Field: "agent_id", Message: "must be an agent's id (a UUID)"})
	}
	if q.Status != "" && !slices.Contains(domain.ExecutionStatuses, q.Status) {
		bad = append(bad, domain.FieldError{Field: "status", Message: "must be one of " + strings.Join(domain.ExecutionStatuses, ", ")})
	}
	var ok bool
	if f.Since, ok = rfc3339(q.Since); !ok {
		bad = append(bad, domain.FieldError{Field: "since", Message: badTime})
	}
	if f.Until, ok = rfc3339(q.Until); !ok {
		bad = append(bad, domain.FieldError{Field: "until", Message: badTime})
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		bad = append(bad, domain.FieldError{Field: "until", Message: "must be later than since"})
	}
	if len(q.After) > 512 {
		bad = append(bad, domain.FieldError{Field: "after", Message: "is not a cursor of this list; take the next page's address from the Link header"})
	}
	if len(bad) > 0 {
		return domain.ExecutionFilter{}, domain.Invalid(bad)
	}
	return f, nil
}

// badTime is the message of a since or until that rfc3339 refuses: it names the years too, as a
// well-formed time of 1969 is refused as well.
const badTime = "must be a time in RFC 3339 (2026-11-27T15:00:00Z) in the years 1970 to 9999"

// rfc3339 reads an optional time ("" is the zero time).
func rfc3339(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// stamp names on e the company, owner and agent of its session, under which the traces list
// holds it: the stored agent, or for an inline configuration its name alone.
func stamp(e *domain.Execution, sess *domain.Session) {
	e.Company, e.Owner, e.AgentID, e.AgentName = sess.Company, sess.Owner, sess.AgentID, sess.AgentName
	if e.AgentName == "" {
		e.AgentName = sess.Name
	}
}
