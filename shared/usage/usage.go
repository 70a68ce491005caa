// Package usage answers a company's usage report: requests, executions, tokens and cost per UTC
// day, API key or agent, summed from the counters each execute adds to (see CountUsage in
// shared/dynamo), never from the executions themselves.
package usage

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store reads the counters of a company's UTC days from from to to, both included.
type Store interface {
	UsageEntries(ctx context.Context, company string, from, to time.Time) ([]domain.UsageEntry, error)
}

// Groupings of a report.
const (
	ByDay    = "day"
	ByAPIKey = "api_key"
	ByAgent  = "agent"
)

// MaxDays bounds a report's range: a year and a day, so that a report reads a bounded number of
// counters (days × keys × agents).
const MaxDays = 366

// DefaultDays is the range of a report without from: the 30 days up to to.
const DefaultDays = 30

// Query is a report's range and grouping as the caller sent them (empty: the default).
type Query struct {
	From, To string // UTC days, YYYY-MM-DD
	GroupBy  string // day (default), api_key or agent
}

// Row is one group's usage: Day is set when grouped by day, KeyID by api_key, AgentID by agent.
type Row struct {
	Day     time.Time
	KeyID   string
	AgentID string
	domain.UsageCount
}

// Report is a company's usage over a range of days.
type Report struct {
	From, To time.Time
	GroupBy  string
	Rows     []Row // in the order of their day, key id or agent id
	Total    domain.UsageCount
}

// Service answers usage reports.
type Service struct {
	store Store
	now   func() time.Time
}

// New builds the usage service.
func New(store Store) *Service { return &Service{store: store, now: time.Now} }

// Report sums p's company's counters of q's range by q's grouping. It needs ScopeUsageRead
// (held by admin keys and keys without scopes).
func (s *Service) Report(ctx context.Context, p domain.Principal, q Query) (*Report, error) {
	if !p.Can(domain.ScopeUsageRead) {
		return nil, domain.ErrPermission
	}
	rep, err := s.parse(q)
	if err != nil {
		return nil, err
	}
	entries, err := s.store.UsageEntries(ctx, p.Company, rep.From, rep.To)
	if err != nil {
		return nil, err
	}
	groups := map[string]*Row{}
	for _, e := range entries {
		var k string
		row := Row{}
		switch rep.GroupBy {
		case ByDay:
			k, row.Day = e.Day.Format(time.DateOnly), e.Day
		case ByAPIKey:
			k, row.KeyID = e.KeyID, e.KeyID
		case ByAgent:
			k, row.AgentID = e.AgentID, e.AgentID
		}
		g, ok := groups[k]
		if !ok {
			g = &row
			groups[k] = g
		}
		g.Add(e.UsageCount)
		rep.Total.Add(e.UsageCount)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rep.Rows = make([]Row, len(keys))
	for i, k := range keys {
		rep.Rows[i] = *groups[k]
	}
	return rep, nil
}

// parse reads q's days and grouping, each wrong one a field error.
func (s *Service) parse(q Query) (*Report, error) {
	var fields []domain.FieldError
	day := func(name, v string, def time.Time) time.Time {
		if v == "" {
			return def
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			fields = append(fields, domain.FieldError{Field: name, Message: fmt.Sprintf("must be a date YYYY-MM-DD (UTC), not %q", v)})
		}
		return d
	}
	today := s.now().UTC().Truncate(24 * time.Hour)
	rep := &Report{GroupBy: q.GroupBy}
	rep.To = day("to", q.To, today)
	rep.From = day("from", q.From, rep.To.AddDate(0, 0, 1-DefaultDays))
	switch q.GroupBy {
	case "":
		rep.GroupBy = ByDay
	case ByDay, ByAPIKey, ByAgent:
	default:
		fields = append(fields, domain.FieldError{Field: "group_by", Message: fmt.Sprintf("must be one of day, api_key, agent, not %q", q.GroupBy)})
	}
	if len(fields) == 0 {
		switch days := int(rep.To.Sub(rep.From).Hours()/24) + 1; {
		case days < 1:
			fields = append(fields, domain.FieldError{Field: "from", Message: "must not be after to"})
		case days > MaxDays:
			fields = append(fields, domain.FieldError{Field: "from", Message: fmt.Sprintf("the range may span at most %d days", MaxDays)})
		}
	}
	if len(fields) > 0 {
		return nil, domain.Invalid(fields)
	}
	return rep, nil
}
