package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// returnsPolicy is the knowledge the knowledge-base tests ingest and search.
const returnsPolicy = "Returns policy. Anything bought in our shop may be sent back within thirty days of delivery for a full refund. Items must be unused and in their original packaging."

// TestSignIn: the studio asks for a key, exchanges it for a token kept out of localStorage and
// out of the address, and forgets it on sign-out (a reload asks again).
func TestSignIn(t *testing.T) {
	s := newStudio(t)
	t.Logf("first usable screen: the sign-in form is visible %s after the navigation to /studio/ (fresh profile, nothing cached; the page's own clock says %.0f ms)",
		s.ready.Round(time.Millisecond), s.eval(`performance.now()`))
	if boot := s.eval(`document.body.innerText.includes("Loading the studio")`); boot != false {
		t.Errorf("the loading line is still shown beside the sign-in form")
	}
	s.signIn()
	if n := s.eval(`localStorage.length`); n != float64(0) {
		t.Errorf("localStorage holds %v items: the token must live in memory or sessionStorage", n)
	}
	href, _ := s.eval(`location.href`).(string)
	if strings.Contains(href, s.key) || strings.Contains(strings.ToLower(href), "token") {
		t.Errorf("the address holds a credential: %s", href)
	}
	stored, _ := s.eval(`JSON.stringify(Object.assign({}, sessionStorage))`).(string)
	if strings.Contains(stored, s.key) {
		t.Errorf("sessionStorage holds the API key itself, not a token: %s", stored)
	}
	s.click(signout)
	s.visible(signinKey)
	s.do("reload", patience, chromedp.Reload())
	s.visible(signinKey)
	s.report.Clean(t)
}

