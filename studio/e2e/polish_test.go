package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/agentorch/agentorch/infra/axenpm"
	"github.com/agentorch/agentorch/infra/localstack"
)

const (
	empty       = "empty"
	signinWhere = "signin-where"
)

// screens are the screens of the navigation, each with the empty states a fresh company sees on
// it: the lists that say what to do next (Knowledge's three screens one by one, by its
// sub-navigation). Settings lists the test's own key, so only its MCP
// servers are empty.
var screens = []struct {
	nav     string
	title   string
	empties int
}{
	{navAgents, "Agents", 1},
	{navPlayground, "Playground", 1},
	{navKnowledge, "Knowledge", 1}, // its files screen; the next two are its other screens
	{knowledgeCollections, "Knowledge", 1},
	{knowledgeBases, "Knowledge", 1},
	{navSettings, "Settings", 1},
}

// TestPolishSignIn: the sign-in screen says where a key comes from (make dev's file, and
// scripts/apikey on AWS), has one h1 and no axe-core violation of any impact, light or dark.
func TestPolishSignIn(t *testing.T) {
	s := newStudio(t)
	hint := s.waitText(signinWhere, ".cache/dev-api-key", patience)
	for _, want := range []string{"make dev", "scripts/apikey"} {
		if !strings.Contains(hint, want) {
			t.Errorf("the sign-in hint %q does not name %s", hint, want)
		}
	}
	for _, dark := range []bool{false, true} {
		s.scheme(dark)
		s.oneH1("the sign-in screen", "agentorch studio")
		s.axe(fmt.Sprintf("the sign-in screen (dark %t)", dark))
	}
	s.report.Clean(t)
}

// TestPolishScreens: on a fresh company every screen of the navigation has exactly one h1 (its
// name), its empty lists say what to do next, and axe-core finds no violation of any impact
// (landmark-unique and the other landmark rules among them), in the light scheme and under
// prefers-color-scheme: dark, where the page's background and text colours are the dark ones.
func TestPolishScreens(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	var light colours
	for _, dark := range []bool{false, true} {
		s.scheme(dark)
		c := s.colours()
		if !dark {
			light = c
		} else if c.Background == light.Background || c.Text == light.Text || c.Card == light.Card {
			t.Errorf("dark scheme: colours %+v, the same as the light ones %+v in part", c, light)
		} else if lum(c.Background) > lum(light.Background) || lum(c.Text) < lum(light.Text) {
			t.Errorf("dark scheme: background %s and text %s are not darker and lighter than the light %s and %s", c.Background, c.Text, light.Background, light.Text)
		}
		for _, sc := range screens {
			what := fmt.Sprintf("%s (dark %t)", sc.title, dark)
			s.click(sc.nav)
			s.listsLoaded()
			s.oneH1(what, sc.title)
			s.count(what, tid(empty), sc.empties)
			s.listsLoaded()
			for _, txt := range s.texts(empty) {
				// A guiding empty state says more than "No X.": what to do next.
				if len(strings.Fields(txt)) < 8 {
					t.Errorf("%s: the empty state %q does not say what to do next", what, txt)
				}
			}
			s.axe(what)
		}
	}
	// The agents' empty state has the button that makes one.
	s.click(navAgents)
	s.listsLoaded()
	s.count("the agents' empty state's Create button", tid(empty)+` a.button[href$="agents/new"]`, 1)
	// With content, still clean in the dark.
	s.createAgent(`{"name":"Support","agent_type":"react_agent","system_prompt":"Answer from the knowledge base.","tools":["calculator"]}`)
	s.click(navPlayground)
	s.click(navAgents)
	s.waitText(agentRow, "Support", patience)
	s.click(agentNew)
	s.visible(agentConfig)
	s.listsLoaded()
	s.oneH1("the new agent (dark)", "Agents")
	s.axe("the new agent's editor (dark)")
	s.report.Clean(t)
}

