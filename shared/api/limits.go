package api

import "github.com/agentorch/agentorch/shared/domain"

// limitsJSON is a key's or a company's limits as the API shows them: null where there is none.
type limitsJSON struct {
	RequestsPerMinute *int     `json:"requests_per_minute"`
	MonthlyTokens     *int64   `json:"monthly_tokens"`
	MonthlyCostUSD    *float64 `json:"monthly_cost_usd"`
}

// viewLimits shows a rate limit (0: none) and a budget.
func viewLimits(rpm int, b domain.Budget) limitsJSON {
	v := limitsJSON{MonthlyTokens: b.MonthlyTokens, MonthlyCostUSD: b.MonthlyCostUSD}
	if rpm > 0 {
		v.RequestsPerMinute = &rpm
	}
	return v
}
