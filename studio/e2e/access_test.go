package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

const signinReason = "signin-reason"

// TestPhoneWidth: at a phone's viewport (390×844) every screen fits the width: nothing makes the
// page scroll sideways.
func TestPhoneWidth(t *testing.T) {
	s := newStudio(t)
	key := s.createAgent(`{"name":"Calc","agent_type":"react_agent","system_prompt":"Use tools.","tools":["calculator"]}`)
	s.do("set a phone's viewport", patience, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	s.fits("the sign-in screen")
	s.signIn()
	for _, nav := range []string{navAgents, navPlayground, navKnowledge, navSettings} {
		s.click(nav)
		s.do("wait for "+nav+"'s screen", patience, chromedp.WaitNotPresent(chromedp.CSS(".spinner")))
		s.fits(nav)
	}
	s.click(navAgents)
	s.click(agentNew)
	s.visible(agentConfig)
	s.fits("the new agent's editor")
	s.openSession(key)
	s.fill(chatInput, `calculator {"expression":"2+2"}`)
	// In one column the earlier sessions sit above the chat: wait until their list has loaded,
	// so that Send does not move between the moment it is found and the click.
	s.do("wait for the lists to load", patience, chromedp.WaitNotPresent(chromedp.CSS(".spinner")))
	s.click(chatSend)
	s.waitText(msgAssistant, "Tool result: 4", patience)
	s.fits("the chat")
	s.click(traceLink)
	s.waitText(traceEvent, "model_call", patience)
	s.fits("the trace")
	s.report.Clean(t)
}

// fits fails unless the page is no wider than the viewport.
func (s *studio) fits(what string) {
	s.t.Helper()
	m, _ := s.eval(`({scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
  wide: Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5)
    .map(e => e.tagName.toLowerCase() + (e.dataset.testid ? "[" + e.dataset.testid + "]" : "") + "." + e.className)})`).(map[string]any)
	scroll, _ := m["scroll"].(float64)
	inner, _ := m["inner"].(float64)
	if inner != 390 {
		s.fail("%s: the viewport is %v wide, want 390", what, inner)
	}
	if scroll > inner {
		s.t.Errorf("%s scrolls sideways at a phone's width: %v px wide in a %v px viewport; too wide: %v", what, scroll, inner, m["wide"])
	}
}

// TestKeyboard: with the keyboard alone (Tab, arrows, Enter, typing) a user signs in, opens a
// playground session on an inline configuration and sends a message with Ctrl+Enter.
func TestKeyboard(t *testing.T) {
	s := newStudio(t)
	s.tabTo(signinKey, 5)
	s.keys(s.key)
	s.keys(kb.Enter)
	s.visible(navAgents)

	s.tabTo(navPlayground, 10)
	s.keys(kb.Enter)
	s.visible(sessionOpen)
	// The radio group is one tab stop; an arrow moves to (and selects) the next radio.
	s.tabTo("mode-agent", 10)
	s.keys(kb.ArrowRight)
	s.visible(inlineConfig)
	s.tabTo(sessionOpen, 5)
	s.keys(kb.Enter)
	s.visible(chatInput)
	s.tabTo(chatInput, 30)
	s.keys("Hello there")
	s.keys(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl))
	s.waitText(msgAssistant, "You said: Hello there", patience)
	if got := s.texts("msg-user"); len(got) != 1 || strings.TrimSpace(got[0]) != "Hello there" {
		t.Errorf("the user's messages are %q, want the one sent (Ctrl+Enter must send it, not add a line)", got)
	}
	s.report.Clean(t)
}

// keys types keys into whatever has the focus, as a keyboard does.
func (s *studio) keys(keys string, opts ...chromedp.KeyOption) {
	s.t.Helper()
	s.do(fmt.Sprintf("press %q", keys), patience, chromedp.KeyEvent(keys, opts...))
}

// focused is the data-testid of the focused element ("" for none).
func (s *studio) focused() string {
	v, _ := s.eval(`(document.activeElement && document.activeElement.dataset && document.activeElement.dataset.testid) || ""`).(string)
	return v
}

// tabTo presses Tab until the element named name has the focus, at most max times, and fails
// when it never gets it: then the element cannot be reached with the keyboard.
func (s *studio) tabTo(name string, max int) {
	s.t.Helper()
	var path []string
	for i := 0; i < max; i++ {
		if f := s.focused(); f == name {
			return
		} else {
			path = append(path, f)
		}
		s.keys(kb.Tab)
	}
	if s.focused() != name {
		s.fail("%s not reached with %d presses of Tab; the focus went through %q", name, max, path)
	}
}

// TestRevokedKey: when the key the studio signed in with is revoked, the studio's next request
// signs it out and the sign-in screen says the key was revoked or has expired.
func TestRevokedKey(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navSettings)
	s.waitText(keyRow, "studio test", patience)
	s.call("DELETE", "/api/v1/api-keys/"+s.keyID+"/", nil)
	s.click(navAgents)
	s.visible(signinKey)
	msg := s.waitText(signinReason, "revoked", patience)
	if !strings.Contains(msg, "expired") {
		t.Errorf("the sign-in screen says %q; it should say the key was revoked or has expired", msg)
	}
	if n := s.eval(`sessionStorage.length`); n != float64(0) {
		t.Errorf("sessionStorage still holds %v items after the sign-out", n)
	}
	// The 401 that signed the studio out is the API's answer, not the page's fault; anything
	// else in the console is.
	for _, e := range s.report.ConsoleErrors() {
		if !strings.Contains(e, "401") {
			t.Errorf("console error: %s", e)
		}
	}
	if v := s.report.CSPViolations(); len(v) > 0 {
		t.Errorf("CSP violations: %q", v)
	}
}
