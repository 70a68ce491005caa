package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
)

// memLimiter is an in-memory Limiter that counts its calls, for the rules of Limit and
// CheckBudget (the DynamoDB adapter's own tests hold it to the same behaviour on DynamoDB Local).
type memLimiter struct {
	mu     sync.Mutex
	hits   map[string]int
	limits map[string]domain.Limits
	used   map[string]domain.UsageCount // by company, or company/key
	calls  map[string]int
}

func newMemLimiter() *memLimiter {
	return &memLimiter{hits: map[string]int{}, limits: map[string]domain.Limits{}, used: map[string]domain.UsageCount{}, calls: map[string]int{}}
}

func (m *memLimiter) Hit(_ context.Context, id string, w time.Time, limit int, _ time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["Hit"]++
	k := id + w.String()
	if m.hits[k] >= limit {
		return limit, domain.ErrRateLimited
	}
	m.hits[k]++
	return m.hits[k], nil
}

func (m *memLimiter) CompanyLimits(_ context.Context, company string) (domain.Limits, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["CompanyLimits"]++
	return m.limits[company], nil
}

func (m *memLimiter) UpdateCompanyLimits(_ context.Context, company string, c domain.LimitsChange, _ string, _ time.Time) (domain.Limits, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.limits[company]
	if c.RequestsPerMinute.Set {
		l.RequestsPerMinute = c.RequestsPerMinute.Value
	}
	if c.MonthlyTokens.Set {
		l.MonthlyTokens = nil
		if !c.MonthlyTokens.Null {
			l.MonthlyTokens = &c.MonthlyTokens.Value
		}
	}
	if c.MonthlyCostUSD.Set {
		l.MonthlyCostUSD = nil
		if !c.MonthlyCostUSD.Null {
			l.MonthlyCostUSD = &c.MonthlyCostUSD.Value
		}
	}
	m.limits[company] = l
	return l, nil
}

func (m *memLimiter) MonthUsage(_ context.Context, company, keyID string, ofCompany bool, _ time.Time) (key, co domain.UsageCount, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["MonthUsage"]++
	if keyID != "" {
		key = m.used[company+"/"+keyID]
	}
	if ofCompany {
		co = m.used[company]
	}
	return key, co, nil
}

func (m *memLimiter) count(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[name]
}

func newLimitedService(t *testing.T) (*Service, *memLimiter, *audittest.Store) {
	t.Helper()
	lim := newMemLimiter()
	rec := audittest.NewStore()
	s := NewService(nil, lim, nil, 30*time.Second).WithAudit(audit.New(rec))
	now := time.Date(2026, 11, 27, 12, 0, 30, 0, time.UTC)
	s.now = func() time.Time { return now }
	return s, lim, rec
}

// TestLimitKeyThenCompany: a request counts against its key's limit and, if it passed, its
// company's; one refused by its key never uses the company's window; the headers' figures are
// the policy with the fewest requests left.
func TestLimitKeyThenCompany(t *testing.T) {
	s, lim, _ := newLimitedService(t)
	ctx := context.Background()
	lim.limits["acme"] = domain.Limits{RequestsPerMinute: 3}
	a := domain.Principal{KeyID: "ka", Company: "acme", RateLimit: 2}
	b := domain.Principal{KeyID: "kb", Company: "acme"}
	r, err := s.Limit(ctx, a)
	if err != nil || r.Limit != 2 || r.Remaining != 1 || len(r.Policies) != 2 ||
		r.Policies[0] != (Quota{PolicyKey, 2, 1}) || r.Policies[1] != (Quota{PolicyCompany, 3, 2}) {
		t.Fatalf("first request: %+v %v", r, err)
	}
	if _, err := s.Limit(ctx, a); err != nil {
		t.Fatal(err)
	}
	// a's third is refused by its key: the company's window keeps its last request for b.
	if r, err := s.Limit(ctx, a); !errors.Is(err, domain.ErrRateLimited) || domain.MessageOf(err) != domain.ErrRateLimited.Message || r.Remaining != 0 {
		t.Fatalf("over the key's limit: %+v %v", r, err)
	}
	if r, err := s.Limit(ctx, b); err != nil || r.Limit != 3 || r.Remaining != 0 || len(r.Policies) != 1 {
		t.Fatalf("b's request, the company's last: %+v %v", r, err)
	}
	r, err = s.Limit(ctx, b)
	if !errors.Is(err, domain.ErrRateLimited) || !strings.Contains(domain.MessageOf(err), "company (3 requests per minute)") || r.Policies[0].Name != PolicyCompany {
		t.Fatalf("over the company's limit: %+v %v", r, err)
	}
	// The company's limits were read once: the cache serves the rest.
	if n := lim.count("CompanyLimits"); n != 1 {
		t.Errorf("company limits read %d times, want 1", n)
	}
	// A key and company without limits count nothing.
	hits := lim.count("Hit")
	if r, err := s.Limit(ctx, domain.Principal{KeyID: "kc", Company: "free"}); err != nil || r.Limit != 0 || lim.count("Hit") != hits {
		t.Errorf("unlimited: %+v %v, %d hits", r, err, lim.count("Hit")-hits)
	}
}

