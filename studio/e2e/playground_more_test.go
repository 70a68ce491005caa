package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The names of the session rename and of a turn's figures (studio/README.md).
const (
	sessionRename, sessionTitleInput = "session-rename", "session-title-input"
	turnUsage                        = "turn-usage"
)

// pgTitles is what the earlier sessions' list calls each session, by id.
func (s *studio) pgTitles() map[string]string {
	s.t.Helper()
	raw := s.eval(fmt.Sprintf(`Object.fromEntries(Array.from(document.querySelectorAll(%q), r => {
  const a = r.querySelector(%q);
  return [r.dataset.id, a ? a.textContent.trim() : ""];
}))`, tid(sessionRow), tid(sessionLink)))
	out := map[string]string{}
	for k, v := range raw.(map[string]any) {
		out[k], _ = v.(string)
	}
	return out
}

// pgWaitTitles waits until the list calls the sessions as want does.
func (s *studio) pgWaitTitles(want map[string]string) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("the sessions titled %v", want), func() bool {
		got := s.pgTitles()
		for id, title := range want {
			if got[id] != title {
				return false
			}
		}
		return true
	})
}

// chatHeading is the open chat's heading ("Chat: <title or name>").
func (s *studio) chatHeading() string {
	v, _ := s.eval(`(() => { const c = document.querySelector(".chat"); const h = c && c.closest("section").querySelector("h2"); return h ? h.textContent : "" })()`).(string)
	return v
}

// waitFor polls ok until it holds, failing after patience with what.
func (s *studio) waitFor(what string, ok func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for !ok() {
		if time.Now().After(deadline) {
			s.fail("%s not reached within %v", what, patience)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPlaygroundRename: two sessions of one agent are told apart by the titles given in the
// list, one with the mouse, one with the keyboard alone (Enter opens the edit and saves it,
// Escape leaves it as it was and gives the focus back); the list and the open chat's heading
// show the titles, a reload keeps them (they are the API's), and an empty title takes one away.
func TestPlaygroundRename(t *testing.T) {
	s := newStudio(t)
	desk := s.createAgent(`{"name":"Desk","agent_type":"llm_agent","system_prompt":"Be brief."}`)
	s.signIn()
	s.openSession(desk)
	first := s.pgSessionID()
	s.openSession(desk)
	second := s.pgSessionID()
	s.pgWaitTitles(map[string]string{first: "Desk", second: "Desk"})

	// The mouse: Rename in the first's row, a title typed, Enter.
	s.clickIn(sessionRow, first[:8], sessionRename)
	s.visible(sessionTitleInput)
	if f := s.focused(); f != sessionTitleInput {
		t.Errorf("Rename put the focus on %q, want the title's input", f)
	}
	s.axe("the earlier sessions with a title being edited")
	s.fill(sessionTitleInput, "Refunds")
	s.keys(kb.Enter)
	s.pgWaitTitles(map[string]string{first: "Refunds", second: "Desk"})

	// Escape: the second's edit typed into and left; nothing changes, the focus is back on
	// its Rename button.
	s.clickIn(sessionRow, second[:8], sessionRename)
	s.visible(sessionTitleInput)
	s.keys("Nope")
	s.keys(kb.Escape)
	s.do("wait for the edit to close", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(sessionTitleInput))))
	for deadline := time.Now().Add(5 * time.Second); s.focused() != sessionRename && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if f, row := s.focused(), s.focusedRow(); f != sessionRename || row != second {
		t.Fatalf("after Escape the focus is on %q of the row %q (%v), want %q of %q", f, row,
			s.eval(`document.activeElement ? document.activeElement.outerHTML.slice(0, 200) : ""`), sessionRename, second)
	}
	if got := s.pgTitles()[second]; got != "Desk" {
		t.Errorf("Escape saved %q", got)
	}

	// The keyboard alone: Enter on the focused Rename, the title typed over the selection, Enter.
	s.keys(kb.Enter)
	s.visible(sessionTitleInput)
	s.keys("Shipping")
	s.keys(kb.Enter)
	s.pgWaitTitles(map[string]string{first: "Refunds", second: "Shipping"})
	// The open chat is the second's: its heading follows its title.
	s.waitFor("the chat's heading to say Shipping", func() bool { return s.chatHeading() == "Chat: Shipping" })
	for _, row := range s.texts(sessionRow) {
		if !strings.Contains(row, "Desk") {
			t.Errorf("a titled row no longer names its agent: %q", row)
		}
	}

	s.do("reload", patience, chromedp.Reload())
	s.visible(chatInput)
	s.pgWaitTitles(map[string]string{first: "Refunds", second: "Shipping"})
	if h := s.chatHeading(); h != "Chat: Shipping" {
		t.Errorf("after a reload the chat's heading is %q", h)
	}
	if got := s.api("GET", "/api/v1/sessions/"+first+"/", nil)["title"]; got != "Refunds" {
		t.Errorf("the API's title of the first session: %v", got)
	}

	// An empty title takes it away: the row is the agent's name again, the API's title null.
	s.clickIn(sessionRow, first[:8], sessionRename)
	s.fill(sessionTitleInput, "")
	s.click("session-title-save")
	s.pgWaitTitles(map[string]string{first: "Desk", second: "Shipping"})
	if v, ok := s.api("GET", "/api/v1/sessions/"+first+"/", nil)["title"]; !ok || v != nil {
		t.Errorf("the API's title after it was taken away: %v (present %v)", v, ok)
	}
	s.report.Clean(t)
}

// focusedRow is the session id of the row holding the focus ("" outside the list).
func (s *studio) focusedRow() string {
	v, _ := s.eval(`(() => { const r = document.activeElement && document.activeElement.closest("[data-testid=session-row]"); return r ? r.dataset.id : "" })()`).(string)
	return v
}

// fakeChat is an OpenAI-compatible chat completions endpoint serving a model that has no price:
// it answers "Noted: <the last user text>" and counts 10 input tokens a message of the request
// (so each turn's figure differs) and 7 output tokens.
func fakeChat(t *testing.T) string {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				last = fmt.Sprint(m.Content)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "Noted: " + last}}},
			"usage": map[string]any{"prompt_tokens": 10 * len(req.Messages), "completion_tokens": 7},
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// recordUsage is an execution's tokens and cost as its record gives them: the chat's line up to
// the cost, and the cost (nil when the record has none).
func (s *studio) recordUsage(sid, exec string) (tokens string, cost *float64) {
	s.t.Helper()
	x := s.api("GET", "/api/v1/runtime/"+sid+"/executions/"+exec+"/", nil)
	r, _ := x["result"].(map[string]any)
	md, _ := r["metadata"].(map[string]any)
	u, _ := md["usage"].(map[string]any)
	if u == nil {
		s.fail("the execution %s has no usage: %v", exec, x)
	}
	if c, ok := u["cost_usd"].(float64); ok {
		cost = &c
	}
	return fmt.Sprintf("tokens in %v, out %v · cost ", u["input_tokens"], u["output_tokens"]), cost
}

