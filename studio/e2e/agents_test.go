package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// More of the contract's names (studio/README.md), for the agent editor's flows.
const (
	formatJSON, formatYAML    = "format-json", "format-yaml"
	versionRow, diffRow       = "version-row", "diff-row"
	versionLeft, versionRight = "version-left", "version-right"
)

// TestAgentVersions: an agent edited twice in the studio has three versions; comparing the first
// with the last shows the changed line side by side, each side in its version's words.
func TestAgentVersions(t *testing.T) {
	s := newStudio(t)
	s.createAgent(`{"name":"Brief","agent_type":"llm_agent","system_prompt":"Be brief."}`)
	s.signIn()
	s.click(navAgents)
	s.waitText(agentRow, "Brief", patience)
	if ok := s.eval(fmt.Sprintf(`(() => { const a = document.querySelector(%q); if (a) a.click(); return !!a })()`, tid(agentRow)+" a")); ok != true {
		s.fail("no link in %s", agentRow)
	}
	for i, prompt := range []string{"Be very brief.", "Be brief and kind."} {
		s.visible(versionRow)
		s.fill(agentConfig, fmt.Sprintf(`{"name":"Brief","agent_type":"llm_agent","system_prompt":%q}`, prompt))
		s.waitValid()
		s.click(agentSave)
		s.waitCount(versionRow, i+2, patience)
	}

	var versions []struct {
		VersionNumber string `json:"version_number"`
		SystemConfig  struct {
			SystemPrompt string `json:"system_prompt"`
		} `json:"system_config"`
	}
	agents := s.call("GET", "/api/v1/agent/", nil)
	var list []struct{ ID string }
	if err := json.Unmarshal(agents, &list); err != nil || len(list) != 1 {
		t.Fatalf("agents: %v %s", err, agents)
	}
	if err := json.Unmarshal(s.call("GET", "/api/v1/agent/"+list[0].ID+"/versions/", nil), &versions); err != nil {
		t.Fatal(err)
	}
	first, last := "", ""
	for _, v := range versions {
		switch v.SystemConfig.SystemPrompt {
		case "Be brief.":
			first = v.VersionNumber
		case "Be brief and kind.":
			last = v.VersionNumber
		}
	}
	if first == "" || last == "" {
		t.Fatalf("versions %+v lack the first or the last prompt", versions)
	}
	s.choose(versionLeft, first, false)
	s.choose(versionRight, last, false)
	s.visible(diffRow)
	rows, _ := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q), r => ({kind: r.dataset.kind, left: r.cells[0].textContent, right: r.cells[1].textContent}))`, tid(diffRow))).([]any)
	changed := 0
	for _, r := range rows {
		m, _ := r.(map[string]any)
		if m["kind"] == "same" {
			if m["left"] != m["right"] {
				t.Errorf("a row marked same differs: %v", m)
			}
			continue
		}
		changed++
		left, _ := m["left"].(string)
		right, _ := m["right"].(string)
		if m["kind"] != "change" || !strings.Contains(left, `"Be brief."`) || !strings.Contains(right, `"Be brief and kind."`) {
			t.Errorf("changed row %v, want the system_prompt line, v%s's words on the left and v%s's on the right", m, first, last)
		}
	}
	if changed != 1 {
		t.Errorf("%d changed rows, want 1 (the system prompt); rows %v", changed, rows)
	}
	s.report.Clean(t)
}

// TestAgentYAML: the editor switches to YAML (the JSON converted), shows a YAML syntax error and
// a validation error at its dotted field, converts back to JSON and again to YAML, and saves.
func TestAgentYAML(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navAgents)
	s.click(agentNew)
	s.fill(agentConfig, `{"name":"yamlbot","agent_type":"llm_agent","system_prompt":"Be brief.","llm_config":{"provider":"local","temperature":0.2}}`)
	s.click(formatYAML)
	s.waitFormat("yaml")
	if txt := s.value(agentConfig); !strings.Contains(txt, "name: yamlbot") || !strings.Contains(txt, "  temperature: 0.2") {
		t.Errorf("the configuration in YAML reads %q", txt)
	}

	s.fill(agentConfig, "name: yamlbot\nagent_type: [llm_agent\n")
	s.waitCheck("Not valid YAML")

	s.fill(agentConfig, "name: yamlbot\nagent_type: llm_agent\nsystem_prompt: Be brief.\nllm_config:\n  provider: local\n  temperature: 7\n")
	msg := s.waitText(fieldError, "between 0 and 2", patience)
	fields, _ := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.dataset.field)`, tid(fieldError))).([]any)
	if len(fields) != 1 || !strings.HasSuffix(fmt.Sprint(fields[0]), "llm_config.temperature") {
		t.Errorf("field errors at %v (%q), want llm_config.temperature", fields, msg)
	}

	s.fill(agentConfig, "name: yamlbot\nagent_type: llm_agent\nsystem_prompt: Be brief.\nllm_config:\n  provider: local\n  temperature: 0.5\n")
	s.waitValid()
	s.click(formatJSON)
	s.waitFormat("json")
	var back map[string]any
	if err := json.Unmarshal([]byte(s.value(agentConfig)), &back); err != nil {
		t.Fatalf("back in JSON the configuration does not parse: %v", err)
	}
	if llm, _ := back["llm_config"].(map[string]any); llm["temperature"] != 0.5 {
		t.Errorf("back in JSON the configuration is %v", back)
	}
	s.click(formatYAML)
	s.waitFormat("yaml")
	s.waitValid()
	s.click(agentSave)
	s.waitText(agentRow, "yamlbot", patience)
	var agents []struct {
		SystemConfig struct {
			LLM struct {
				Temperature float64 `json:"temperature"`
			} `json:"llm_config"`
		} `json:"system_config"`
	}
	if err := json.Unmarshal(s.call("GET", "/api/v1/agent/", nil), &agents); err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 || agents[0].SystemConfig.LLM.Temperature != 0.5 {
		t.Errorf("stored agents %+v, want yamlbot at temperature 0.5", agents)
	}
	s.report.Clean(t)
}

// value is the current value of an input or textarea.
func (s *studio) value(name string) string {
	s.t.Helper()
	v, _ := s.eval(fmt.Sprintf(`(document.querySelector(%q) || {}).value ?? null`, tid(name))).(string)
	return v
}

// waitFormat waits until the editor shows the configuration in format f (its data-format).
func (s *studio) waitFormat(f string) {
	s.t.Helper()
	s.do("wait for the editor in "+f, patience,
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`%s[data-format=%q]`, tid(agentConfig), f))))
}

// waitValid waits until the live check says the configuration is valid.
func (s *studio) waitValid() {
	s.t.Helper()
	s.waitCheck("The configuration is valid.")
}

// waitCheck waits until the live check's area holds want.
func (s *studio) waitCheck(want string) {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		got, _ := s.eval(`(document.getElementById("agent-check") || {}).textContent ?? ""`).(string)
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			s.fail("the editor's check says %q, want %q", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitCount waits until exactly n elements carry the data-testid.
func (s *studio) waitCount(name string, n int, d time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		got := len(s.texts(name))
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			s.fail("%d %s, want %d, after %s", got, name, n, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
