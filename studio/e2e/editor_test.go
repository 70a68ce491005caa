package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The code editor's and the graph's names (studio/README.md).
const (
	editorError                     = "editor-error"
	agentGraph, graphNode, graphEdg = "agent-graph", "graph-node", "graph-edge"
)

// codeEditor is the selector of the agent editor once CodeMirror has replaced its textarea;
// CodeMirror is in its shadow root (cm is that root in the page's scripts).
var codeEditor = "code-editor" + tid(agentConfig)

// cm is JavaScript for the editor's shadow root (null while the textarea shows).
var cm = fmt.Sprintf(`(document.querySelector(%q) || {}).shadowRoot`, codeEditor)

// TestCodeEditor: the configuration's editor is CodeMirror, fetched only when an editor is first
// shown; it highlights JSON and YAML, takes the keyboard, and marks a broken text's error, and the
// API's field errors, at their lines (in the text and in a list of errors by line); axe-core finds
// nothing in the light and the dark theme.
func TestCodeEditor(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navAgents)
	s.listsLoaded()
	if got := s.chunks(); len(got) > 0 {
		t.Errorf("the editor's chunk was fetched before any editor was shown: %v", got)
	}
	s.click(agentNew)
	s.waitEditor()
	chunks := s.chunks()
	if len(chunks) != 1 {
		t.Fatalf("the editor's chunks fetched on opening the editor: %v, want one codeeditor-*.js", chunks)
	}
	// The weights as they travel (gzipped): the first script stays within 150 KB, the editor apart.
	first := s.eval(`document.querySelector('script[type="module"][src]').src`).(string)
	if n := s.gzipped(first); n > 150<<10 {
		t.Errorf("the first script is %d KB gzipped, more than 150 KB", n>>10)
	} else {
		t.Logf("first script %s: %.1f KB gzipped; the code editor's chunk: %.1f KB gzipped", first[strings.LastIndex(first, "/")+1:], float64(n)/1024, float64(s.gzipped(chunks[0]))/1024)
	}

	// Highlighting: names, strings and numbers in colours of their own.
	s.fill(agentConfig, `{"name":"hl","agent_type":"llm_agent","llm_config":{"provider":"local","temperature":0.5}}`)
	s.waitValid()
	s.highlighted("JSON", "tok-propertyName", "tok-string", "tok-number")

	// The keyboard edits it: typed at the end of the first line, the text is no longer JSON.
	s.eval(cm + `.querySelector(".cm-content").focus()`)
	s.do("type in the editor", patience, chromedp.KeyEvent(kb.End), chromedp.KeyEvent("x"))
	if v := s.value(agentConfig); !strings.HasSuffix(v, "x") {
		t.Errorf("after typing x at the end the text is %q", v)
	}
	s.waitCheck("Not valid JSON")

	// A broken JSON: the comma missing at the end of line 3 is reported at line 4's first key.
	s.fill(agentConfig, "{\n  \"name\": \"broken\",\n  \"agent_type\": \"llm_agent\"\n  \"system_prompt\": \"Be brief.\"\n}")
	s.waitCheck("Not valid JSON")
	s.markedAt(4, "")

	// The API's error at tools.1 is marked at the line of the second tool.
	s.fill(agentConfig, "{\n  \"name\": \"toolbot\",\n  \"agent_type\": \"react_agent\",\n  \"tools\": [\n    \"calculator\",\n    \"teleport\"\n  ]\n}")
	s.waitText(fieldError, "teleport", patience)
	s.markedAt(6, "tools.1")
	s.axe("the code editor with an error (light)")
	s.scheme(true)
	s.axe("the code editor with an error (dark)")
	s.scheme(false)

	// YAML: highlighted, a duplicate key marked at its line, then a temperature out of range at its own.
	s.fill(agentConfig, `{"name":"yamlbot","agent_type":"llm_agent","llm_config":{"provider":"local","temperature":0.2}}`)
	s.waitValid()
	s.click(formatYAML)
	s.waitFormat("yaml")
	s.highlighted("YAML", "tok-definition") // a YAML key: tok-propertyName tok-definition
	s.fill(agentConfig, "name: yamlbot\nagent_type: llm_agent\nname: again\n")
	s.waitCheck("Not valid YAML")
	s.markedAt(3, "")
	s.fill(agentConfig, "name: yamlbot\nagent_type: llm_agent\nllm_config:\n  provider: local\n  temperature: 7\n")
	s.waitText(fieldError, "between 0 and 2", patience)
	s.markedAt(5, "llm_config.temperature")
	s.shot("code-editor")
	s.axe("the YAML editor with a field error (light)")
	s.scheme(true)
	s.axe("the YAML editor with a field error (dark)")
	s.report.Clean(t)
}

