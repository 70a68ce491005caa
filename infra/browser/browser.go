package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Width and Height are the window size of every test browser: the desktop size the studio must
// work at (the 1280×800).
const (
	Width  = 1280
	Height = 800
)

// binding is the name of the function the watch script calls to report to Go (a CDP binding:
// each call is a Runtime.bindingCalled event, which the page cannot fake into a Go-side silence).
const binding = "__agentorchReport"

// watchScript runs in every document before the page's own scripts (it is added through the
// DevTools protocol, so the page's Content-Security-Policy does not apply to it). It reports CSP
// violations and any call of alert, confirm or prompt: an XSS payload's usual proof of life.
const watchScript = `(() => {
  const report = (kind, detail) => { try { window.` + binding + `(JSON.stringify({kind, detail: String(detail)})); } catch (e) {} };
  for (const name of ["alert", "confirm", "prompt"]) {
    window[name] = (msg) => { report("dialog", name + "(" + msg + ")"); return name === "confirm" ? false : null; };
  }
  document.addEventListener("securitypolicyviolation", (e) => {
    report("csp", e.violatedDirective + " blocked " + (e.blockedURI || "inline") + (e.sample ? " (" + e.sample + ")" : ""));
  }, true);
})();`

// Report is what a page did that a test of the studio must not see: console errors and uncaught
// exceptions, CSP violations, and JavaScript dialogs (or calls of alert, confirm and prompt).
type Report struct {
	mu       sync.Mutex
	console  []string
	csp      []string
	dialogs  []string
	messages []string
}

// ConsoleErrors returns the console errors and uncaught exceptions seen so far.
func (r *Report) ConsoleErrors() []string { return r.get(&r.console) }

// CSPViolations returns the Content-Security-Policy violations seen so far.
func (r *Report) CSPViolations() []string { return r.get(&r.csp) }

// Dialogs returns the dialogs opened and the calls of alert, confirm and prompt seen so far.
func (r *Report) Dialogs() []string { return r.get(&r.dialogs) }

// Console returns every console message seen so far, whatever its level (for failure output).
func (r *Report) Console() []string { return r.get(&r.messages) }

func (r *Report) get(s *[]string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), (*s)...)
}

func (r *Report) add(s *[]string, v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*s = append(*s, v)
}

// Reset forgets what was reported so far: a test that provokes problems on purpose starts the
// next step clean.
func (r *Report) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.console, r.csp, r.dialogs, r.messages = nil, nil, nil, nil
}

// Clean fails t unless the page reported no console error, no CSP violation and no dialog.
func (r *Report) Clean(t testing.TB) {
	t.Helper()
	if c := r.ConsoleErrors(); len(c) > 0 {
		t.Errorf("console errors:\n  %s", strings.Join(c, "\n  "))
	}
	if c := r.CSPViolations(); len(c) > 0 {
		t.Errorf("CSP violations:\n  %s", strings.Join(c, "\n  "))
	}
	if d := r.Dialogs(); len(d) > 0 {
		t.Errorf("dialogs (a script ran that should not have):\n  %s", strings.Join(d, "\n  "))
	}
}

// NewContext starts headless Chromium (installed first if need be, see EnsureChromium) in a fresh
// profile and returns a chromedp context of one tab, and what that tab reports. The browser stops
// and its profile is removed when the test ends (or on cancel). The page's viewport is exactly
// Width×Height. It fails the test when Chromium cannot be had or cannot start.
func NewContext(t testing.TB) (context.Context, *Report, context.CancelFunc) {
	t.Helper()
	path, err := EnsureChromium(context.Background(), os.Stderr)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(Width, Height),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// This machine's network is closed: without these, Chromium's own connections (updates,
		// sync, QUIC probes, Google's hosts) fail many at a time and slow every start.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	cancel := func() { cancelTab(); cancelAlloc() }
	t.Cleanup(cancel)

	r := &Report{}
	if err := chromedp.Listen(ctx, func(ev any) { r.record(ctx, ev) }); err != nil {
		cancel()
		t.Fatalf("browser: start chromium %s: %v", path, err)
	}
	if _, err := chromedp.Call(ctx, runtime.AddBinding, runtime.AddBindingParams{Name: binding}); err != nil {
		cancel()
		t.Fatalf("browser: add binding: %v", err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchScript}); err != nil {
		cancel()
		t.Fatalf("browser: add watch script: %v", err)
	}
	// The window's size is not the page's: headless Chromium keeps some of it for the browser's
	// own frame. The viewport is set, so that pages and screenshots are exactly Width×Height.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(Width, Height)); err != nil {
		cancel()
		t.Fatalf("browser: set the viewport: %v", err)
	}
	return ctx, r, cancel
}

// record files one event of the tab. It runs in chromedp's event loop, so it must not call the
// browser itself: a dialog is answered from another goroutine.
func (r *Report) record(ctx context.Context, ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		text := consoleArgs(ev.Args)
		r.add(&r.messages, string(ev.Type)+": "+text)
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			r.add(&r.console, "console."+string(ev.Type)+": "+text)
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text += " " + d.Exception.Description
		}
		r.add(&r.messages, "exception: "+text)
		r.add(&r.console, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber, text))
	case *log.EventEntryAdded:
		e := ev.Entry
		r.add(&r.messages, string(e.Level)+" ("+string(e.Source)+"): "+e.Text)
		if e.Level == log.EntryLevelError {
			// The browser's own log: failed loads, and CSP violations under source "security".
			if e.Source == log.EntrySourceSecurity || strings.Contains(e.Text, "Content Security Policy") {
				r.add(&r.csp, e.Text)
			} else {
				r.add(&r.console, string(e.Source)+": "+e.Text+" "+e.URL)
			}
		}
	case *runtime.EventBindingCalled:
		if ev.Name != binding {
			return
		}
		var m struct{ Kind, Detail string }
		if err := json.Unmarshal([]byte(ev.Payload), &m); err != nil {
			r.add(&r.console, "bad report from the watch script: "+ev.Payload)
			return
		}
		switch m.Kind {
		case "dialog":
			r.add(&r.dialogs, m.Detail)
		case "csp":
			r.add(&r.csp, m.Detail)
		}
	case *page.EventJavascriptDialogOpening:
		r.add(&r.dialogs, string(ev.Type)+": "+ev.Message)
		// A dialog blocks the page and every action waiting on it: dismiss it, off the event loop.
		go func() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, _ = chromedp.Call(cctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	}
}

// consoleArgs renders the arguments of a console call as the DevTools console shows them, well
// enough for a failure message.
func consoleArgs(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case a == nil:
		case len(a.Value) > 0:
			parts = append(parts, strings.Trim(string(a.Value), `"`))
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}
