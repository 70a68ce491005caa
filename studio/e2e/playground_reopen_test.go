package e2e

import (
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// executionReads counts the page's requests for a session's execution records since the
// resource timings were last cleared: each execution's own GET, and the session's list.
func (s *studio) executionReads(sid string) (one, list int) {
	s.t.Helper()
	raw, _ := s.eval(`performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)`).([]any)
	each := regexp.MustCompile(`/api/v1/runtime/` + sid + `/executions/[0-9a-f-]{36}/$`)
	for _, p := range raw {
		path, _ := p.(string)
		switch {
		case each.MatchString(path):
			one++
		case path == "/api/v1/runtime/"+sid+"/executions/":
			list++
		}
	}
	return one, list
}

// TestPlaygroundStopReopen: a session with an answered turn and a turn Stop cancelled, reopened
// from the list and after a reload, shows what it showed live: the tool rows, each turn's tokens
// and cost, and "Stopped." on the stopped turn only; reopened, the figures of every turn come
// from one request for the session's executions, none for an execution alone.
func TestPlaygroundStopReopen(t *testing.T) {
	s := newStudio(t)
	key := s.sleepyAgent()
	s.signIn()
	s.openSession(key)
	sid := s.pgSessionID()
	s.fill(chatInput, `slow {"ms":10}`)
	s.click(chatSend)
	s.chatSettled(2)
	s.fill(chatInput, `slow {"ms":55000}`)
	s.click(chatSend)
	// The second turn's row (the first turn has one too), then Stop once the run is known.
	deadline := time.Now().Add(patience)
	for len(s.texts(toolCall)) < 2 {
		if time.Now().After(deadline) {
			s.fail("the second turn's tool row does not show: %q", s.texts(toolCall))
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.do("wait for Stop", patience, chromedp.WaitEnabled(chromedp.CSS(tid(chatStop))))
	s.click(chatStop)
	s.waitText(turnStopped, "Stopped", patience)
	live := s.chatSettled(4)
	liveStopped := s.texts(turnStopped)
	if len(liveStopped) != 1 || live[3].Usage == "" || live[1].Usage == "" || live[3].Trace == "" {
		t.Fatalf("live: %+v, stopped %q; want both turns with their figures and one stopped", live, liveStopped)
	}
	s.axe("a chat with a stopped turn")

	same := func(what string) {
		t.Helper()
		got := s.chatSettled(4)
		if !reflect.DeepEqual(got, live) {
			t.Errorf("%s, the session shows\n%+v\nlive it showed\n%+v", what, got, live)
		}
		if st := s.texts(turnStopped); !reflect.DeepEqual(st, liveStopped) {
			t.Errorf("%s, the stopped marks read %q, live %q", what, st, liveStopped)
		}
		// The stopped mark is on the last answer, as live.
		if n := s.eval(`document.querySelectorAll('[data-testid="msg-assistant"]')[1].querySelectorAll('[data-testid="turn-stopped"]').length`); n != float64(1) {
			t.Errorf("%s, the stopped turn carries %v stopped marks", what, n)
		}
		one, list := s.executionReads(sid)
		t.Logf("%s: %d request(s) of the session's executions, %d of one execution", what, list, one)
		if one != 0 || list != 1 {
			t.Errorf("%s, the chat read %d execution(s) one by one and the session's executions %d time(s); want 0 and 1", what, one, list)
		}
	}
	s.eval(`performance.clearResourceTimings(), 0`)
	s.pgReopen(sid)
	s.waitText(turnStopped, "Stopped", patience)
	same("reopened from the list")
	s.axe("a reopened chat with a stopped turn")

	s.do("reload", patience, chromedp.Reload())
	s.waitText(turnStopped, "Stopped", patience)
	same("after a reload")
	s.report.Clean(t)
}
