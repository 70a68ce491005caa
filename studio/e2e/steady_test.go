package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// flowAgent is a graph agent, so its editor shows the graph beside the code editor.
const flowAgent = `{"name":"Flow","entry_point":"plan","agents":[{"name":"plan","system_prompt":"Plan."},{"name":"write"},{"name":"check"}],
  "edges":[{"from":"__start__","to":"plan"},{"from":"plan","to":"write"},{"from":"plan","to":"check"},{"from":"write","to":"__end__"},{"from":"check","to":"__end__"}]}`

// TestSteady (issue 29: no layout shift over 0.1 on any screen): every main screen of the studio,
// opened by address with every API request 300 ms slow and holding what a working company has (the
// stage: a knowledge base, agents with versions, a chat with a tool's row and a cited answer, its
// trace; a graph agent; another agent's run; a webhook with a delivery, usage, keys, the audit
// log), keeps its cumulative layout shift at or under 0.1 as it loads (each figure logged), and is
// axe-clean loaded: the agents, an agent's editor (the form and the code editor) and a graph
// agent's (with its graph), the playground's sessions and a reopened chat, the runs and a trace,
// settings, and the Operations screens (webhooks, a webhook's deliveries, usage, limits, audit).
func TestSteady(t *testing.T) {
	s := newStudio(t)
	s.asAdmin()
	rcv := &receiver{status: opsDelivered}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	hook, _ := s.api("POST", "/api/v1/webhooks/", map[string]any{"url": srv.URL + opsReceiverPath, "events": []string{opsWebhookEvent}})["id"].(string)
	var flow map[string]any
	if err := json.Unmarshal([]byte(flowAgent), &flow); err != nil {
		t.Fatal(err)
	}
	flowID, _ := s.api("POST", "/api/v1/agent/", map[string]any{"system_config": flow})["id"].(string)
	if code := s.runAgent(s.createAgent(opsAgentConfig)); code != http.StatusOK {
		t.Fatalf("execute: %d", code)
	}
	rcv.wait(t, 1)
	st := s.stage("")

	// A selector matching once both parts of a screen show.
	both := func(a, b string) string { return "main:has(" + a + ") " + b }
	for _, sc := range []struct{ path, what, sel string }{
		{"/studio/agents", "Agents", tid(agentRow)},
		{st.Editor, "an agent's editor", both(tid(agentConfig), tid(agentSave))},
		{"/studio/agents/" + flowID, "a graph agent's editor", both(tid(agentConfig), tid(graphNode))},
		{"/studio/playground", "Playground › sessions", tid(sessionRow)},
		{st.Chat, "Playground › a reopened chat", both(tid(sessionRow), tid(citation))},
		{"/studio/traces", "Traces", tid("traces-row")},
		{st.Trace, "a trace", tid(traceEvent)},
		{"/studio/settings", "Settings", tid(keyRow)},
		{"/studio/ops/webhooks", "Operations › Webhooks", tid(hookRow)},
		{"/studio/ops/webhooks/" + hook, "Operations › a webhook's deliveries", tid(deliveryRow)},
		{"/studio/ops/usage", "Operations › Usage and cost", tid(usageRow)},
		{"/studio/ops/limits", "Operations › Limits", tid(limitsKeyRow)},
		{"/studio/ops/audit", "Operations › Audit log", tid(auditRow)},
	} {
		s.steady(sc.what, sc.path, sc.sel)
	}
	s.report.Clean(t)
}
