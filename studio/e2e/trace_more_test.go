package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/mcptest"
)

// TestTraceInsides: a react agent's call of an MCP tool that takes 300 ms, opened in its trace:
// each row opens to what its event carries (the tool's input and output, the model's answer,
// tokens, duration), the summary gives the execution's cost from its record, and the waterfall
// lays bars out by start time (the second model call after the tool's 300 ms) under a time axis.
// axe-core runs with rows open.
func TestTraceInsides(t *testing.T) {
	base := startMCP(t)
	s := newStudio(t)
	s.signIn()
	s.click(navSettings)
	s.fill(mcpName, "local")
	s.fill(mcpURL, base+mcptest.PathMCP)
	s.click(mcpRegister)
	s.waitText(mcpRow, "local", patience)
	key := s.createAgent(`{"name":"Sleeper","agent_type":"react_agent","system_prompt":"Use tools.",
		"llm_config":{"provider":"local","model":"dev"},
		"tools":[{"type":"mcp","server":"local","allowed_tools":["slow"]}]}`)
	s.openSession(key)
	s.fill(chatInput, `slow {"ms":300}`)
	s.click(chatSend)
	s.waitText(msgAssistant, "slept 300ms", patience)
	s.click(traceLink)
	s.waitText(traceEvent, "tool_result", patience)

	// Nothing is open until asked.
	if d := s.texts("trace-detail"); len(d) != 0 {
		t.Errorf("rows open before being asked: %q", d)
	}
	open := func(typ string) {
		t.Helper()
		js := fmt.Sprintf(`(() => { const b = document.querySelector('[data-type=%q] [data-testid="trace-open"]'); if (!b) return false; b.click(); return true })()`, typ)
		if s.eval(js) != true {
			t.Fatalf("no %s row to open", typ)
		}
	}
	open("tool_call")
	in := s.waitText("trace-input", "300", patience)
	if !strings.Contains(in, `"ms"`) {
		t.Errorf("the tool call's input %q does not show its arguments", in)
	}
	if got := s.eval(`document.querySelector('[data-type="tool_call"] [data-testid="trace-open"]').getAttribute("aria-expanded")`); got != "true" {
		t.Errorf("the opened row's button says aria-expanded=%v", got)
	}
	open("tool_result")
	s.waitText("trace-output", "slept 300ms", patience)
	open("model_call")
	facts := strings.Join(s.texts("trace-facts"), " | ")
	for _, want := range []string{"tokens: in ", "duration: ", "started: +"} {
		if !strings.Contains(facts, want) {
			t.Errorf("the open rows' facts %q lack %q", facts, want)
		}
	}
	outs := s.eval(`Array.from(document.querySelectorAll('[data-type="model_call"] [data-testid="trace-output"]'), e => e.textContent)`)
	if a, _ := outs.([]any); len(a) == 0 {
		t.Errorf("the first model call, opened, shows no output")
	}
	// The execution's cost (the local model's is 0) from its record.
	if c := s.waitText("trace-cost", "cost", patience); !strings.Contains(c, "$") && !strings.Contains(c, "unknown") {
		t.Errorf("the trace's cost %q gives no figure", c)
	}

	// Waterfall: bars start where their events started, in time order, under an axis whose last
	// tick is the whole span.
	raw := s.eval(`Array.from(document.querySelectorAll('[data-testid="trace-event"]'), li => {
  const b = li.querySelector('[data-testid="trace-bar"]'), tr = li.querySelector(".ev-track");
  return {Type: li.dataset.type, Start: +li.dataset.start, Left: b ? b.getBoundingClientRect().left - tr.getBoundingClientRect().left : -1,
    Width: b ? b.getBoundingClientRect().width : 0};
})`)
	rows, _ := raw.([]any)
	var starts []float64
	var models, tool, toolW []float64
	for _, r := range rows {
		m, _ := r.(map[string]any)
		start, _ := m["Start"].(float64)
		left, _ := m["Left"].(float64)
		starts = append(starts, start)
		switch m["Type"] {
		case "model_call":
			models = append(models, left)
		case "tool_result":
			tool = append(tool, left)
			w, _ := m["Width"].(float64)
			toolW = append(toolW, w)
		}
	}
	if len(models) < 2 || len(tool) != 1 {
		t.Fatalf("want two model calls and one tool result; rows: %v", rows)
	}
	// The tool starts after the first model call and the second call after the tool's end (a
	// pixel's slack for rounding).
	if !(models[0] <= tool[0] && tool[0]+toolW[0]-1 <= models[1] && models[1] > 0) {
		t.Errorf("bars are not laid out by start time: model at %v, tool at %v (%v wide), model at %v (px from the track's start)", models[0], tool[0], toolW[0], models[1])
	}
	if lo, hi := slices.Min(starts), slices.Max(starts); lo != 0 || hi < 300 {
		t.Errorf("event start offsets %v do not run from the trace's start (0) past the tool's 300 ms", starts)
	}
	ticks := s.texts("trace-tick")
	sum := s.texts(traceSummary)
	if len(ticks) != 5 || ticks[0] != "0 ms" || len(sum) != 1 || !strings.Contains(sum[0], " · "+ticks[4]+" · ") {
		t.Errorf("the time axis %q does not run from 0 to the summary's span (%q)", ticks, sum)
	}

	s.axe("trace with rows open")
	s.report.Clean(t)
}

// TestTraceRetrieval: an llm_agent's answer from a knowledge base, in its trace: the retrieval
// row opens to the query searched and the passages given to the model (file, chunk, score).
func TestTraceRetrieval(t *testing.T) {
	s := newStudio(t)
	key, kb := s.returnsHelper()
	s.signIn()
	s.openSession(key)
	s.askReturns()
	s.click(traceLink)
	s.waitText(traceEvent, "retrieval", patience)
	if s.eval(`(() => { const b = document.querySelector('[data-type="retrieval"] [data-testid="trace-open"]'); if (!b) return false; b.click(); return true })()`) != true {
		t.Fatal("no retrieval row to open")
	}
	s.waitText("trace-input", "send a purchase back", patience)
	if out := s.waitText("trace-output", "[1] file ", patience); !strings.Contains(out, "score ") || !strings.Contains(out, kb) {
		t.Errorf("the retrieval's passages %q do not give file, score and knowledge base", out)
	}
	s.axe("trace with the retrieval open")
	s.report.Clean(t)
}
