// Package e2e drives the studio in headless Chromium (infra/browser) against the whole
// application on the local stand-ins, served as the dev server serves it: every function's routes
// from template.yaml on one HTTP server, the studio at /studio/ beside them. A test fails, never
// skips, when the studio is not built or lacks an element it drives: make test builds the studio
// before go test runs (test → dev-bin → build-studio), so a missing build or name is a defect.
//
// The DOM contract is the data-testid names of studio/README.md; the names are in one place below.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentorch/agentorch/infra/browser"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/mcp"
)

func TestMain(m *testing.M) { localstack.RunTests(m) }

// patience is how long any wait on the page may take before the test fails. The waits end as soon
// as what they wait for happens, so it bounds only a failure: generous, so that a loaded machine
// (another stack running beside this one) is slow but not failing.
const patience = 90 * time.Second

// The data-testid names of the studio's DOM contract (studio/README.md).
const (
	signinKey, signinSubmit, signout         = "signin-key", "signin-submit", "signout"
	navAgents, navPlayground                 = "nav-agents", "nav-playground"
	navKnowledge, navSettings                = "nav-knowledge", "nav-settings"
	agentNew, agentConfig, agentSave         = "agent-new", "agent-config", "agent-save"
	agentRow, fieldError                     = "agent-row", "field-error"
	agentPick, sessionOpen                   = "agent-pick", "session-open"
	chatInput, chatSend, msgAssistant        = "chat-input", "chat-send", "msg-assistant"
	toolCall, citation, citationPassage      = "tool-call", "citation", "citation-passage"
	keyCreate, keyName, keySecret, keyRevoke = "key-create", "key-name", "key-secret", "key-revoke"
	keyRevokeConfirm, keyRow                 = "key-revoke-confirm", "key-row"
	uploadInput, uploadRow, fileRow          = "upload-input", "upload-row", "file-row"
	collectionName, collectionFile           = "collection-name", "collection-file"
	collectionCreate                         = "collection-create"
	kbName, kbCollection, kbCreate, kbStatus = "kb-name", "kb-collection", "kb-create", "kb-status"
	kbCounts                                 = "kb-counts"
	searchInput, searchResult                = "search-input", "search-result"
)

// tid is the CSS selector of a data-testid.
func tid(name string) string { return `[data-testid="` + name + `"]` }

// studio is one browser tab on the studio of one application with fresh resources.
type studio struct {
	t testing.TB
	// tab is chromedp's handle on the browser tab (a context by chromedp's design, not the scope
	// of one call): every action runs under a child of it with its own deadline.
	tab    context.Context
	report *browser.Report
	base   string // the HTTP server's URL
	key    string // the API key the studio signs in with
	keyID  string // its id (to revoke it)
	app    *app.App
	// ready is how long the first screen took: from the navigation to /studio/ in a fresh
	// profile (nothing cached) until the sign-in form is visible.
	ready time.Duration
}

// newStudio starts the application on fresh resources behind an HTTP server, creates an API key
// and opens the studio in Chromium, not yet signed in. It fails when the studio is not built.
func newStudio(t *testing.T) *studio {
	t.Helper()
	if testing.Short() {
		t.Skip("drives Chromium against the local stack; runs without -short")
	}
	env := localstack.NewTestEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	a.UseMCP(mcp.ForPolicy)
	mux, err := sam.NewRouter(env.Template, func(dir, _ string) (http.Handler, error) { return a.Handler(dir) })
	if err != nil {
		t.Fatal(err)
	}
	env.RunEventSources(t, a.Processor)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	res, err := http.Get(srv.URL + "/studio/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /studio/: %d %s\nthe studio must be built before its tests run: make build-studio (make test does it first)",
			res.StatusCode, bytes.TrimSpace(body))
	}

	k, secret, err := a.Auth.CreateKey(context.Background(), auth.NewKey{Name: "studio test", Owner: "alice", Company: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	tab, report, _ := browser.NewContext(t)
	s := &studio{t: t, tab: tab, report: report, base: srv.URL, key: secret, keyID: k.ID, app: a}
	// Every browser test ends with axe-core on the page it reached (before the browser stops:
	// cleanups run last first), so that no screen state a test drives to has a violation of any
	// impact, whether or not the test asked for axe itself. A test that failed already is left
	// with its own reason.
	t.Cleanup(func() {
		if !t.Failed() && !t.Skipped() {
			s.axe("the page at the end of " + t.Name() + " (" + s.location() + ")")
		}
	})
	// Chromium starts with the tab's first action: start it on a blank page, so that the time
	// to the first screen is the studio's alone.
	s.do("start the browser", patience, chromedp.Navigate("about:blank"))
	start := time.Now()
	s.do("open /studio/", patience, chromedp.Navigate(srv.URL+"/studio/"))
	s.visible(signinKey)
	s.ready = time.Since(start)
	return s
}

// signIn signs in with the test's key and waits for the navigation.
func (s *studio) signIn() {
	s.t.Helper()
	s.fill(signinKey, s.key)
	s.click(signinSubmit)
	s.visible(navAgents)
}

// do runs actions within d; what names them in a failure.
func (s *studio) do(what string, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.tab, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		s.fail("%s: %v (page at %s)", what, err, s.location())
	}
}

