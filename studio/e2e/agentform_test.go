package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/mcptest"
)

// The agent form's data-testid names (studio/README.md).
const (
	formName, formType, formPrompt, formStale = "form-name", "form-type", "form-prompt", "form-stale"
	formProvider, formModel, formUnavailable  = "form-provider", "form-model", "form-model-unavailable"
	formParamError, formFieldError            = "form-param-error", "form-field-error"
	formVariable, formVariableName            = "form-variable", "form-variable-name"
	formFnName, formFnParams, formFnError     = "form-fn-name", "form-fn-parameters", "form-fn-error"
	formMemory, formMemoryTopK                = "form-memory", "form-memory-topk"
	formBlockLabel                            = "form-memory-block-label"
)

// TestAgentForm builds a react agent with the form alone (a model from the deployment's catalog,
// its parameters held to their limits, a built-in tool, an MCP server's tool needing approval, a
// function tool with a checked schema, a knowledge base picked by name, a prompt variable,
// memory with a block whose bad label the server refuses at its field), saves it, and checks
// that the saved configuration has exactly those fields; reopened, the form shows them; broken
// JSON keeps the form and its values; an agent whose provider this deployment cannot run shows
// it as such; a graph is edited node by node, the rest kept.
func TestAgentForm(t *testing.T) {
	// An OpenAI-compatible endpoint makes the catalog offer openai and its models (nothing calls it).
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	base := startMCP(t)
	s := newStudio(t)
	s.api("POST", "/api/v1/mcp-servers/", map[string]any{"name": "local", "url": base + mcptest.PathMCP})
	kb := s.completedKB("returns.txt", returnsPolicy) // named "Support"
	s.signIn()
	s.click(navAgents)
	s.click(agentNew)

	s.fill(formName, "Form bot")
	s.choose(formType, "react_agent", false)
	s.fill(formPrompt, "Answer questions about")
	s.fill(formVariableName, "topic")
	s.click("form-variable-add")
	s.waitText(formVariable, "topic", patience)

	// The model: the catalog's providers and, for openai, exactly its models.
	catalog := s.api("GET", "/api/v1/agent/catalog/", nil)
	var openai map[string]any
	for _, p := range catalog["providers"].([]any) {
		if p := p.(map[string]any); p["name"] == "openai" {
			openai = p
		}
	}
	if openai == nil {
		t.Fatalf("the catalog offers no openai with OPENAI_BASE_URL set: %v", catalog["providers"])
	}
	s.choose(formProvider, "openai", false)
	s.choose(formModel, "gpt-4.1-nano", false)
	var want []string
	for _, m := range openai["models"].([]any) {
		want = append(want, m.(string))
	}
	if got := s.options(formModel); !cmp.Equal(got[1:], want) || got[0] != "" {
		t.Errorf("model options %q, want the provider's default then the catalog's %q", got, want)
	}
	s.fill("form-param-temperature", "3")
	s.waitText(formParamError, "between 0 and 2", patience)
	s.fill("form-param-temperature", "0.3")
	s.waitCount(formParamError, 0, patience)
	s.fill("form-param-max_tokens", "512")

	// Tools: current_time instead of the template's calculator; the MCP server's echo with approval.
	s.clickSel(`[data-testid="form-builtin"][data-name="calculator"]`)
	s.clickSel(`[data-testid="form-builtin"][data-name="current_time"]`)
	s.clickSel(`[data-testid="form-mcp-server"][data-name="local"] [data-testid="form-mcp-use"]`)
	s.clickSel(`[data-testid="form-mcp-tool"][data-name="echo"] [data-testid="form-mcp-approval"]`)
	s.click("form-fn-add")
	s.fill(formFnName, "lookup_order")
	s.fill(formFnParams, `{"type":"object","properties":{"order_id":`)
	s.waitText(formFnError, "Not valid JSON", patience)
	s.fill(formFnParams, `{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)
	s.waitCount(formFnError, 0, patience)
	s.clickSel(fmt.Sprintf(`[data-testid="form-kb"][data-id=%q]`, kb))

	// Memory, with a label the server refuses at its field, then a good one.
	s.click(formMemory)
	s.click("form-memory-block-add")
	s.fill(formBlockLabel, "Persona!")
	msg := s.waitText(formFieldError, "lowercase", patience)
	if f := s.eval(fmt.Sprintf(`document.querySelector(%q).dataset.field`, tid(formFieldError))); f != "system_config.memory.blocks.0.label" {
		t.Errorf("the label's error (%q) is at %v", msg, f)
	}
	s.fill(formBlockLabel, "persona")
	s.fill(formMemoryTopK, "3")
	s.click("form-memory-extract")
	s.waitValid()
	s.axe("the agent form, filled")
	s.click(agentSave)
	s.waitText(agentRow, "Form bot", patience)

	wantCfg := map[string]any{
		"name": "Form bot", "agent_type": "react_agent",
		"system_prompt": "Answer questions about {{ variables.topic }}",
		"llm_config":    map[string]any{"provider": "openai", "model": "gpt-4.1-nano", "temperature": 0.3, "max_tokens": 512.0},
		"tools": []any{"current_time",
			map[string]any{"type": "mcp", "server": "local", "require_approval": map[string]any{"always": []any{"echo"}}},
			map[string]any{"type": "function", "name": "lookup_order", "parameters": map[string]any{"type": "object",
				"properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []any{"order_id"}}}},
		"knowledge_bases": []any{map[string]any{"name": "Support", "knowledge_base_type": "opensearch", "knowledge_base_id": kb}},
		"memory":          map[string]any{"blocks": []any{map[string]any{"label": "persona"}}, "recall": map[string]any{"top_k": 3.0}, "extract": map[string]any{}},
	}
	var agents []map[string]any
	if err := json.Unmarshal(s.call("GET", "/api/v1/agent/", nil), &agents); err != nil || len(agents) != 1 {
		t.Fatalf("agents %v: %v", agents, err)
	}
	id := agents[0]["id"].(string)
	saved := s.api("GET", "/api/v1/agent/"+id+"/versions/current/", nil)["system_config"]
	if diff := cmp.Diff(wantCfg, saved); diff != "" {
		t.Errorf("saved configuration (-want +got):\n%s", diff)
	}

	// Reopened, the form shows what was saved.
	s.click(navPlayground)
	s.click(navAgents)
	s.openAgentRow("Form bot")
	s.waitValue(formName, "Form bot")
	for name, want := range map[string]string{formType: "react_agent", formProvider: "openai", formModel: "gpt-4.1-nano",
		"form-param-temperature": "0.3", "form-param-max_tokens": "512", formFnName: "lookup_order", formBlockLabel: "persona", formMemoryTopK: "3"} {
		s.waitValue(name, want)
	}
	s.waitText(formVariable, "topic", patience)
	for _, sel := range []string{`[data-testid="form-builtin"][data-name="current_time"]`, `[data-testid="form-mcp-tool"][data-name="echo"] [data-testid="form-mcp-approval"]`,
		fmt.Sprintf(`[data-testid="form-kb"][data-id=%q]`, kb), tid(formMemory), tid("form-memory-extract")} {
		s.waitChecked(sel, true)
	}
	s.waitChecked(`[data-testid="form-builtin"][data-name="calculator"]`, false)
	s.waitChecked(`[data-testid="form-mcp-tool"][data-name="slow"] [data-testid="form-mcp-approval"]`, false)

	// Broken JSON: the form says so and keeps its values, read-only.
	s.fill(agentConfig, `{"name":"Form bot","agent_type":`)
	s.visible(formStale)
	if v := s.value(formName); v != "Form bot" {
		t.Errorf("with broken JSON the name reads %q", v)
	}
	s.waitChecked(`[data-testid="form-builtin"][data-name="current_time"]`, true)
	s.waitValue(formModel, "gpt-4.1-nano")
	if d := s.eval(fmt.Sprintf(`document.querySelector(%q).closest("fieldset").disabled`, tid(formName))); d != true {
		t.Errorf("with broken JSON the form is editable (disabled %v)", d)
	}
	s.axe("the agent form with broken JSON")

	// A provider the deployment cannot run is shown as such, not dropped.
	s.createAgent(`{"name":"Elsewhere","agent_type":"llm_agent","llm_config":{"provider":"vertex","model":"gemini-2.5-pro"}}`)
	s.click(navPlayground)
	s.click(navAgents)
	s.openAgentRow("Elsewhere")
	s.waitText(formUnavailable, "cannot run the provider “vertex”", patience)
	s.waitValue(formProvider, "vertex")
	s.waitValue(formModel, "gemini-2.5-pro")
	s.axe("the agent form of an unavailable provider")

	// A graph is edited node by node; the other nodes and the top level stay as they were.
	s.fill(agentConfig, `{"name":"Flow","agents":[{"name":"plan","system_prompt":"Plan."},{"name":"write","x_note":1}],"edges":[{"from":"__start__","to":"plan"},{"from":"plan","to":"write"}],"entry_point":"plan"}`)
	s.choose("form-node", "write", true)
	s.waitValue(formPrompt, "")
	s.fill(formPrompt, "Write it.")
	s.clickSel(`[data-testid="form-builtin"][data-name="calculator"]`)
	var flow map[string]any
	deadline := time.Now().Add(patience)
	for {
		_ = json.Unmarshal([]byte(s.value(agentConfig)), &flow)
		if nodes, _ := flow["agents"].([]any); len(nodes) == 2 && nodes[1].(map[string]any)["tools"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the graph's second node was not changed: %v", flow)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wantFlow := map[string]any{"name": "Flow", "entry_point": "plan",
		"agents": []any{map[string]any{"name": "plan", "system_prompt": "Plan."},
			map[string]any{"name": "write", "x_note": 1.0, "system_prompt": "Write it.", "tools": []any{"calculator"}}},
		"edges": []any{map[string]any{"from": "__start__", "to": "plan"}, map[string]any{"from": "plan", "to": "write"}}}
	if diff := cmp.Diff(wantFlow, flow); diff != "" {
		t.Errorf("the graph after the form's edits (-want +got):\n%s", diff)
	}
	s.report.Clean(t)
}

// options are the option values of a select.
func (s *studio) options(name string) []string {
	s.t.Helper()
	var out []string
	arr, _ := s.eval(fmt.Sprintf(`Array.from(document.querySelector(%q).options, o => o.value)`, tid(name))).([]any)
	for _, v := range arr {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// clickSel clicks the element of a CSS selector once it is there and enabled.
func (s *studio) clickSel(sel string) {
	s.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e || e.disabled) return false; e.click(); return true })()`, sel)
	deadline := time.Now().Add(patience)
	for s.eval(js) != true {
		if time.Now().After(deadline) {
			s.fail("no enabled %s within %v", sel, patience)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitChecked waits until the checkbox of a CSS selector is there and checked (or not).
func (s *studio) waitChecked(sel string, want bool) {
	s.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.checked : null })()`, sel)
	deadline := time.Now().Add(patience)
	for {
		got := s.eval(js)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			s.fail("%s checked %v, want %v", sel, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// openAgentRow opens the agent of the list whose row holds name.
func (s *studio) openAgentRow(name string) {
	s.t.Helper()
	v, _ := json.Marshal(name)
	js := fmt.Sprintf(`(() => { const r = Array.from(document.querySelectorAll(%q)).find(r => r.textContent.includes(%s)); const a = r && r.querySelector("a"); if (!a) return false; a.click(); return true })()`, tid(agentRow), v)
	deadline := time.Now().Add(patience)
	for s.eval(js) != true {
		if time.Now().After(deadline) {
			s.fail("no agent row holding %q within %v; the rows hold %q", name, patience, s.texts(agentRow))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
