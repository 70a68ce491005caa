package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// The traces list's data-testid names (studio/README.md).
const (
	navTraces                            = "nav-traces"
	tracesAgent, tracesStatus, tracesRng = "traces-agent", "traces-status", "traces-range"
	tracesRow, tracesOpen, tracesEmpty   = "traces-row", "traces-open", "traces-empty"
	tracesClear                          = "traces-clear"
)

// TestTracesList: the Traces screen lists the signed-in key's runs newest first, of two agents
// with one failed, each with its agent, status, human time and duration, tokens and cost; it says
// what to do while there are none; the agent and status filters narrow it and stay in the address
// (a reload keeps them); a filter matching nothing offers to clear them; a row opens its trace.
// axe-core runs on each state in the light and the dark scheme, and the dark scheme paints the
// list with its own colours.
func TestTracesList(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navTraces)
	s.waitText(tracesEmpty, "No runs yet", patience)
	s.oneH1("the traces screen", "Traces")
	s.axeBoth("the empty traces list")

	alpha := s.createAgent(`{"name":"Alpha","agent_type":"llm_agent","system_prompt":"Be brief.","llm_config":{"provider":"local","model":"dev"}}`)
	beta := s.createAgent(`{"name":"Beta","agent_type":"llm_agent","system_prompt":"Be kind.","llm_config":{"provider":"local","model":"dev"}}`)
	run := func(agentKey, content string) (sid, agentID string) {
		from := s.api("GET", "/api/v1/sessions/from-agent/?agent_key="+agentKey, nil)
		sid, agentID = from["session_id"].(string), from["agent_id"].(string)
		s.api("POST", "/api/v1/runtime/"+sid+"/execute/", map[string]any{"content": content})
		return sid, agentID
	}
	run(alpha, "first")
	alphaSid, _ := run(alpha, "second")
	betaSid, betaID := run(beta, "third")
	// A run of Beta that failed, recorded as the worker records one.
	now := time.Now().UTC()
	failed := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: betaSid, Status: domain.ExecFailed, Events: []map[string]any{},
		Error: "The model failed", ErrorType: "api_error", CreatedAt: now, CompletedAt: &now, DurationMS: 1234,
		Company: "acme", Owner: "alice", AgentID: betaID, AgentName: "Beta"}
	if err := s.app.Store.PutExecution(context.Background(), failed); err != nil {
		t.Fatal(err)
	}

	s.do("open the traces list", patience, chromedp.Navigate(s.base+"/studio/traces"))
	s.count("all runs", tid(tracesRow), 4)
	rows := s.texts(tracesRow)
	if len(rows) == 4 {
		if !strings.Contains(rows[0], "Beta") || !strings.Contains(rows[0], "Failed") || !strings.Contains(rows[0], "The model failed") ||
			!strings.Contains(rows[0], "1.2 s") {
			t.Errorf("the newest row %q: want Beta's failed run with its error and 1.2 s", rows[0])
		}
		if !strings.Contains(rows[3], "Alpha") || !strings.Contains(rows[3], "Completed") || !strings.Contains(rows[3], "just now") ||
			!strings.Contains(rows[3], "$0") || !strings.Contains(rows[3], "ms") {
			t.Errorf("the oldest row %q: want Alpha's completed run, just now, in ms, costing $0", rows[3])
		}
	}

	s.choose(tracesAgent, "Beta", true)
	s.count("Beta's runs", tid(tracesRow), 2)
	s.choose(tracesStatus, "failed", false)
	s.count("Beta's failed run", tid(tracesRow)+`[data-status="failed"]`, 1)
	s.count("Beta's failed run alone", tid(tracesRow), 1)
	if loc := s.location(); !strings.Contains(loc, "agent="+betaID) || !strings.Contains(loc, "status=failed") {
		t.Errorf("the filters are not in the address %s", loc)
	}
	s.do("reload", patience, chromedp.Reload())
	s.count("the filtered list after a reload", tid(tracesRow)+`[data-status="failed"]`, 1)
	if v := s.eval(`[document.querySelector('[data-testid="traces-agent"]').value, document.querySelector('[data-testid="traces-status"]').value]`); v == nil ||
		v.([]any)[0] != betaID || v.([]any)[1] != "failed" {
		t.Errorf("after a reload the filters read %v", v)
	}
	s.axeBoth("the filtered traces list")

	s.choose(tracesStatus, "cancelled", false)
	s.waitText(tracesEmpty, "No runs match", patience)
	s.axeBoth("a traces list matching nothing")
	s.click(tracesClear)
	s.count("all runs again", tid(tracesRow), 4)
	if loc := s.location(); !strings.HasSuffix(loc, "/studio/traces") {
		t.Errorf("clearing the filters left the address at %s", loc)
	}

	// Dark mode: the list is painted with the dark scheme's colours, not fixed ones.
	s.scheme(true)
	dark := s.eval(`(() => { const r = document.querySelector('[data-testid="traces-row"] td'); const c = document.querySelector(".card");
  return [getComputedStyle(r).color, getComputedStyle(c).backgroundColor] })()`)
	s.scheme(false)
	light := s.eval(`(() => { const r = document.querySelector('[data-testid="traces-row"] td'); const c = document.querySelector(".card");
  return [getComputedStyle(r).color, getComputedStyle(c).backgroundColor] })()`)
	if d, l := dark.([]any), light.([]any); d[0] == l[0] || d[1] == l[1] || lum(d[0].(string)) < lum(l[0].(string)) || lum(d[1].(string)) > lum(l[1].(string)) {
		t.Errorf("dark %v against light %v: want light text on a dark card", d, l)
	}

	// A row opens its run's trace.
	s.choose(tracesAgent, "Alpha", true)
	s.count("Alpha's runs", tid(tracesRow), 2)
	s.click(tracesOpen)
	s.waitText(traceEvent, "model_call", patience)
	if loc := s.location(); !strings.Contains(loc, "/studio/trace/"+alphaSid+"/") {
		t.Errorf("the newest of Alpha's runs opened %s, not a trace of session %s", loc, alphaSid)
	}
	s.waitText(traceSummary, "tokens in", patience)
}