// TestAgentGraph: a graph agent is drawn as its graph (its agents, start and end, the edges, the
// entry marked, and the same in words), and the drawing follows the configuration as it is edited.
func TestAgentGraph(t *testing.T) {
	s := newStudio(t)
	s.createAgent(`{"name":"Flow","entry_point":"plan","agents":[{"name":"plan","system_prompt":"Plan."},{"name":"write"},{"name":"check"}],
  "edges":[{"from":"__start__","to":"plan"},{"from":"plan","to":"write"},{"from":"plan","to":"check"},{"from":"write","to":"__end__"},{"from":"check","to":"__end__"}]}`)
	s.signIn()
	s.click(navAgents)
	s.openAgent("Flow")
	s.visible(agentGraph)
	s.graphIs([]string{"__start__", "plan", "write", "check", "__end__"}, []string{
		"__start__>plan", "plan>write", "plan>check", "write>__end__", "check>__end__"}, "plan")
	label, _ := s.eval(fmt.Sprintf(`document.querySelector(%q).getAttribute("aria-label")`, tid(agentGraph)+" svg")).(string)
	if !strings.Contains(label, "plan (entry)") || !strings.Contains(label, "plan to write") || !strings.Contains(label, "check to end") {
		t.Errorf("the graph's text alternative reads %q", label)
	}
	s.axe("a graph agent (light)")
	s.shot("agent-graph")

	// Edited: a review step between write and the end, and no edges: the agents in order.
	s.waitEditor()
	s.fill(agentConfig, `{"name":"Flow","agents":[{"name":"plan"},{"name":"write"},{"name":"review"}]}`)
	s.graphIs([]string{"__start__", "plan", "write", "review", "__end__"}, []string{
		"__start__>plan", "plan>write", "write>review", "review>__end__"}, "plan")
	// A loop back (which the validation refuses) is drawn as it is typed, not followed forever.
	s.fill(agentConfig, `{"name":"Flow","agents":[{"name":"plan"},{"name":"write"}],"edges":[{"from":"__start__","to":"plan"},{"from":"plan","to":"write"},{"from":"write","to":"plan"},{"from":"write","to":"__end__"}]}`)
	s.graphIs([]string{"__start__", "plan", "write", "__end__"}, []string{
		"__start__>plan", "plan>write", "write>plan", "write>__end__"}, "plan")
	s.waitText(fieldError, "cycle", patience)
	s.scheme(true)
	s.axe("a graph agent (dark)")
	// A flat agent has no graph.
	s.fill(agentConfig, `{"name":"Flat","agent_type":"llm_agent"}`)
	s.do("wait for the graph to go", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(agentGraph))))
	s.report.Clean(t)
}