// TestAgentEditor: a configuration with an unknown tool shows the error at its dotted field
// while it is typed (through /agent/validate/); once fixed the error goes and the agent saves.
func TestAgentEditor(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navAgents)
	s.click(agentNew)
	s.fill(agentConfig, `{"name":"toolbot","agent_type":"react_agent","tools":["calculator","teleport"]}`)
	msg := s.waitText(fieldError, "teleport", patience)
	fields, _ := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.dataset.field)`, tid(fieldError))).([]any)
	found := false
	for _, f := range fields {
		if f, _ := f.(string); strings.HasSuffix(f, "tools.1") {
			found = true
		}
	}
	if !found {
		t.Errorf("field errors are at %v, want tools.1 (message %q)", fields, msg)
	}

	s.fill(agentConfig, `{"name":"toolbot","agent_type":"react_agent","tools":["calculator"]}`)
	s.do("wait for the field errors to go", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(fieldError))))
	s.click(agentSave)
	s.waitText(agentRow, "toolbot", patience)
	var agents []struct {
		Name         string         `json:"name"`
		SystemConfig map[string]any `json:"system_config"`
	}
	if err := json.Unmarshal(s.call("GET", "/api/v1/agent/", nil), &agents); err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 || agents[0].Name != "toolbot" || fmt.Sprint(agents[0].SystemConfig["tools"]) != "[calculator]" {
		t.Errorf("stored agents %+v, want toolbot with the calculator alone", agents)
	}
	s.report.Clean(t)
}

// TestChatToolCall: in the playground a react_agent with the calculator answers through the
// streaming execute; the tool call is shown, then the answer with its result. It logs how long
// the first streamed event and the first streamed token take to show.
func TestChatToolCall(t *testing.T) {
	s := newStudio(t)
	key := s.createAgent(`{"name":"Calc","agent_type":"react_agent","system_prompt":"Use tools.","tools":["calculator"]}`)
	s.signIn()

	requests := chromedp.Events(s.tab, network.RequestWillBeSent)
	s.openSession(key)
	first, text := s.sendTimed(`calculator {"expression":"2+2"}`)
	s.waitText(toolCall, "calculator", patience)
	s.waitText(msgAssistant, "Tool result: 4", patience)
	t.Logf("chat with a tool call (local model): the tool call shows %s after Send, the first token of the answer %s", first, text)

	_, text = s.sendTimed("Hello there")
	s.waitText(msgAssistant, "You said: Hello there", patience)
	t.Logf("chat (local model): the first streamed token shows %s after Send", text)

	ctx, cancel := context.WithTimeout(s.tab, 5*time.Second)
	defer cancel()
	streamed := false
	for ev, err := range requests {
		if err != nil || ctx.Err() != nil {
			break
		}
		if u := ev.Request.URL; strings.Contains(u, "/execute/") && strings.Contains(u, "stream=true") {
			streamed = true
			break
		}
	}
	if !streamed {
		t.Error("the chat did not call execute with ?stream=true")
	}
	s.report.Clean(t)
}

// TestKnowledge: a file uploaded through the file input (Knowledge › Files), put in a new
// collection (› Collections), a knowledge base created from that collection (› Knowledge bases)
// whose screen opens and whose status reaches completed there, then a search that finds the
// passage.
func TestKnowledge(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navKnowledge)
	path := filepath.Join(t.TempDir(), "returns.txt")
	if err := os.WriteFile(path, []byte(returnsPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	s.do("choose the file", patience, chromedp.SetUploadFiles(chromedp.CSS(tid(uploadInput)), []string{path}))
	s.waitText(uploadRow, "uploaded", patience)
	s.waitText(fileRow, "returns.txt", patience)

	s.click(knowledgeCollections)
	s.fill(collectionName, "Policies")
	s.clickIn(collectionFile, "returns.txt", "")
	s.click(collectionCreate)
	s.waitText(collectionRow, "Policies", patience)
	s.click(knowledgeBases)
	s.choose(kbCollection, "Policies", true)
	s.fill(kbName, "Support")
	s.click(kbCreate)
	// The new knowledge base's screen opens, and follows its run.
	s.waitStatus("completed", 3*time.Minute)
	s.waitText(kbCounts, "1/1 files ingested, 1 chunks", patience)

	s.fill(searchInput, "How long may I send a purchase back?")
	s.do("press Enter in the search box", patience, chromedp.SendKeys(chromedp.CSS(tid(searchInput)), "\r"))
	s.waitText(searchResult, "thirty days", patience)
	s.report.Clean(t)
}

// waitStatus waits until the knowledge base shown has the status want (its data-status, exactly:
// "partially_completed" is not "completed"), failing early when it settles on another.
func (s *studio) waitStatus(want string, d time.Duration) {
	s.t.Helper()
	js := fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.status || ""`, tid(kbStatus))
	deadline := time.Now().Add(d)
	for {
		got, _ := s.eval(js).(string)
		switch got {
		case want:
			return
		case "failed", "partially_completed", "error":
			s.fail("the knowledge base is %s, want %s; the page says %q", got, want, s.texts(kbStatus))
		}
		if time.Now().After(deadline) {
			s.fail("the knowledge base is %q after %s, want %s", got, d, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCitation: an answer from a knowledge base shows numbered citations; one opens the passage
// it cites.
func TestCitation(t *testing.T) {
	s := newStudio(t)
	key, _ := s.returnsHelper()
	s.signIn()
	s.openSession(key)
	s.askReturns()
	s.click(citation)
	s.waitText(citationPassage, "thirty days", patience)
	s.report.Clean(t)
}

// TestKeys: a key created in the settings shows its secret once, and the secret works; revoked
// in the settings (asked twice), it no longer does.
func TestKeys(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navSettings)
	name := fmt.Sprintf("ci-%d", time.Now().UnixNano())
	s.fill(keyName, name)
	s.click(keyCreate)
	s.visible(keySecret)
	secret := strings.TrimSpace(s.texts(keySecret)[0])
	if code := s.status(secret); code != http.StatusOK {
		t.Fatalf("the new key's secret %q answers %d, want 200", secret, code)
	}
	s.waitText(keyRow, name, patience)

	s.clickIn(keyRow, name, keyRevoke)
	s.clickIn(keyRow, name, keyRevokeConfirm)
	deadline := time.Now().Add(patience)
	for s.status(secret) != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			s.fail("the revoked key still authenticates 20s after the revoke was confirmed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := s.status(s.key); code != http.StatusOK {
		t.Errorf("the studio's own key answers %d after revoking another", code)
	}
	s.report.Clean(t)
}

// TestXSS: a message and file names that hold HTML are shown as text: no script runs (no
// dialog), nothing had to be blocked by the CSP, and no element carries an event handler.
func TestXSS(t *testing.T) {
	s := newStudio(t)
	key := s.createAgent(`{"name":"Echo","agent_type":"llm_agent","system_prompt":"Echo."}`)
	s.signIn()
	s.openSession(key)
	s.fill(chatInput, `<img src=x onerror=alert(1)> and <script>alert(2)</script>`)
	s.click(chatSend)
	// Shown as what the model said, not as markup.
	s.waitText(msgAssistant, "You said: <img src=x onerror=alert(1)> and <script>alert(2)</script>", patience)

	s.click(navKnowledge)
	added := s.eval(fmt.Sprintf(`(() => {
  const input = document.querySelector(%q);
  if (!input) return false;
  const dt = new DataTransfer();
  dt.items.add(new File(["x"], "<script>alert(3)</script>.txt", {type: "text/plain"}));
  dt.items.add(new File(["y"], "<img src=x onerror=alert(4)>.txt", {type: "text/plain"}));
  input.files = dt.files;
  input.dispatchEvent(new Event("change", {bubbles: true}));
  return true;
})()`, tid(uploadInput)))
	if added != true {
		s.fail("no %s", uploadInput)
	}
	s.waitText(fileRow, "onerror=alert(4)", patience)
	s.waitText(fileRow, "script>.txt", patience)
	time.Sleep(500 * time.Millisecond) // an image's error handler runs after its load fails

	if d := s.report.Dialogs(); len(d) > 0 {
		t.Errorf("a payload ran: %q", d)
	}
	if v := s.report.CSPViolations(); len(v) > 0 {
		t.Errorf("the page put markup where the CSP had to stop it (it should be text or sanitized): %q", v)
	}
	if n := s.eval(`document.querySelectorAll("[onerror],[onload],[onclick]").length`); n != float64(0) {
		t.Errorf("%v elements carry inline event handlers", n)
	}
	if n := s.eval(`Array.from(document.scripts).filter(e => e.textContent.includes("alert(")).length`); n != float64(0) {
		t.Errorf("%v script elements hold a payload", n)
	}
	// A sanitized <img src=x> may still fail to load; that is no script running.
	for _, e := range s.report.ConsoleErrors() {
		if !strings.Contains(e, "Failed to load resource") {
			t.Errorf("console error: %s", e)
		}
	}
}

// status answers the status of an authenticated GET of the agents list with key.
func (s *studio) status(key string) int {
	s.t.Helper()
	req, err := http.NewRequest("GET", s.base+"/api/v1/agent/", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}