// TestCheckBudget: a key's own budget and its company's are checked against the month's
// counters, named in the refusal with the day they reset; without any budget nothing is read.
func TestCheckBudget(t *testing.T) {
	s, lim, _ := newLimitedService(t)
	ctx := context.Background()
	tokens, dollars := int64(1000), 5.0
	keyed := domain.Principal{KeyID: "k1", Company: "acme", Budget: domain.Budget{MonthlyTokens: &tokens}}
	free := domain.Principal{KeyID: "k2", Company: "acme"}

	if _, err := s.CheckBudget(ctx, free); err != nil || lim.count("MonthUsage") != 0 {
		t.Fatalf("no budget: %v, %d month reads", err, lim.count("MonthUsage"))
	}
	lim.used["acme/k1"] = domain.UsageCount{InputTokens: 600, OutputTokens: 399}
	if _, err := s.CheckBudget(ctx, keyed); err != nil {
		t.Fatalf("999 of 1000 tokens: %v", err)
	}
	lim.used["acme/k1"] = domain.UsageCount{InputTokens: 600, OutputTokens: 400}
	reset, err := s.CheckBudget(ctx, keyed)
	want := "Monthly token budget of 1000 for this API key is spent; it resets on 2026-12-01"
	if !errors.Is(err, domain.ErrRateLimited) || domain.MessageOf(err) != want || !reset.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("spent key budget: %v (reset %v), want %q", err, reset, want)
	}
	// Another key of the company has no budget of its own: it runs, until the company's is set
	// (on this instance at once) and spent.
	p := domain.Principal{KeyID: "admin", Company: "acme", Scopes: []string{domain.ScopeAdmin}}
	if _, err := s.UpdateLimitsAs(ctx, p, domain.LimitsChange{MonthlyCostUSD: domain.Some(dollars)}); err != nil {
		t.Fatal(err)
	}
	lim.used["acme"] = domain.UsageCount{CostUSD: 4.99}
	if _, err := s.CheckBudget(ctx, free); err != nil {
		t.Fatalf("$4.99 of $5: %v", err)
	}
	lim.used["acme"] = domain.UsageCount{CostUSD: 5}
	want = "Monthly cost budget of $5 for this company is spent; it resets on 2026-12-01"
	if _, err := s.CheckBudget(ctx, free); domain.MessageOf(err) != want {
		t.Fatalf("spent company budget: %v, want %q", err, want)
	}
	// With both, one read.
	before := lim.count("MonthUsage")
	_, _ = s.CheckBudget(ctx, keyed)
	if n := lim.count("MonthUsage") - before; n != 1 {
		t.Errorf("key and company budgets read in %d calls, want 1", n)
	}
}

// TestUpdateLimitsAs: only admin keys read and change the company's limits; a change is
// validated and audited (the acting key, the company).
func TestUpdateLimitsAs(t *testing.T) {
	s, _, rec := newLimitedService(t)
	ctx := context.Background()
	admin := domain.Principal{KeyID: "admin-key", Company: "acme", Scopes: []string{domain.ScopeAdmin}}
	plain := domain.Principal{KeyID: "plain-key", Company: "acme"}
	if _, err := s.UpdateLimitsAs(ctx, plain, domain.LimitsChange{RequestsPerMinute: domain.Some(5)}); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("non-admin change: %v", err)
	}
	if _, err := s.CompanyLimitsAs(ctx, plain); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("non-admin read: %v", err)
	}
	_, err := s.UpdateLimitsAs(ctx, admin, domain.LimitsChange{MonthlyTokens: domain.Some(int64(0))})
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Fields[0].Field != "monthly_tokens" {
		t.Errorf("zero tokens: %v", err)
	}
	l, err := s.UpdateLimitsAs(ctx, admin, domain.LimitsChange{RequestsPerMinute: domain.Some(5)})
	if err != nil || l.RequestsPerMinute != 5 {
		t.Fatalf("change: %+v %v", l, err)
	}
	entries := rec.Entries()
	if len(entries) != 1 || entries[0].Action != audit.LimitsUpdated || entries[0].ActorKeyID != "admin-key" || entries[0].TargetID != "acme" || entries[0].Company != "acme" {
		t.Errorf("audit = %+v, want one limits.updated by admin-key of acme", entries)
	}
	if got, err := s.CompanyLimitsAs(ctx, admin); err != nil || got.RequestsPerMinute != 5 {
		t.Errorf("read back: %+v %v", got, err)
	}
}

// BenchmarkLimitAndBudget is the limits' own work on a request, besides their DynamoDB calls
// (an in-memory limiter): a key's and a company's rate windows, and both budgets checked.
func BenchmarkLimitAndBudget(b *testing.B) {
	lim := newMemLimiter()
	tokens, dollars := int64(1<<40), 1e9
	lim.limits["acme"] = domain.Limits{RequestsPerMinute: 1 << 30, Budget: domain.Budget{MonthlyCostUSD: &dollars}}
	s := NewService(nil, lim, nil, time.Minute)
	p := domain.Principal{KeyID: "k", Company: "acme", RateLimit: 1 << 30, Budget: domain.Budget{MonthlyTokens: &tokens}}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if _, err := s.Limit(ctx, p); err != nil {
			b.Fatal(err)
		}
		if _, err := s.CheckBudget(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
