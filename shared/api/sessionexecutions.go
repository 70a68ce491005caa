package api

import (
	"encoding/json"
	"net/http"

	"github.com/agentorch/agentorch/shared/domain"
)

// Pages of a session's executions.
const (
	DefaultSessionExecutionsLimit = 50
	MaxSessionExecutionsLimit     = 100
)

// sessionExecutionsPageJSON is a page of a session's executions, each as the execution's poll
// (executionJSON) shows it, encoded as fitPage cut the page.
type sessionExecutionsPageJSON struct {
	Executions []json.RawMessage `json:"executions"`
	HasMore    bool              `json:"has_more"`
}

// sessionExecutions answers a page of a session's executions in the order they were created,
// limit after skipping offset (as the messages list pages, with the next page in the Link
// header), each as GET …/executions/{execution_id}/ answers it: a reopened chat reads every
// turn's status, usage and stop reason in one request rather than one per turn.
func (h *runtimeHandlers) sessionExecutions(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeSessionRead); err != nil {
		return err
	}
	pg, err := pageWithin(r, DefaultSessionExecutionsLimit, MaxSessionExecutionsLimit, 1<<30)
	if err != nil {
		return err
	}
	sess, list, more, err := h.svc.SessionExecutions(r.Context(), principal(r), r.PathValue("session_id"), pg.limit, pg.offset)
	if err != nil {
		return err
	}
	out := make([]executionJSON, len(list))
	for i, x := range list {
		out[i] = executionView(x.Execution, sess, x.Messages)
	}
	enc, err := fitPage(out)
	if err != nil {
		return err
	}
	if len(enc) < len(out) {
		more = true
	}
	if more {
		setNext(w, r, pg.offset+len(enc), pg.limit)
	}
	writeJSON(w, http.StatusOK, sessionExecutionsPageJSON{Executions: enc, HasMore: more})
	return nil
}
