package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentorch/agentorch/infra/mcptest"
)

// More of the contract's names (studio/README.md), for the flows below.
const (
	modeInline, inlineConfig             = "mode-inline", "inline-config"
	pendingCall, functionResult          = "pending-call", "function-result"
	functionSubmit                       = "function-submit"
	approveCall, denyCall, denyReason    = "approve", "deny", "deny-reason"
	mcpName, mcpURL, mcpRegister         = "mcp-name", "mcp-url", "mcp-register"
	mcpRow, mcpStatus, mcpTools, mcpTool = "mcp-row", "mcp-status", "mcp-tools", "mcp-tool"
	traceLink, traceEvent, traceSummary  = "trace-link", "trace-event", "trace-summary"
)

// TestFunctionCall: an inline configuration with a function tool pauses on the call; the chat
// shows the pending call, the user writes its result as JSON and sends it, and the run ends with
// an answer built on that result.
func TestFunctionCall(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navPlayground)
	s.click(modeInline)
	s.fill(inlineConfig, `{"name":"Client","agent_type":"react_agent","system_prompt":"Use tools.",
  "llm_config":{"provider":"local","model":"dev"},
  "tools":[{"type":"function","name":"lookup","parameters":{"type":"object","properties":{"word":{"type":"string"}}}}]}`)
	s.click(sessionOpen)
	s.fill(chatInput, `lookup {"word":"otter"}`)
	s.click(chatSend)
	call := s.waitText(pendingCall, "lookup", patience)
	if !strings.Contains(call, "otter") {
		t.Errorf("the pending call shows %q, without its arguments", call)
	}
	s.fill(functionResult, `{"meaning":"a river animal"}`)
	s.click(functionSubmit)
	s.waitText(msgAssistant, "river animal", patience)
	s.do("wait for the pending call to go", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(pendingCall))))
	s.report.Clean(t)
}

// TestApprovals: an MCP server registered in the settings shows its status and tools; an agent
// binding it with require_approval "always" pauses before each call; approved in the chat, the
// echo's result shows; denied with a reason, the denial and its reason show.
func TestApprovals(t *testing.T) {
	base := startMCP(t)
	s := newStudio(t)
	s.signIn()
	s.click(navSettings)
	s.fill(mcpName, "local")
	s.fill(mcpURL, base+mcptest.PathMCP)
	s.click(mcpRegister)
	s.waitText(mcpRow, "local", patience)
	if st := s.texts(mcpStatus); len(st) != 1 || st[0] != "active" {
		s.fail("the server's status reads %q, want active", st)
	}
	s.clickIn(mcpRow, "local", mcpTools)
	s.waitText(mcpTool, "echo", patience)

	key := s.createAgent(`{"name":"Careful","agent_type":"react_agent","system_prompt":"Use tools.",
		"llm_config":{"provider":"local","model":"dev"},
		"tools":[{"type":"mcp","server":"local","allowed_tools":["echo"],"require_approval":"always"}]}`)
	s.openSession(key)
	s.fill(chatInput, `echo {"message":"hi"}`)
	s.click(chatSend)
	s.waitText(pendingCall, "echo", patience)
	s.click(approveCall)
	s.waitText(toolCall, "echo approved", patience)
	s.waitText(msgAssistant, "Tool result: hi", patience)
	s.do("wait for the pending call to go", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(pendingCall))))

	s.fill(chatInput, `echo {"message":"again"}`)
	s.click(chatSend)
	s.waitText(pendingCall, "again", patience)
	s.fill(denyReason, "not on a Sunday")
	s.click(denyCall)
	s.waitText(toolCall, "echo denied", patience)
	s.waitText(toolCall, "not on a Sunday", patience)
	if answers := s.texts(msgAssistant); strings.Contains(answers[len(answers)-1], "Tool result: again") {
		t.Errorf("the denied call ran: %q", answers[len(answers)-1])
	}
	s.report.Clean(t)
}

// TestTrace: the trace of a run with a tool call, opened from the chat, draws the node, the
// model calls and the tool as bars with their durations, and the model calls' token usage.
func TestTrace(t *testing.T) {
	s := newStudio(t)
	key := s.createAgent(`{"name":"Calc","agent_type":"react_agent","system_prompt":"Use tools.","tools":["calculator"]}`)
	s.signIn()
	s.openSession(key)
	s.fill(chatInput, `calculator {"expression":"6*7"}`)
	s.click(chatSend)
	s.waitText(msgAssistant, "Tool result: 42", patience)
	s.click(traceLink)
	s.visible(traceSummary)
	s.waitText(traceEvent, "model_call", patience)

	raw := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q), li => {
  const b = li.querySelector('[data-testid="trace-bar"]');
  return {Type: li.dataset.type, Label: li.querySelector(".ev-label").textContent,
    MS: li.querySelector('[data-testid="trace-ms"]').textContent, Bar: !!b, Width: b ? b.getBoundingClientRect().width : 0};
})`, tid(traceEvent)))
	rows, _ := raw.([]any)
	seen := map[string]bool{}
	for _, r := range rows {
		m, _ := r.(map[string]any)
		typ, _ := m["Type"].(string)
		label, _ := m["Label"].(string)
		ms, _ := m["MS"].(string)
		hasBar, _ := m["Bar"].(bool)
		width, _ := m["Width"].(float64)
		switch typ {
		case "node_finished", "model_call", "tool_result":
			if !hasBar || width <= 0 || !strings.HasSuffix(ms, " ms") {
				t.Errorf("%s (%q) has no bar with a duration: bar %v, width %v, %q", typ, label, hasBar, width, ms)
			}
			seen[typ] = true
		}
		if typ == "model_call" && !strings.Contains(label, "tokens") {
			t.Errorf("a model call's row %q shows no token usage", label)
		}
		if typ == "tool_result" && !strings.Contains(label, "calculator") {
			t.Errorf("the tool's row %q does not name the calculator", label)
		}
	}
	for _, typ := range []string{"node_finished", "model_call", "tool_result"} {
		if !seen[typ] {
			t.Errorf("no %s bar in the timeline; rows: %v", typ, rows)
		}
	}
	if sum := s.texts(traceSummary); len(sum) != 1 || !strings.Contains(sum[0], "tokens in") {
		t.Errorf("the trace's summary %q gives no token total", sum)
	}
	s.report.Clean(t)
}