// sameUsage reports whether a turn's line says what its record does: the same tokens, and the
// cost unknown when the record has none, else the record's in dollars to the two significant
// digits (or four decimals) the chat shows.
func sameUsage(line, tokens string, cost *float64) bool {
	shown, ok := strings.CutPrefix(line, tokens)
	switch {
	case !ok:
		return false
	case cost == nil:
		return shown == "unknown (a model without a price)"
	case *cost == 0:
		return shown == "$0"
	}
	v, err := strconv.ParseFloat(strings.TrimPrefix(shown, "$"), 64)
	return err == nil && strings.HasPrefix(shown, "$") && math.Abs(v-*cost) <= *cost*0.05
}

// TestPlaygroundTurnUsage: each answered turn shows its tokens and cost as its execution's
// record gives them, "unknown" for a model without a price (an OpenAI-compatible model the
// price table lacks), dollars for one priced by MODEL_PRICES and $0 for the local model; reopened from the list and after a reload,
// the chat shows the same figures on the same turns.
func TestPlaygroundTurnUsage(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", fakeChat(t))
	t.Setenv("MODEL_PRICES", `{"openai/priced-model":{"input_per_mtok":1,"output_per_mtok":2}}`)
	s := newStudio(t)
	house := s.createAgent(`{"name":"House","agent_type":"llm_agent","system_prompt":"Be brief.","llm_config":{"provider":"openai","model":"house-model"}}`)
	priced := s.createAgent(`{"name":"Priced","agent_type":"llm_agent","system_prompt":"Be brief.","llm_config":{"provider":"openai","model":"priced-model"}}`)
	calc := s.createAgent(`{"name":"Calc","agent_type":"react_agent","system_prompt":"Use tools.","llm_config":{"provider":"local"},"tools":["calculator"]}`)
	s.signIn()

	s.openSession(house)
	houseID := s.pgSessionID()
	s.fill(chatInput, "first question")
	s.click(chatSend)
	s.waitText(msgAssistant, "Noted: first question", patience)
	s.chatSettled(2)
	s.fill(chatInput, "second question")
	s.click(chatSend)
	s.waitText(msgAssistant, "Noted: second question", patience)
	houseLive := s.chatSettled(4)
	// One model call a turn: 2 then 4 messages sent (the system prompt, the history, the
	// question), 10 tokens each; no price.
	want := []string{"tokens in 20, out 7 · cost unknown (a model without a price)", "tokens in 40, out 7 · cost unknown (a model without a price)"}
	s.checkUsage("live, the unpriced model's turns", houseID, houseLive, want)

	// A priced model: 20 tokens in at $1 and 7 out at $2 a million.
	s.openSession(priced)
	pricedID := s.pgSessionID()
	s.fill(chatInput, "a priced question")
	s.click(chatSend)
	s.waitText(msgAssistant, "Noted: a priced question", patience)
	pricedLive := s.chatSettled(2)
	s.checkUsage("live, the priced model's turn", pricedID, pricedLive, []string{"tokens in 20, out 7 · cost $0.000034"})

	s.openSession(calc)
	calcID := s.pgSessionID()
	s.fill(chatInput, `calculator {"expression":"6*7"}`)
	s.click(chatSend)
	s.waitText(msgAssistant, "Tool result: 42", patience)
	calcLive := s.chatSettled(2)
	if u := calcLive[1].Usage; !strings.HasSuffix(u, "· cost $0") || strings.HasPrefix(u, "tokens in 0,") {
		t.Errorf("live, the local model's turn shows %q, want its tokens and a cost of $0", u)
	}
	s.checkUsage("live, the local model's turn", calcID, calcLive, nil)
	s.axe("the chat with each turn's tokens and cost")

	s.pgReopen(houseID)
	s.waitText(msgAssistant, "Noted: second question", patience)
	if got := s.chatSettled(4); !reflect.DeepEqual(got, houseLive) {
		t.Errorf("reopened, the unpriced model's session shows\n%+v\nlive it showed\n%+v", got, houseLive)
	}
	s.pgReopen(pricedID)
	s.waitText(msgAssistant, "Noted: a priced question", patience)
	if got := s.chatSettled(2); !reflect.DeepEqual(got, pricedLive) {
		t.Errorf("reopened, the priced model's session shows\n%+v\nlive it showed\n%+v", got, pricedLive)
	}
	s.pgReopen(calcID)
	s.waitText(msgAssistant, "Tool result: 42", patience)
	if got := s.chatSettled(2); !reflect.DeepEqual(got, calcLive) {
		t.Errorf("reopened, the local model's session shows\n%+v\nlive it showed\n%+v", got, calcLive)
	}
	s.do("reload", patience, chromedp.Reload())
	s.waitText(msgAssistant, "Tool result: 42", patience)
	if got := s.chatSettled(2); !reflect.DeepEqual(got, calcLive) {
		t.Errorf("after a reload the session shows\n%+v\nlive it showed\n%+v", got, calcLive)
	}
	s.report.Clean(t)
}

// checkUsage holds each answer's figures to its execution's record (named by its Trace link)
// and, when want is given, to want in order; user turns show none.
func (s *studio) checkUsage(what, sid string, chat []turnView, want []string) {
	s.t.Helper()
	var got []string
	for _, m := range chat {
		if m.Role != msgAssistant {
			if m.Usage != "" {
				s.t.Errorf("%s: a user turn shows figures %q", what, m.Usage)
			}
			continue
		}
		exec := m.Trace[strings.LastIndex(m.Trace, "/")+1:]
		if tokens, cost := s.recordUsage(sid, exec); !sameUsage(m.Usage, tokens, cost) {
			s.t.Errorf("%s: a turn shows %q, its execution's record says %q and a cost of %v", what, m.Usage, tokens, cost)
		}
		got = append(got, m.Usage)
	}
	if want != nil && !reflect.DeepEqual(got, want) {
		s.t.Errorf("%s: figures %q, want %q", what, got, want)
	}
}