// location is the page's address, for failure messages.
func (s *studio) location() string {
	ctx, cancel := context.WithTimeout(s.tab, 2*time.Second)
	defer cancel()
	u, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return "?"
	}
	return u
}

// fail ends the test with what the page logged, which is usually the reason.
func (s *studio) fail(format string, args ...any) {
	s.t.Helper()
	msg := fmt.Sprintf(format, args...)
	if alerts := s.alerts(); len(alerts) > 0 {
		msg += "\nthe page says:\n  " + strings.Join(alerts, "\n  ")
	}
	if c := s.report.Console(); len(c) > 0 {
		msg += "\nconsole:\n  " + strings.Join(c, "\n  ")
	}
	s.t.Fatal(msg)
}

// alerts returns the text of the page's alerts (the studio's error boxes), without failing: it
// serves failure messages.
func (s *studio) alerts() []string {
	ctx, cancel := context.WithTimeout(s.tab, 2*time.Second)
	defer cancel()
	out, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[role="alert"]'), e => e.innerText)`))
	return out
}

func (s *studio) visible(name string) {
	s.t.Helper()
	s.do("wait for "+tid(name)+" to be visible", patience, chromedp.WaitVisible(chromedp.CSS(tid(name))))
}

func (s *studio) click(name string) {
	s.t.Helper()
	s.do("click "+tid(name), patience, chromedp.Click(chromedp.CSS(tid(name)), chromedp.NodeVisible))
}

// fill sets the value of an input, textarea or select as typing would: through the element's
// own value setter, then input and change events, which is what the framework listens to.
func (s *studio) fill(name, value string) {
	s.t.Helper()
	s.visible(name)
	v, _ := json.Marshal(value)
	js := fmt.Sprintf(`(() => {
  const el = document.querySelector(%q);
  if (!el) return false;
  const set = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value").set;
  set.call(el, %s);
  el.dispatchEvent(new Event("input", {bubbles: true}));
  el.dispatchEvent(new Event("change", {bubbles: true}));
  return true;
})()`, tid(name), v)
	if ok := s.eval(js); ok != true {
		s.fail("fill %s: no such element", name)
	}
}

// eval evaluates JavaScript in the page and returns its JSON value decoded.
func (s *studio) eval(js string) any {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.tab, patience)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		s.fail("evaluate: %v", err)
	}
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			s.fail("evaluate: %v: %s", err, raw)
		}
	}
	return v
}

// texts returns the text of every element with the data-testid.
func (s *studio) texts(name string) []string {
	s.t.Helper()
	js := fmt.Sprintf(`Array.from(document.querySelectorAll(%q), el => el.innerText || el.textContent || "")`, tid(name))
	var out []string
	if arr, ok := s.eval(js).([]any); ok {
		for _, v := range arr {
			str, _ := v.(string)
			out = append(out, str)
		}
	}
	return out
}