// scheme emulates prefers-color-scheme: dark, or light.
func (s *studio) scheme(dark bool) {
	s.t.Helper()
	v := "light"
	if dark {
		v = "dark"
	}
	ctx, cancel := context.WithTimeout(s.tab, patience)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}}); err != nil {
		s.fail("emulate prefers-color-scheme: %s: %v", v, err)
	}
	if got := s.eval(`matchMedia("(prefers-color-scheme: dark)").matches`); got != dark {
		s.fail("prefers-color-scheme: dark matches %v after emulating %s", got, v)
	}
}

// listsLoaded waits until no list of the screen is loading.
func (s *studio) listsLoaded() {
	s.t.Helper()
	s.do("wait for the screen's lists", patience, chromedp.WaitNotPresent(chromedp.CSS(".spinner")))
}

// count waits until exactly n elements match the CSS selector sel (the lists load after the
// screen shows), and fails the test when they do not within patience.
func (s *studio) count(what, sel string, n int) {
	s.t.Helper()
	js := fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)
	deadline := time.Now().Add(patience)
	for {
		got, _ := s.eval(js).(float64)
		if int(got) == n {
			return
		}
		if time.Now().After(deadline) {
			main, _ := s.eval(`document.querySelector("main").innerText`).(string)
			s.t.Errorf("%s: %v elements %s, want %d; alerts %q; the screen reads:\n%s", what, got, sel, n, s.alerts(), main)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// oneH1 fails unless the page has exactly one h1 and it reads title.
func (s *studio) oneH1(what, title string) {
	s.t.Helper()
	h, _ := s.eval(`Array.from(document.querySelectorAll("h1"), h => h.textContent.trim())`).([]any)
	if len(h) != 1 || h[0] != title {
		s.t.Errorf("%s: h1s %q, want exactly one reading %q", what, h, title)
	}
}

// colours are the computed colours of the page: its background, its text and a card's.
type colours struct{ Background, Text, Card string }

func (s *studio) colours() colours {
	s.t.Helper()
	m, _ := s.eval(`(() => {
  const root = getComputedStyle(document.documentElement);
  const card = document.querySelector(".card, .top");
  return {b: root.backgroundColor, t: root.color, c: card ? getComputedStyle(card).backgroundColor : ""};
})()`).(map[string]any)
	str := func(k string) string { v, _ := m[k].(string); return v }
	return colours{str("b"), str("t"), str("c")}
}

// lum is the mean of the channels of a computed rgb(…) colour, enough to tell dark from light.
func lum(rgb string) float64 {
	var r, g, b float64
	if _, err := fmt.Sscanf(rgb, "rgb(%g, %g, %g)", &r, &g, &b); err != nil {
		return -1
	}
	return (r + g + b) / 3
}

// axe runs axe-core (infra/axenpm) on the page as it is and fails the test on any violation,
// whatever its impact (minor and moderate too), naming each rule and the elements it found.
func (s *studio) axe(what string) {
	s.t.Helper()
	if s.eval(`typeof window.axe`) != "object" {
		root, err := localstack.RepoRoot()
		if err != nil {
			s.t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		js, err := axenpm.Script(ctx, root, testLog{s.t})
		if err != nil {
			s.t.Fatalf("axe-core: %v", err)
		}
		s.eval(js + "\n;true")
	}
	r, _ := s.eval(`axe.run(document, {resultTypes: ["violations"]}).then(r => ({
  passes: r.passes.length,
  violations: r.violations.map(v => v.id + " (" + v.impact + "): " + v.help + " at " + v.nodes.slice(0, 5).map(n => n.target.join(" ")).join(", "))
}))`).(map[string]any)
	v, _ := r["violations"].([]any)
	s.t.Logf("axe-core on %s: %d violations, %v rules passed", what, len(v), r["passes"])
	for _, x := range v {
		s.t.Errorf("axe-core on %s: %v", what, x)
	}
}

// testLog writes an installer's output to the test's log.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
