package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentorch/agentorch/infra/mcptest"
)

// The playground's names for the tests below (studio/README.md).
const (
	sessionRow, sessionLink             = "session-row", "session-link"
	sessionDelete, sessionDeleteConfirm = "session-delete", "session-delete-confirm"
	chatStop, turnStopped, traceBack    = "chat-stop", "turn-stopped", "trace-back"
	thumbsUpName, msgUser               = "thumbs-up", "msg-user"
)

// turnView is what one message of the chat shows: enough to tell a reopened session from the
// live one.
type turnView struct {
	Role     string
	Text     string
	Tools    []string
	Cites    int
	Trace    string
	Thumbs   bool
	Spinning int
	Usage    string // the answered turn's tokens and cost (turn-usage)
}

// pgChat returns what every message of the chat shows, in order.
func (s *studio) pgChat() []turnView {
	s.t.Helper()
	raw := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll('%s, %s'), a => {
  const md = a.querySelector('.md, .plain');
  const tr = a.querySelector('[data-testid="trace-link"]');
  const us = a.querySelector('[data-testid="turn-usage"]');
  return {Role: a.dataset.testid, Text: md ? md.innerText.trim() : "",
    Tools: Array.from(a.querySelectorAll('[data-testid="tool-call"]'), t => t.innerText.trim()),
    Cites: a.querySelectorAll('[data-testid="citation"]').length,
    Trace: tr ? tr.getAttribute("href") : "",
    Thumbs: !!a.querySelector('[data-testid="thumbs-up"]'),
    Spinning: a.querySelectorAll('[role="status"]').length, Usage: us ? us.innerText.trim() : ""};
})`, tid(msgAssistant), tid(msgUser)))
	b, _ := json.Marshal(raw)
	var out []turnView
	if err := json.Unmarshal(b, &out); err != nil {
		s.fail("read the chat: %v", err)
	}
	return out
}

// chatSettled waits until the chat has n messages and none of them spins, and returns them.
func (s *studio) chatSettled(n int) []turnView {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		v := s.pgChat()
		spinning := 0
		for _, m := range v {
			spinning += m.Spinning
		}
		if len(v) == n && spinning == 0 {
			return v
		}
		if time.Now().After(deadline) {
			s.fail("the chat does not settle with %d messages within %v: %+v", n, patience, v)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pgWaitURL waits until the page's address holds want.
func (s *studio) pgWaitURL(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		if l := s.location(); strings.Contains(l, want) {
			return l
		}
		if time.Now().After(deadline) {
			s.fail("the address %q does not hold %q within %v", s.location(), want, patience)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pgSessionID is the open session's id, from the address.
func (s *studio) pgSessionID() string {
	s.t.Helper()
	l := s.pgWaitURL("session=")
	return l[strings.Index(l, "session=")+len("session="):]
}

// statusOf is the HTTP status the API answers method path with, called with the test's key.
func (s *studio) statusOf(method, path string) int {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("x-api-key", s.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// pgReopen goes to the bare playground and opens the session sid from the earlier sessions.
func (s *studio) pgReopen(sid string) {
	s.t.Helper()
	s.click(navPlayground)
	s.do("wait for the chat to close", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(chatInput))))
	s.clickIn(sessionRow, sid[:8], sessionLink)
	s.visible(chatInput)
}

// TestPlaygroundURL: the open session is in the address: going to a run's trace and back, and
// reloading the page, return to the same chat.
func TestPlaygroundURL(t *testing.T) {
	s := newStudio(t)
	key := s.createAgent(`{"name":"Calc","agent_type":"react_agent","system_prompt":"Use tools.","tools":["calculator"]}`)
	s.signIn()
	s.openSession(key)
	sid := s.pgSessionID()
	s.fill(chatInput, `calculator {"expression":"6*7"}`)
	s.click(chatSend)
	s.waitText(msgAssistant, "Tool result: 42", patience)
	live := s.chatSettled(2)

	s.click(traceLink)
	s.pgWaitURL("/studio/trace/" + sid + "/")
	s.visible(traceSummary)
	s.click(traceBack)
	s.pgWaitURL("session=" + sid)
	s.waitText(msgAssistant, "Tool result: 42", patience)
	if back := s.chatSettled(2); !reflect.DeepEqual(back, live) {
		t.Errorf("back from the trace the chat shows\n%+v\nlive it showed\n%+v", back, live)
	}

	s.do("reload", patience, chromedp.Reload())
	s.waitText(msgAssistant, "Tool result: 42", patience)
	if got := s.chatSettled(2); !reflect.DeepEqual(got, live) {
		t.Errorf("after a reload the chat shows\n%+v\nlive it showed\n%+v", got, live)
	}
	if l := s.location(); !strings.Contains(l, "session="+sid) {
		t.Errorf("after a reload the address is %q", l)
	}
	s.report.Clean(t)
}

// TestPlaygroundReopen: a session reopened from the list shows what it showed live: the tool
// rows and Trace link of a tool call, the retrieval row, citations and Trace link of an answer
// from a knowledge base.
func TestPlaygroundReopen(t *testing.T) {
	s := newStudio(t)
	helper, _ := s.returnsHelper()
	calc := s.createAgent(`{"name":"Calc","agent_type":"react_agent","system_prompt":"Use tools.","tools":["calculator"]}`)
	s.signIn()

	s.openSession(calc)
	calcID := s.pgSessionID()
	s.fill(chatInput, `calculator {"expression":"6*7"}`)
	s.click(chatSend)
	s.waitText(msgAssistant, "Tool result: 42", patience)
	s.chatSettled(2)
	s.fill(chatInput, `calculator {"expression":"2+3"}`)
	s.click(chatSend)
	s.waitText(msgAssistant, "Tool result: 5", patience)
	calcLive := s.chatSettled(4)

	s.openSession(helper)
	helperID := s.pgSessionID()
	s.askReturns()
	helperLive := s.chatSettled(2)

	for _, m := range calcLive {
		if m.Role == msgAssistant && (len(m.Tools) == 0 || m.Trace == "" || !m.Thumbs || !strings.HasPrefix(m.Usage, "tokens in ")) {
			t.Errorf("live, an answer lacks its tool rows, trace link, thumbs or tokens and cost: %+v", m)
		}
	}
	if a := helperLive[1]; a.Cites == 0 || a.Trace == "" || len(a.Tools) == 0 {
		t.Errorf("live, the answer from the knowledge base lacks citations, trace link or retrieval row: %+v", a)
	}

	s.pgReopen(calcID)
	s.waitText(msgAssistant, "Tool result: 5", patience)
	if got := s.chatSettled(4); !reflect.DeepEqual(got, calcLive) {
		t.Errorf("reopened, the calculator's session shows\n%+v\nlive it showed\n%+v", got, calcLive)
	}
	s.pgReopen(helperID)
	s.waitText(citation, "1", patience)
	if got := s.chatSettled(2); !reflect.DeepEqual(got, helperLive) {
		t.Errorf("reopened, the helper's session shows\n%+v\nlive it showed\n%+v", got, helperLive)
	}
	s.click(citation)
	s.waitText(citationPassage, "thirty days", patience)
	s.report.Clean(t)
}

// TestPlaygroundAnswered: once a function call is answered, the turn that paused on it no longer
// spins nor offers thumbs on an empty bubble, live and reopened; only the answer has thumbs.
func TestPlaygroundAnswered(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navPlayground)
	s.click(modeInline)
	s.fill(inlineConfig, `{"name":"Client","agent_type":"react_agent","system_prompt":"Use tools.",
  "llm_config":{"provider":"local","model":"dev"},
  "tools":[{"type":"function","name":"lookup","parameters":{"type":"object","properties":{"word":{"type":"string"}}}}]}`)
	s.click(sessionOpen)
	sid := s.pgSessionID()
	s.fill(chatInput, `lookup {"word":"otter"}`)
	s.click(chatSend)
	s.waitText(pendingCall, "lookup", patience)
	waiting := s.chatSettled(2)
	if len(waiting[1].Tools) == 0 || !strings.Contains(waiting[1].Tools[0], "waits for you") || waiting[1].Thumbs {
		t.Errorf("the paused turn shows %+v, want its call waiting for the user and no thumbs", waiting[1])
	}
	s.fill(functionResult, `{"meaning":"a river animal"}`)
	s.click(functionSubmit)
	s.waitText(msgAssistant, "river animal", patience)
	live := s.chatSettled(3)
	check := func(when string, v []turnView) {
		paused, answer := v[1], v[2]
		if paused.Thumbs || paused.Spinning > 0 || len(paused.Tools) == 0 || strings.Contains(paused.Tools[0], "waits") {
			t.Errorf("%s, the answered paused turn shows %+v", when, paused)
		}
		if !answer.Thumbs || !strings.Contains(answer.Text, "river animal") {
			t.Errorf("%s, the answer shows %+v", when, answer)
		}
	}
	check("live", live)
	s.pgReopen(sid)
	s.waitText(msgAssistant, "river animal", patience)
	got := s.chatSettled(3)
	check("reopened", got)
	if !reflect.DeepEqual(got, live) {
		t.Errorf("reopened, the session shows\n%+v\nlive it showed\n%+v", got, live)
	}
	if n := len(s.texts(thumbsUpName)); n != 1 {
		t.Errorf("%d thumbs-up in the chat, want 1 (the answer's)", n)
	}
	s.report.Clean(t)
}

// TestPlaygroundStop: Stop, while an MCP tool sleeps, cancels the running execution: the turn
// says so and the API reports the execution cancelled.
func TestPlaygroundStop(t *testing.T) {
	s := newStudio(t)
	key := s.sleepyAgent()
	s.signIn()
	s.openSession(key)
	sid := s.pgSessionID()
	s.fill(chatInput, `slow {"ms":55000}`)
	s.click(chatSend)
	s.waitText(toolCall, "slow", patience)
	s.click(chatStop)
	start := time.Now()
	s.waitText(turnStopped, "Stopped", patience)
	t.Logf("stopped %v after the click", time.Since(start).Round(time.Millisecond))
	s.do("wait for Stop to go", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(chatStop))))
	href := s.pgChat()[1].Trace
	eid := href[strings.LastIndex(href, "/")+1:]
	if eid == "" {
		s.fail("the stopped turn has no trace link: %+v", s.pgChat())
	}
	ex := s.api("GET", "/api/v1/runtime/"+sid+"/executions/"+eid+"/", nil)
	if st, _ := json.Marshal(ex["status"]); string(st) != `"cancelled"` {
		t.Errorf("the execution's status is %s, want cancelled: %v", st, ex)
	}
	s.report.Clean(t)
}

// TestPlaygroundSessions: two sessions of one agent are told apart in the list by their short
// ids; one is deleted there (asked twice), and the API no longer has it.
func TestPlaygroundSessions(t *testing.T) {
	s := newStudio(t)
	key := s.createAgent(`{"name":"Twin","agent_type":"react_agent","system_prompt":"Be brief."}`)
	s.signIn()
	s.openSession(key)
	first := s.pgSessionID()
	s.click(navPlayground)
	s.do("wait for the chat to close", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(chatInput))))
	s.openSession(key)
	s.pgWaitURL("session=")
	second := s.pgSessionID()
	if first == second {
		t.Fatalf("two opens gave one session %s", first)
	}
	s.waitText(sessionRow, second[:8], patience)
	rows := s.waitText(sessionRow, first[:8], patience)
	if !strings.Contains(rows, "Twin") {
		t.Errorf("the row %q does not name the agent", rows)
	}
	all := s.texts(sessionRow)
	if len(all) != 2 || all[0] == all[1] {
		t.Errorf("the two sessions' rows read %q: not told apart", all)
	}
	s.clickIn(sessionRow, first[:8], sessionDelete)
	s.clickIn(sessionRow, first[:8], sessionDeleteConfirm)
	deadline := time.Now().Add(patience)
	for len(s.texts(sessionRow)) != 1 {
		if time.Now().After(deadline) {
			s.fail("the deleted session stays listed: %q", s.texts(sessionRow))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if l := s.texts(sessionRow); !strings.Contains(l[0], second[:8]) {
		t.Errorf("the wrong session went: %q left", l)
	}
	if code := s.statusOf("GET", "/api/v1/sessions/"+first+"/"); code != 404 {
		t.Errorf("GET the deleted session: %d, want 404", code)
	}
	s.report.Clean(t)
}

// TestPlaygroundApprovalReopen: a session whose MCP call was approved, then another denied with
// a reason, reopened from the list, shows the paused turns, the approval and the denial with its
// reason, and the answers, as it showed them live.
func TestPlaygroundApprovalReopen(t *testing.T) {
	base := startMCP(t)
	s := newStudio(t)
	s.api("POST", "/api/v1/mcp-servers/", map[string]any{"name": "local", "url": base + mcptest.PathMCP})
	key := s.createAgent(`{"name":"Careful","agent_type":"react_agent","system_prompt":"Use tools.",
		"llm_config":{"provider":"local","model":"dev"},
		"tools":[{"type":"mcp","server":"local","allowed_tools":["echo"],"require_approval":"always"}]}`)
	s.signIn()
	s.openSession(key)
	sid := s.pgSessionID()
	s.fill(chatInput, `echo {"message":"hi"}`)
	s.click(chatSend)
	s.waitText(pendingCall, "echo", patience)
	s.click(approveCall)
	s.waitText(msgAssistant, "Tool result: hi", patience)
	s.do("wait for the pending call to go", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(pendingCall))))
	s.chatSettled(3)
	s.fill(chatInput, `echo {"message":"again"}`)
	s.click(chatSend)
	s.waitText(pendingCall, "again", patience)
	s.fill(denyReason, "not on a Sunday")
	s.click(denyCall)
	s.waitText(toolCall, "not on a Sunday", patience)
	live := s.chatSettled(6)

	s.pgReopen(sid)
	s.waitText(toolCall, "not on a Sunday", patience)
	if got := s.chatSettled(6); !reflect.DeepEqual(got, live) {
		t.Errorf("reopened, the session shows\n%+v\nlive it showed\n%+v", got, live)
	}
	s.report.Clean(t)
}

// sleepyAgent registers infra/mcptest's server (started for the test) and creates a react agent
// that may call only its slow tool, for a turn that runs as long as the message asks; it returns
// the agent's key.
func (s *studio) sleepyAgent() string {
	s.t.Helper()
	base := startMCP(s.t)
	s.api("POST", "/api/v1/mcp-servers/", map[string]any{"name": "local", "url": base + mcptest.PathMCP, "timeout_ms": 60000})
	return s.createAgent(`{"name":"Sleepy","agent_type":"react_agent","system_prompt":"Use tools.",
		"llm_config":{"provider":"local","model":"dev"},
		"tools":[{"type":"mcp","server":"local","allowed_tools":["slow"]}]}`)
}