// waitText waits until an element with the data-testid holds want, and returns its text.
func (s *studio) waitText(name, want string, d time.Duration) string {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		texts := s.texts(name)
		for _, txt := range texts {
			if strings.Contains(txt, want) {
				return txt
			}
		}
		if time.Now().After(deadline) {
			s.fail("no %s holds %q within %s; they hold %q", name, want, d, texts)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// api calls the public API with the test's key, for what a test sets up outside the studio, and
// returns the JSON object it answers (nil for an empty body).
func (s *studio) api(method, path string, body any) map[string]any {
	s.t.Helper()
	var m map[string]any
	if out := s.call(method, path, body); len(out) > 0 {
		if err := json.Unmarshal(out, &m); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, out)
		}
	}
	return m
}

// call calls the public API with the test's key and returns the body of a 2xx answer.
func (s *studio) call(method, path string, body any) []byte {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("x-api-key", s.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		s.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	return out
}

// createAgent stores an agent of the flat configuration cfg through the API and returns its
// agent_key, the name the playground's picker opens a session by.
func (s *studio) createAgent(cfg string) string {
	s.t.Helper()
	var sc map[string]any
	if err := json.Unmarshal([]byte(cfg), &sc); err != nil {
		s.t.Fatal(err)
	}
	key, _ := s.api("POST", "/api/v1/agent/", map[string]any{"system_config": sc})["agent_key"].(string)
	if key == "" {
		s.t.Fatal("agent created without an agent_key")
	}
	return key
}

// choose selects the option of a select whose value is value (or, byText, whose text holds it)
// once the option is there: the studio fills its pickers from the API after the screen shows.
func (s *studio) choose(name, value string, byText bool) {
	s.t.Helper()
	s.visible(name)
	v, _ := json.Marshal(value)
	js := fmt.Sprintf(`(() => {
  const el = document.querySelector(%q);
  const o = el && Array.from(el.options).find(o => %t ? o.textContent.includes(%s) : o.value === %s);
  return o ? o.value : null;
})()`, tid(name), byText, v, v)
	deadline := time.Now().Add(patience)
	for {
		if got, ok := s.eval(js).(string); ok {
			s.fill(name, got)
			return
		}
		if time.Now().After(deadline) {
			s.fail("%s has no option %q within %v", name, value, patience)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clickIn clicks the element named button inside the first element named row whose text holds
// text (the revoke button of one key's row, the checkbox of one file), waiting up to 20 s for it.
func (s *studio) clickIn(row, text, button string) {
	s.t.Helper()
	v, _ := json.Marshal(text)
	sel := "input"
	if button != "" {
		sel = tid(button)
	}
	js := fmt.Sprintf(`(() => {
  const r = Array.from(document.querySelectorAll(%q)).find(r => r.textContent.includes(%s));
  const b = r && r.querySelector(%q);
  if (!b || b.disabled) return false;
  b.click();
  return true;
})()`, tid(row), v, sel)
	deadline := time.Now().Add(patience)
	for s.eval(js) != true {
		if time.Now().After(deadline) {
			s.fail("no enabled %s in a %s holding %q within %v; the rows hold %q", sel, row, text, patience, s.texts(row))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// openSession opens a playground session on the stored agent of agentKey through the picker and
// waits for the chat.
func (s *studio) openSession(agentKey string) {
	s.t.Helper()
	s.click(navPlayground)
	s.choose(agentPick, agentKey, false)
	s.click(sessionOpen)
	s.visible(chatInput)
}

// sendTimed writes text in the chat and sends it, and returns how long after the click on Send
// the answer's first streamed event (a tool call's row, or text) and its first text showed, as
// the page's clock measured them (a MutationObserver, so polling adds nothing).
func (s *studio) sendTimed(text string) (event, firstText time.Duration) {
	s.t.Helper()
	s.fill(chatInput, text)
	s.visible(chatSend)
	js := fmt.Sprintf(`(() => {
  const n = document.querySelectorAll(%[1]q).length;
  const t = window.__studioTiming = {};
  const t0 = performance.now();
  const look = () => {
    const a = document.querySelectorAll(%[1]q)[n];
    if (!a) return;
    const md = a.querySelector(".md");
    const hasText = md && md.textContent.trim() !== "";
    if (t.event === undefined && (hasText || a.querySelector(%[2]q))) t.event = performance.now() - t0;
    if (t.text === undefined && hasText) { t.text = performance.now() - t0; obs.disconnect(); }
  };
  const obs = new MutationObserver(look);
  obs.observe(document.body, {childList: true, subtree: true, characterData: true});
  const b = document.querySelector(%[3]q);
  if (!b || b.disabled) { obs.disconnect(); return false; }
  b.click();
  return true;
})()`, tid(msgAssistant), tid(toolCall), tid(chatSend))
	// Send is enabled once the page has taken the text in and the previous answer has ended.
	deadline := time.Now().Add(patience)
	for s.eval(js) != true {
		if time.Now().After(deadline) {
			s.fail("%s is missing or still disabled after %v", chatSend, patience)
		}
		time.Sleep(50 * time.Millisecond)
	}
	deadline = time.Now().Add(patience)
	for {
		m, _ := s.eval(`window.__studioTiming`).(map[string]any)
		e, okE := m["event"].(float64)
		x, okX := m["text"].(float64)
		if okE && okX {
			ms := func(f float64) time.Duration {
				return time.Duration(f * float64(time.Millisecond)).Round(time.Millisecond)
			}
			return ms(e), ms(x)
		}
		if time.Now().After(deadline) {
			s.fail("no streamed text in the answer to %q within 60s; the answers hold %q", text, s.texts(msgAssistant))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// uploadText uploads a text file through the API and returns its id.
func (s *studio) uploadText(name, text string) string {
	s.t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", "text/plain")
	pw, err := w.CreatePart(h)
	if err == nil {
		_, err = pw.Write([]byte(text))
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	req, err := http.NewRequest("POST", s.base+"/api/v1/files/", &b)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("x-api-key", s.key)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	var file struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(res.Body).Decode(&file)
	_ = res.Body.Close()
	if err != nil || res.StatusCode != http.StatusCreated || file.ID == "" {
		s.t.Fatalf("upload %s: %d, %v", name, res.StatusCode, err)
	}
	return file.ID
}

// completedKB uploads one text file and ingests a knowledge base of it through the API, and
// returns the knowledge base's id once its status is completed.
func (s *studio) completedKB(name, text string) string {
	s.t.Helper()
	fileID := s.uploadText(name, text)
	kb := s.api("POST", "/api/v1/knowledge-bases/", map[string]any{"name": "Support", "processing_engine": "opensearch",
		"selected_datasources": []any{fileID}})
	id, _ := kb["id"].(string)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, _ := s.api("GET", "/api/v1/knowledge-bases/"+id+"/check_status/", nil)["knowledge_base"].(map[string]any)
		switch st["status"] {
		case "completed":
			return id
		case "failed":
			s.t.Fatalf("knowledge base %s failed: %v", id, st)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("knowledge base %s still %v after 2 minutes", id, st["status"])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startMCP starts infra/mcptest's MCP server on a free port for the test and returns its base
// URL (tools at base + mcptest.PathMCP).
func startMCP(t testing.TB) string {
	t.Helper()
	base, stop, err := mcptest.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return base
}

// returnsHelper makes an llm_agent answering from a completed knowledge base of returnsPolicy
// and returns its agent key and the knowledge base's id.
func (s *studio) returnsHelper() (agentKey, kb string) {
	s.t.Helper()
	kb = s.completedKB("returns.txt", returnsPolicy)
	return s.createAgent(fmt.Sprintf(`{"name":"Helper","agent_type":"llm_agent","system_prompt":"Answer customers.",
		"llm_config":{"provider":"local","model":"dev"},
		"knowledge_bases":[{"name":"support","knowledge_base_type":"opensearch","knowledge_base_id":%q}]}`, kb)), kb
}

// askReturns asks the open session returnsHelper's question and waits for a cited answer.
func (s *studio) askReturns() {
	s.t.Helper()
	s.fill(chatInput, "How long do I have to send a purchase back?")
	s.click(chatSend)
	s.waitText(citation, "1", patience)
}
