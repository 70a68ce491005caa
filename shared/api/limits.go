package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/agentorch/agentorch/shared/domain"
)

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

// LimitsService reads and changes a company's limits; auth.Service is the implementation.
type LimitsService interface {
	CompanyLimitsAs(ctx context.Context, p domain.Principal) (domain.Limits, error)
	UpdateLimitsAs(ctx context.Context, p domain.Principal, c domain.LimitsChange) (domain.Limits, error)
}

// ServeLimits adds the company's limits, GET and PUT /api/v1/limits/ (admin keys), to g (the
// auth function's group).
func (g *Group) ServeLimits(svc LimitsService) *Group {
	g.handle(http.MethodGet, "/api/v1/limits/", false, func(w http.ResponseWriter, r *http.Request) error {
		l, err := svc.CompanyLimitsAs(r.Context(), principal(r))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, viewCompanyLimits(l))
		return nil
	})
	g.handle(http.MethodPut, "/api/v1/limits/", false, func(w http.ResponseWriter, r *http.Request) error {
		p := principal(r)
		if !p.IsAdmin() {
			return domain.ErrPermission
		}
		var req limitsRequest
		if err := decode(w, r, g.opts.MaxBodyBytes, &req); err != nil {
			return err
		}
		l, err := svc.UpdateLimitsAs(r.Context(), p, domain.LimitsChange{RequestsPerMinute: req.RequestsPerMinute.Optional,
			MonthlyTokens: req.MonthlyTokens.Optional, MonthlyCostUSD: req.MonthlyCostUSD.Optional})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, viewCompanyLimits(l))
		return nil
	})
	return g
}

// limitsRequest is the body of PUT /api/v1/limits/: a field left out stays, null clears it.
type limitsRequest struct {
	RequestsPerMinute optional[int]     `json:"requests_per_minute"`
	MonthlyTokens     optional[int64]   `json:"monthly_tokens"`
	MonthlyCostUSD    optional[float64] `json:"monthly_cost_usd"`
}

// optional is domain.Optional as a field of a request body. It encodes itself as the JSON value
// it holds (null when left out or null), so that it is that value to whatever encodes a body,
// the document's checks of this package's types included.
type optional[T any] struct{ domain.Optional[T] }

// MarshalJSON writes the value, or null.
func (o optional[T]) MarshalJSON() ([]byte, error) {
	if !o.Set || o.Null {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}

// companyLimitsJSON is a company's limits.
type companyLimitsJSON struct {
	Object string `json:"object"`
	limitsJSON
}

func viewCompanyLimits(l domain.Limits) companyLimitsJSON {
	return companyLimitsJSON{Object: "limits", limitsJSON: viewLimits(l.RequestsPerMinute, l.Budget)}
}
