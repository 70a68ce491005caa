package e2e

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestTraceCallCost: each model call's row of a trace shows what the call cost (its event's
// cost_usd): in its row's line and, opened, among its facts. A two-node agent whose nodes call a
// priced model makes two priced calls, whose costs are the price of their own tokens and add up
// to the execution's cost in the summary; an unpriced model's call says its cost is unknown, as
// the summary does. axe-core runs with a row open.
func TestTraceCallCost(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", fakeChat(t))
	// USD 1,000 and 2,000 per million tokens: a call's cost shows in four decimals.
	t.Setenv("MODEL_PRICES", `{"openai/priced-model":{"input_per_mtok":1000,"output_per_mtok":2000}}`)
	s := newStudio(t)
	node := func(name, model string) string {
		return fmt.Sprintf(`{"name":%q,"agent_type":"llm_agent","system_prompt":"Be brief.","llm_config":{"provider":"openai","model":%q}}`, name, model)
	}
	pair := s.createAgent(`{"name":"Pair","agents":[` + node("first", "priced-model") + `,` + node("second", "priced-model") + `]}`)
	house := s.createAgent(node("House", "house-model"))
	s.signIn()

	s.openSession(pair)
	s.fill(chatInput, "hello there")
	s.click(chatSend)
	s.waitText(msgAssistant, "Noted", patience)
	s.click(traceLink)
	s.waitText(traceEvent, "model_call", patience)
	summary := s.waitText("trace-cost", "$", patience)

	raw := s.eval(`Array.from(document.querySelectorAll('[data-testid="trace-event"][data-type="model_call"]'), li => {
  const m = li.querySelector('[data-testid="trace-open"]').textContent.match(/(\d+)→(\d+) tokens/);
  return {Label: li.querySelector('[data-testid="trace-open"]').textContent, Cost: li.dataset.cost ?? "", In: m ? +m[1] : -1, Out: m ? +m[2] : -1};
})`)
	rows, _ := raw.([]any)
	if len(rows) != 2 {
		t.Fatalf("want two model calls in the trace (one a node); rows %v", rows)
	}
	var sum float64
	for i, r := range rows {
		m, _ := r.(map[string]any)
		label, _ := m["Label"].(string)
		in, _ := m["In"].(float64)
		out, _ := m["Out"].(float64)
		cost, err := strconv.ParseFloat(fmt.Sprint(m["Cost"]), 64)
		if err != nil || in <= 0 || out <= 0 {
			t.Fatalf("call %d: row %q gives no cost (%q) or tokens", i+1, label, m["Cost"])
		}
		// The call's cost is its own tokens at the price, shown in its row's line.
		if want := (in*1000 + out*2000) / 1e6; math.Abs(cost-want) > 1e-12 {
			t.Errorf("call %d: cost %v, want %v for %v in, %v out", i+1, cost, want, in, out)
		}
		if shown := fmt.Sprintf("$%.4f", cost); !strings.Contains(label, shown) {
			t.Errorf("call %d: its row %q does not show its cost %s", i+1, label, shown)
		}
		sum += cost
	}
	// The calls' costs add up to the execution's, which the summary shows.
	usd, err := strconv.ParseFloat(fmt.Sprint(s.eval(`document.querySelector('[data-testid="trace-cost"]').dataset.usd`)), 64)
	if err != nil || math.Abs(usd-sum) > 1e-12 {
		t.Errorf("the summary's cost %v (%v), the calls' sum %v", usd, err, sum)
	}
	if shown := fmt.Sprintf("$%.4f", sum); !strings.Contains(summary, shown) {
		t.Errorf("the summary %q does not show the calls' sum %s", summary, shown)
	}

	// Opened, the first call's row lists its cost among its facts.
	if s.eval(`(() => { const b = document.querySelector('[data-type="model_call"] [data-testid="trace-open"]'); if (!b) return false; b.click(); return true })()`) != true {
		t.Fatal("no model call row to open")
	}
	first, _ := rows[0].(map[string]any)
	c, _ := strconv.ParseFloat(fmt.Sprint(first["Cost"]), 64)
	if facts := s.waitText("trace-facts", "cost: ", patience); !strings.Contains(facts, fmt.Sprintf("cost: $%.4f", c)) {
		t.Errorf("the opened call's facts %q do not give its cost $%.4f", facts, c)
	}
	s.axe("trace with a priced model call open")

	// A model without a price: its call's cost is unknown, as the execution's is.
	s.openSession(house)
	s.fill(chatInput, "hello")
	s.click(chatSend)
	s.waitText(msgAssistant, "Noted", patience)
	s.click(traceLink)
	label := s.waitText(traceEvent, "cost unknown", patience)
	if !strings.Contains(label, "model_call") {
		t.Errorf("the unpriced call's row %q", label)
	}
	if c := s.waitText("trace-cost", "unknown", patience); strings.Contains(c, "$") {
		t.Errorf("the unpriced execution's cost %q", c)
	}
	if n := s.eval(`document.querySelectorAll('[data-type="model_call"][data-cost]').length`); n != float64(0) {
		t.Errorf("%v unpriced calls carry a cost", n)
	}
	s.report.Clean(t)
}
