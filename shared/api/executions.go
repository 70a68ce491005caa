package api

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// executionSummaryJSON is an execution as the traces list shows it: what ran, for whom, how it
// ended, how long it took and what it cost, without its events (the execution's poll and the
// session's events have them).
type executionSummaryJSON struct {
	AgentID       *string             `json:"agent_id"` // null: an inline configuration's session
	AgentName     string              `json:"agent_name"`
	CompletedAt   *int64              `json:"completed_at"`
	CorrelationID *string             `json:"correlation_id"`
	CreatedAt     int64               `json:"created_at"`
	Error         *executionErrorJSON `json:"error,omitempty"`
	ExecutionTime int64               `json:"execution_time"`
	ID            string              `json:"id"`
	Object        string              `json:"object"`
	SessionID     string              `json:"session_id"`
	Status        string              `json:"status"`
	Usage         usageJSON           `json:"usage"`
}

func executionSummaryView(e *domain.Execution) executionSummaryJSON {
	full := executionView(e, nil, nil)
	v := executionSummaryJSON{AgentName: e.AgentName, CompletedAt: full.CompletedAt, CorrelationID: e.CorrelationID,
		CreatedAt: full.CreatedAt, Error: full.Error, ExecutionTime: e.DurationMS, ID: e.ID, Object: full.Object,
		SessionID: e.SessionID, Status: e.Status,
		Usage: usageJSON{InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, CostUSD: e.CostUSD}}
	if e.AgentID != "" {
		id := e.AgentID
		v.AgentID = &id
	}
	return v
}

// listExecutions answers a page of the caller's executions, newest first (the traces list):
// filtered by agent_id, status and the time window since/until, limit at a time, a bare JSON
// array with the next page in the Link header (after=, the cursor of this page's end).
func (h *runtimeHandlers) listExecutions(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionRead); err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", DefaultListLimit, 1, MaxListLimit)
	if err != nil {
		return err
	}
	list, next, err := h.svc.ListExecutions(r.Context(), principal(r), sessions.ExecutionsQuery{
		AgentID: q.Get("agent_id"), Status: q.Get("status"), Since: q.Get("since"), Until: q.Get("until"),
		After: q.Get("after"), Limit: limit})
	if err != nil {
		return err
	}
	if list == nil {
		list = []*domain.Execution{} // [] rather than null
	}
	if next != "" {
		q.Set("limit", strconv.Itoa(limit))
		q.Set("after", next)
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		w.Header().Set("Link", "<"+u.String()+`>; rel="next"`)
	}
	writeJSON(w, http.StatusOK, each(list, executionSummaryView))
	return nil
}
