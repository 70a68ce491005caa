package domain

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Budget is what a key or a company may spend in a UTC calendar month on model calls: input and
// output tokens, and the cost of the priced calls (UsageCount.CostUSD). A nil field is no budget.
// A budget is checked before a run starts, against the month's counters, so it can be overspent
// by the runs already under way when it ran out.
type Budget struct {
	MonthlyTokens  *int64
	MonthlyCostUSD *float64
}

// Set reports whether b holds any budget.
func (b Budget) Set() bool { return b.MonthlyTokens != nil || b.MonthlyCostUSD != nil }

// Limits are a company's limits (PUT /api/v1/limits/): a request rate shared by all its keys and
// its monthly budgets. RequestsPerMinute 0 is no rate limit. A key's own are its RateLimit and
// Budget.
type Limits struct {
	RequestsPerMinute int
	Budget
}

// Set reports whether l holds any limit.
func (l Limits) Set() bool { return l.RequestsPerMinute > 0 || l.Budget.Set() }

// Bounds of the limits' values.
const (
	// MaxRequestsPerMinute bounds a rate limit (a key's rate_limit as well).
	MaxRequestsPerMinute = 1_000_000
	// MaxMonthlyTokens bounds a token budget (what an int64 counter and a JSON number hold exactly).
	MaxMonthlyTokens = 1 << 53
	// MaxMonthlyCostUSD bounds a cost budget.
	MaxMonthlyCostUSD = 1e12
)

// ValidateLimits checks limits' values as a request gave them, naming each bad one under prefix
// ("limits." for a key's): requests_per_minute and monthly_tokens are positive integers,
// monthly_cost_usd a non-negative number.
func ValidateLimits(prefix string, rpm *int, l Budget) []FieldError {
	var errs []FieldError
	if rpm != nil && (*rpm < 1 || *rpm > MaxRequestsPerMinute) {
		errs = append(errs, FieldError{Field: prefix + "requests_per_minute", Message: fmt.Sprintf("must be a positive integer, at most %d (omit it, or send null, for no limit)", MaxRequestsPerMinute)})
	}
	if l.MonthlyTokens != nil && (*l.MonthlyTokens < 1 || *l.MonthlyTokens > MaxMonthlyTokens) {
		errs = append(errs, FieldError{Field: prefix + "monthly_tokens", Message: fmt.Sprintf("must be a positive integer, at most %d (omit it, or send null, for no budget)", int64(MaxMonthlyTokens))})
	}
	if c := l.MonthlyCostUSD; c != nil && (math.IsNaN(*c) || *c < 0 || *c > MaxMonthlyCostUSD) {
		errs = append(errs, FieldError{Field: prefix + "monthly_cost_usd", Message: "must be a number of US dollars between 0 and 1e12 (omit it, or send null, for no budget)"})
	}
	return errs
}

// MonthStart is the first instant of t's UTC month, which a monthly budget counts from.
func MonthStart(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

// NextMonth is the first instant of the UTC month after t's: when a monthly budget resets.
func NextMonth(t time.Time) time.Time { return MonthStart(t).AddDate(0, 1, 0) }

// Overspent names the first budget of b that spent has used up, as "Monthly token budget of N"
// or "Monthly cost budget of $X", or "" when none is.
func (b Budget) Overspent(spent UsageCount) string {
	if b.MonthlyTokens != nil && spent.InputTokens+spent.OutputTokens >= *b.MonthlyTokens {
		return fmt.Sprintf("Monthly token budget of %d", *b.MonthlyTokens)
	}
	if b.MonthlyCostUSD != nil && spent.CostUSD >= *b.MonthlyCostUSD {
		return "Monthly cost budget of $" + strconv.FormatFloat(*b.MonthlyCostUSD, 'f', -1, 64)
	}
	return ""
}

// LimitsChange is a change of a company's limits (PUT /api/v1/limits/): a field left out stays
// as it is, null clears it, a value sets it.
type LimitsChange struct {
	RequestsPerMinute Optional[int]
	MonthlyTokens     Optional[int64]
	MonthlyCostUSD    Optional[float64]
}

// Validate names each bad value as a field of the body.
func (c LimitsChange) Validate() []FieldError {
	var rpm *int
	var b Budget
	if c.RequestsPerMinute.Set && !c.RequestsPerMinute.Null {
		rpm = &c.RequestsPerMinute.Value
	}
	if c.MonthlyTokens.Set && !c.MonthlyTokens.Null {
		b.MonthlyTokens = &c.MonthlyTokens.Value
	}
	if c.MonthlyCostUSD.Set && !c.MonthlyCostUSD.Null {
		b.MonthlyCostUSD = &c.MonthlyCostUSD.Value
	}
	return ValidateLimits("", rpm, b)
}
