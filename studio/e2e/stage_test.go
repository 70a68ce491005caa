package e2e

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentorch/agentorch/infra/mcptest"
)

// stage is a company with something on every screen, built as a user would and visited in the
// studio: a knowledge base of the returns policy, an agent with a tool and that knowledge base
// (edited once, so it has two versions), a registered MCP server, a chat with a tool's row and a
// cited answer, and that chat's trace. Lighthouse and the screenshots are taken of it.
type stage struct {
	AgentID, AgentKey, KB string
	// The addresses (paths under the server) of its screens.
	Editor, Chat, Trace string
}

// supportAgent is the stage's agent, with its prompt (the second version changes it).
const supportAgent = `{"name":"Support","agent_type":"react_agent","system_prompt":%q,
	"llm_config":{"provider":"local"},"tools":["calculator"],
	"knowledge_bases":[{"name":"support","knowledge_base_type":"opensearch","knowledge_base_id":%q,
	"description":"The shop's returns policy"}]}`

// stage builds the stage in s's tab, signed in, and leaves the tab on the trace. mcpBase is the
// base URL of an MCP server to register (startMCP), or "" for none.
func (s *studio) stage(mcpBase string) stage {
	s.t.Helper()
	var st stage
	st.KB = s.completedKB("returns.txt", returnsPolicy)
	cfg := func(prompt string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(fmt.Sprintf(supportAgent, prompt, st.KB)), &m); err != nil {
			s.t.Fatal(err)
		}
		return map[string]any{"system_config": m}
	}
	a := s.api("POST", "/api/v1/agent/", cfg("Answer customers from the returns policy."))
	st.AgentKey, _ = a["agent_key"].(string)
	st.AgentID, _ = a["id"].(string)
	s.api("PUT", "/api/v1/agent/"+st.AgentID+"/", cfg("Answer customers from the returns policy; use the calculator for sums."))
	if mcpBase != "" {
		s.api("POST", "/api/v1/mcp-servers/", map[string]any{"name": "local", "url": mcpBase + mcptest.PathMCP})
	}
	s.signIn()
	s.waitText(agentRow, "Support", patience)
	if ok := s.eval(fmt.Sprintf(`(() => { const a = document.querySelector(%q); if (a) a.click(); return !!a })()`, tid(agentRow)+" a")); ok != true {
		s.fail("no link in %s", agentRow)
	}
	s.visible(agentSave)
	st.Editor = s.path()
	s.openSession(st.AgentKey)
	s.sendTimed(`calculator {"expression":"6*7"}`)
	s.waitText(msgAssistant, "Tool result: 42", patience)
	// A react_agent searches its knowledge bases with a tool: the turn has the search's row and
	// an answer citing the passage it found.
	s.sendTimed(`knowledge_base_search {"query":"How long do I have to send a purchase back?"}`)
	s.waitText(citation, "1", patience)
	s.visible(chatSend)
	st.Chat = s.path()
	s.click(traceLink)
	s.visible(traceSummary)
	s.waitText(traceEvent, "model_call", patience)
	st.Trace = s.path()
	return st
}

// path is the page's address without the server: its path and query.
func (s *studio) path() string {
	s.t.Helper()
	return strings.TrimPrefix(s.location(), s.base)
}
