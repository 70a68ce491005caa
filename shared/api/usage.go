package api

import (
	"context"
	"net/http"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/usage"
)

// UsageReporter answers usage reports; usage.Service is the implementation.
type UsageReporter interface {
	Report(ctx context.Context, p domain.Principal, q usage.Query) (*usage.Report, error)
}

// ServeUsage adds the usage report, GET /api/v1/usage/, to g (the auth function's group: it
// reads only the store).
func (g *Group) ServeUsage(svc UsageReporter) *Group {
	g.handle(http.MethodGet, "/api/v1/usage/", false, func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		rep, err := svc.Report(r.Context(), principal(r), usage.Query{From: q.Get("from"), To: q.Get("to"), GroupBy: q.Get("group_by")})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, viewUsageReport(rep))
		return nil
	})
	return g
}

// usageReportJSON is a usage report.
type usageReportJSON struct {
	Object  string         `json:"object"`
	From    string         `json:"from"`
	To      string         `json:"to"`
	GroupBy string         `json:"group_by"`
	Data    []usageRowJSON `json:"data"`
	Total   usageCountJSON `json:"total"`
}

// usageRowJSON is one group of a report: the member named by its group_by and its counts.
type usageRowJSON struct {
	Day      string  `json:"day,omitempty"`
	APIKeyID *string `json:"api_key_id,omitempty"`
	AgentID  *string `json:"agent_id,omitempty"`
	usageCountJSON
}

// usageCountJSON are a report's counters.
type usageCountJSON struct {
	Requests         int64   `json:"requests"`
	Executions       int64   `json:"executions"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	EmbeddingTokens  int64   `json:"embedding_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	UnpricedRequests int64   `json:"unpriced_requests"`
}

func viewUsageCount(c domain.UsageCount) usageCountJSON {
	return usageCountJSON{Requests: c.Requests, Executions: c.Executions, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens,
		EmbeddingTokens: c.EmbeddingTokens, CostUSD: c.CostUSD, UnpricedRequests: c.Unpriced}
}

func viewUsageReport(rep *usage.Report) usageReportJSON {
	v := usageReportJSON{Object: "usage.report", From: rep.From.Format(time.DateOnly), To: rep.To.Format(time.DateOnly),
		GroupBy: rep.GroupBy, Data: make([]usageRowJSON, len(rep.Rows)), Total: viewUsageCount(rep.Total)}
	for i, r := range rep.Rows {
		row := usageRowJSON{usageCountJSON: viewUsageCount(r.UsageCount)}
		switch rep.GroupBy {
		case usage.ByDay:
			row.Day = r.Day.Format(time.DateOnly)
		case usage.ByAPIKey:
			row.APIKeyID = &r.KeyID
		case usage.ByAgent:
			row.AgentID = &r.AgentID
		}
		v.Data[i] = row
	}
	return v
}