// TestVersionsSaved: the editor holds what was saved, so saving it unchanged makes no version and
// a diff shows only what the user changed (not the defaults the service fills into the agent's
// record); the keys stay in the order the user wrote them after a create and a save, in the editor
// and in the diff, and after a reload too (the service keeps the order in the versions).
func TestVersionsSaved(t *testing.T) {
	s := newStudio(t)
	s.createAgent(`{"name":"Plain","system_prompt":"Hi."}`)
	s.signIn()
	s.click(navAgents)
	s.openAgent("Plain")
	s.waitEditor()
	if v := s.value(agentConfig); strings.Contains(v, "max_tokens") || strings.Contains(v, "agent_type") {
		t.Errorf("the editor shows the service's defaults, not what was saved: %s", v)
	}
	id := s.agentID("Plain")
	for range 2 {
		s.waitValid()
		s.saved(id)
	}
	s.waitCount(versionRow, 1, patience)
	if n := len(s.versions(id)); n != 1 {
		t.Errorf("saved twice unchanged, the agent has %d versions, want 1", n)
	}

	// Created in the studio with its keys in the user's order: they stay in it.
	ordered := `{"system_prompt":"Zebra first.","name":"Ordered","llm_config":{"temperature":0.3,"provider":"local"},"agent_type":"llm_agent"}`
	s.click(agentNew)
	s.waitEditor()
	s.fill(agentConfig, ordered)
	s.waitValid()
	s.click(agentSave)
	s.waitText(agentRow, "Ordered", patience)
	s.visible(versionRow)
	s.waitEditor()
	wantOrder := []string{`"system_prompt"`, `"name"`, `"llm_config"`, `"temperature"`, `"provider"`, `"agent_type"`}
	s.inOrder("the editor after the create", s.value(agentConfig), wantOrder)
	id = s.agentID("Ordered")
	s.fill(agentConfig, strings.Replace(ordered, "Zebra first.", "Zebra still first.", 1))
	s.waitValid()
	s.saved(id)
	s.waitCount(versionRow, 2, patience)
	s.saved(id) // unchanged: no third version
	s.inOrder("the editor after a save", s.value(agentConfig), wantOrder)
	vs := s.versions(id)
	if len(vs) != 2 {
		t.Fatalf("versions %v, want 2", vs)
	}
	diff := func(what string) {
		t.Helper()
		s.choose(versionLeft, vs[0], false)
		s.choose(versionRight, vs[1], false)
		s.visible(diffRow)
		rows, _ := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q), r => ({kind: r.dataset.kind, left: r.cells[0].textContent, right: r.cells[1].textContent}))`, tid(diffRow))).([]any)
		var left []string
		changed := 0
		for _, r := range rows {
			m, _ := r.(map[string]any)
			l, _ := m["left"].(string)
			left = append(left, l)
			if m["kind"] != "same" {
				changed++
				if right, _ := m["right"].(string); !strings.Contains(l, "Zebra first.") || !strings.Contains(right, "Zebra still first.") {
					t.Errorf("%s: changed row %v, want the system prompt", what, m)
				}
			}
		}
		if changed != 1 {
			t.Errorf("%s: %d changed rows, want 1 (the system prompt): %v", what, changed, rows)
		}
		s.inOrder(what, strings.Join(left, "\n"), wantOrder)
	}
	diff("the diff")
	s.axe("the versions' diff")

	// After a reload the studio remembers nothing of what it sent: the order is the service's, kept
	// in the versions' snapshots.
	s.do("reload", patience, chromedp.Reload())
	s.click(navAgents)
	s.openAgent("Ordered")
	s.waitEditor()
	s.inOrder("the editor after a reload", s.value(agentConfig), wantOrder)
	diff("the diff after a reload")
	s.axe("the versions' diff after a reload")
	s.report.Clean(t)
}

// chunks lists the code editor's scripts the page has fetched (its performance entries).
func (s *studio) chunks() []string {
	s.t.Helper()
	var out []string
	list, _ := s.eval(`performance.getEntriesByType("resource").map(e => e.name).filter(n => /\/assets\/codeeditor-[^/]*\.js$/.test(n))`).([]any)
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// gzipped is the size of a file of the studio as it travels to a browser that takes gzip.
func (s *studio) gzipped(url string) int {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport then leaves the body compressed
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "gzip" {
		s.t.Fatalf("GET %s: %d, Content-Encoding %q", url, res.StatusCode, res.Header.Get("Content-Encoding"))
	}
	return len(b)
}

// waitEditor waits until CodeMirror has replaced the textarea shown while it loads.
func (s *studio) waitEditor() {
	s.t.Helper()
	// The editor's chunk is fetched when the editor comes into view (it sits below the form).
	s.eval(fmt.Sprintf(`document.querySelector(%q).scrollIntoView()`, tid(agentConfig)))
	deadline := time.Now().Add(patience)
	for s.eval(`(() => { const c = `+cm+` && `+cm+`.querySelector(".cm-content"); return !!c && c.getBoundingClientRect().height > 0 })()`) != true {
		if time.Now().After(deadline) {
			s.fail("the code editor did not replace the textarea")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// highlighted fails unless the editor shows each token class, each in a colour of its own that is
// not the text's.
func (s *studio) highlighted(what string, classes ...string) {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		c, _ := s.eval(fmt.Sprintf(`(() => { const root = %s; if (!root) return null;
  const out = {text: getComputedStyle(root.querySelector(".cm-content")).color};
  for (const c of %s) { const e = root.querySelector("." + c); out[c] = e ? getComputedStyle(e).color : null }
  return out })()`, cm, mustJSON(classes))).(map[string]any)
		missing := ""
		seen := map[any]string{c["text"]: "text"}
		for _, cl := range classes {
			switch col := c[cl]; {
			case col == nil:
				missing = cl + " is not shown"
			case seen[col] != "":
				missing = fmt.Sprintf("%s has the colour of %s (%v)", cl, seen[col], col)
			default:
				seen[col] = cl
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			s.fail("%s is not highlighted: %s (%v)", what, missing, c)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// markedAt waits until the editor marks an error at line (of field, when given): in the list of
// errors by line and in the text itself, where the line holds an error range and its gutter a marker.
func (s *studio) markedAt(line int, field string) {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		m, _ := s.eval(fmt.Sprintf(`(() => {
  const marks = Array.from(document.querySelectorAll(%q), e => ({line: Number(e.dataset.line), field: e.dataset.field || "", text: e.textContent}));
  const root = %s;
  const l = root && root.querySelectorAll(".cm-line")[%d - 1];
  const gutter = root ? Array.from(root.querySelectorAll(".cm-gutter-lint .cm-gutterElement")).filter(g => g.querySelector(".cm-lint-marker-error")) : [];
  const top = l ? l.getBoundingClientRect().top : -1;
  return {marks, inLine: !!(l && l.querySelector(".cm-lintRange-error, .cm-lintPoint-error")),
    gutter: gutter.some(g => Math.abs(g.getBoundingClientRect().top - top) < 3)};
})()`, tid(editorError), cm, line)).(map[string]any)
		marks, _ := m["marks"].([]any)
		listed := false
		for _, x := range marks {
			mk, _ := x.(map[string]any)
			if mk["line"] == float64(line) && (field == "" || strings.HasSuffix(fmt.Sprint(mk["field"]), field)) {
				listed = true
			}
		}
		if listed && m["inLine"] == true && m["gutter"] == true {
			return
		}
		if time.Now().After(deadline) {
			s.fail("no error marked at line %d (field %q): listed %v, in the line %v, in its gutter %v", line, field, marks, m["inLine"], m["gutter"])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// openAgent opens the agent named name from the list.
func (s *studio) openAgent(name string) {
	s.t.Helper()
	s.waitText(agentRow, name, patience)
	n, _ := json.Marshal(name)
	if ok := s.eval(fmt.Sprintf(`(() => { const a = Array.from(document.querySelectorAll(%q)).find(a => a.textContent === %s); if (a) a.click(); return !!a })()`, tid(agentRow)+" a", n)); ok != true {
		s.fail("no agent %s in the list", name)
	}
	s.visible(versionRow)
}

// graphIs waits until the graph shows exactly these nodes and edges ("from>to"), entry marked.
func (s *studio) graphIs(nodes, edges []string, entry string) {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		g, _ := s.eval(fmt.Sprintf(`({nodes: Array.from(document.querySelectorAll(%q), n => n.dataset.name),
  edges: Array.from(document.querySelectorAll(%q), e => e.dataset.from + ">" + e.dataset.to),
  entry: Array.from(document.querySelectorAll(%q), n => n.dataset.name)})`, tid(graphNode), tid(graphEdg), tid(graphNode)+`[data-entry="true"]`)).(map[string]any)
		got := fmt.Sprint(g["nodes"]) + fmt.Sprint(g["edges"]) + fmt.Sprint(g["entry"])
		want := fmt.Sprint(nodes) + fmt.Sprint(edges) + fmt.Sprint([]string{entry})
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			s.fail("the graph shows %v, want nodes %v, edges %v, entry %s", g, nodes, edges, entry)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// agentID is the id of the agent named name, through the API.
func (s *studio) agentID(name string) string {
	s.t.Helper()
	var list []struct{ ID, Name string }
	if err := json.Unmarshal(s.call("GET", "/api/v1/agent/", nil), &list); err != nil {
		s.t.Fatal(err)
	}
	for _, a := range list {
		if a.Name == name {
			return a.ID
		}
	}
	s.t.Fatalf("no agent %s in %v", name, list)
	return ""
}

// versions lists an agent's version numbers, oldest first, through the API.
func (s *studio) versions(id string) []string {
	s.t.Helper()
	var vs []struct {
		N string `json:"version_number"`
	}
	if err := json.Unmarshal(s.call("GET", "/api/v1/agent/"+id+"/versions/", nil), &vs); err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.N)
	}
	return out
}

// saved clicks Save and waits until the service has the agent updated (updated_at moves on).
func (s *studio) saved(id string) {
	s.t.Helper()
	before, _ := s.api("GET", "/api/v1/agent/"+id+"/", nil)["updated_at"].(string)
	time.Sleep(10 * time.Millisecond) // updated_at has a resolution finer than this
	s.click(agentSave)
	deadline := time.Now().Add(patience)
	for {
		if now, _ := s.api("GET", "/api/v1/agent/"+id+"/", nil)["updated_at"].(string); now != before {
			break
		}
		if time.Now().After(deadline) {
			s.fail("the agent was not saved")
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.do("wait for the save to end", patience, chromedp.WaitEnabled(chromedp.CSS(tid(agentSave))))
}

// inOrder fails unless text holds the words in this order.
func (s *studio) inOrder(what, text string, words []string) {
	s.t.Helper()
	at := -1
	for _, w := range words {
		i := strings.Index(text, w)
		if i <= at {
			s.t.Errorf("%s: the keys are not in the order %v: %s", what, words, text)
			return
		}
		at = i
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
