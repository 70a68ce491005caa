package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/domain"
)

// Names of the rate-limit policies, as the IETF RateLimit-Policy and RateLimit fields name them.
const (
	PolicyKey     = "per-key"
	PolicyCompany = "per-company"
)

// Quota is one rate-limit policy in force for a request: its limit per window and what is left.
type Quota struct {
	Name      string // PolicyKey or PolicyCompany
	Limit     int
	Remaining int
}

// companyRateID is what a company's window is counted under; key ids are UUIDs, so never this.
func companyRateID(company string) string { return "CO#" + company }

// Limit counts the request against the key's per-minute limit and then, if it passed, against
// its company's: a request over its key's limit never uses the company's window, so one key
// cannot spend its company's requests by being refused. A request refused by the company's
// limit has used one of its key's. With both limits that is two conditional UpdateItems, one
// after the other; with one, one; with none, none. The company's limits are read through a cache
// (CacheTTL), so a warm instance reads nothing else.
func (s *Service) Limit(ctx context.Context, p domain.Principal) (Rate, error) {
	if s.limiter == nil {
		return Rate{}, nil
	}
	co, err := s.companyLimits(ctx, p.Company)
	if err != nil {
		return Rate{}, err
	}
	now := s.now()
	window := now.Truncate(RateWindow)
	r := Rate{Reset: window.Add(RateWindow)}
	for _, q := range []struct {
		name, id string
		limit    int
		refused  error
	}{
		{PolicyKey, p.KeyID, p.RateLimit, domain.ErrRateLimited},
		{PolicyCompany, companyRateID(p.Company), co.RequestsPerMinute,
			domain.Errorf(domain.KindRateLimited, "Rate limit of the company (%d requests per minute) exceeded; retry later", co.RequestsPerMinute)},
	} {
		if q.limit <= 0 {
			continue
		}
		n, err := s.limiter.Hit(ctx, q.id, window, q.limit, r.Reset.Add(RateWindow))
		if err != nil && domain.KindOf(err) != domain.KindRateLimited {
			return r, fmt.Errorf("rate limit: %w", err)
		}
		remaining := max(q.limit-n, 0)
		if err != nil {
			remaining = 0
		}
		r.add(Quota{Name: q.name, Limit: q.limit, Remaining: remaining})
		if err != nil {
			return r, q.refused
		}
	}
	return r, nil
}

// add records a policy in force; Limit and Remaining are the one with the fewest requests left.
func (r *Rate) add(q Quota) {
	if len(r.Policies) == 0 || q.Remaining < r.Remaining {
		r.Limit, r.Remaining = q.Limit, q.Remaining
	}
	r.Policies = append(r.Policies, q)
}

// CheckBudget refuses, before any model call, a run of a key whose own monthly budget or whose
// company's is spent: a rate_limit_error naming the budget and when it resets (also returned, for
// Retry-After). With no budget on the key or its company it reads nothing (the company's limits
// come through the cache); otherwise the month's counters of the key and the company in one
// call (a GetItem, or a BatchGetItem for both).
func (s *Service) CheckBudget(ctx context.Context, p domain.Principal) (time.Time, error) {
	if s.limiter == nil {
		return time.Time{}, nil
	}
	co, err := s.companyLimits(ctx, p.Company)
	if err != nil {
		return time.Time{}, err
	}
	ofKey, ofCompany := p.Budget.Set(), co.Budget.Set()
	if !ofKey && !ofCompany {
		return time.Time{}, nil
	}
	now := s.now()
	reset := domain.NextMonth(now)
	keyID := ""
	if ofKey {
		keyID = p.KeyID
	}
	keyUse, coUse, err := s.limiter.MonthUsage(ctx, p.Company, keyID, ofCompany, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("budget: %w", err)
	}
	for _, b := range []struct {
		on     bool
		budget domain.Budget
		used   domain.UsageCount
		whose  string
	}{{ofKey, p.Budget, keyUse, "this API key"}, {ofCompany, co.Budget, coUse, "this company"}} {
		if name := b.budget.Overspent(b.used); b.on && name != "" {
			return reset, domain.Errorf(domain.KindRateLimited, "%s for %s is spent; it resets on %s", name, b.whose, reset.Format(time.DateOnly))
		}
	}
	return time.Time{}, nil
}

// CompanyLimitsAs reads the caller's company's limits; admin keys only.
func (s *Service) CompanyLimitsAs(ctx context.Context, p domain.Principal) (domain.Limits, error) {
	if !p.IsAdmin() {
		return domain.Limits{}, domain.ErrPermission
	}
	if s.limiter == nil {
		return domain.Limits{}, errNoLimits
	}
	l, err := s.limiter.CompanyLimits(ctx, p.Company)
	if err != nil {
		return l, err
	}
	s.rememberLimits(p.Company, l, s.now())
	return l, nil
}

// UpdateLimitsAs changes the caller's company's limits (admin keys only) and records the change
// in the audit log (the acting key, the company as target). It applies at once on this instance
// and within CacheTTL on every other.
func (s *Service) UpdateLimitsAs(ctx context.Context, p domain.Principal, c domain.LimitsChange) (domain.Limits, error) {
	if !p.IsAdmin() {
		return domain.Limits{}, domain.ErrPermission
	}
	if errs := c.Validate(); len(errs) > 0 {
		return domain.Limits{}, domain.Invalid(errs)
	}
	if s.audit == nil {
		return domain.Limits{}, errNoAudit
	}
	if s.limiter == nil {
		return domain.Limits{}, errNoLimits
	}
	now := s.now()
	l, err := s.limiter.UpdateCompanyLimits(ctx, p.Company, c, p.KeyID, now.UTC())
	if err != nil {
		return l, err
	}
	s.rememberLimits(p.Company, l, now)
	if err := s.audit.Record(ctx, p, audit.LimitsUpdated, p.Company); err != nil {
		return l, err
	}
	return l, nil
}

var errNoLimits = fmt.Errorf("limits store not configured")

type limitsEntry struct {
	limits  domain.Limits
	fetched time.Time
}

// companyLimits reads a company's limits through the cache: one GetItem per company per CacheTTL
// on each instance, a company without limits included.
func (s *Service) companyLimits(ctx context.Context, company string) (domain.Limits, error) {
	s.mu.Lock()
	e, ok := s.limits[company]
	s.mu.Unlock()
	if ok && s.now().Sub(e.fetched) < s.ttl {
		return e.limits, nil
	}
	now := s.now()
	l, err := s.limiter.CompanyLimits(ctx, company)
	if err != nil {
		return l, fmt.Errorf("limits of %s: %w", company, err)
	}
	s.rememberLimits(company, l, now)
	return l, nil
}

func (s *Service) rememberLimits(company string, l domain.Limits, fetched time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.limits) > maxCacheEntries {
		clear(s.limits)
	}
	s.limits[company] = limitsEntry{limits: l, fetched: fetched}
}
