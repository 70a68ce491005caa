package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// pages serves the fixtures: an XSS payload with and without a strict CSP, a script that writes
// a console error, and a clean page.
func pages() http.Handler {
	mux := http.NewServeMux()
	const payload = `<!doctype html><title>x</title><div id=out></div><script src="/inject.js"></script>`
	mux.HandleFunc("/inject.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		// What a studio that put model output into innerHTML would do.
		_, _ = fmt.Fprint(w, `document.getElementById("out").innerHTML = '<img src=x onerror=alert(1)>'; document.title = "done";`)
	})
	mux.HandleFunc("/open", func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, payload)
	})
	mux.HandleFunc("/strict", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
		_, _ = fmt.Fprint(w, payload)
	})
	mux.HandleFunc("/error.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = fmt.Fprint(w, `console.error("boom", 42); document.title = "done";`)
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, `<!doctype html><title>x</title><script src="/error.js"></script>`)
	})
	mux.HandleFunc("/clean", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		_, _ = fmt.Fprint(w, `<!doctype html><title>done</title><p>hello</p>`)
	})
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return mux
}

// TestReport: the report sees what a page does — an onerror handler that runs (alert trapped),
// the same payload blocked by a strict CSP (a violation, no dialog), a console error — and a
// clean page leaves it empty. The window is the 1280×800.
func TestReport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium; runs without -short")
	}
	srv := httptest.NewServer(pages())
	defer srv.Close()
	ctx, r, _ := NewContext(t)

	load := func(path string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+path)); err != nil {
			t.Fatalf("navigate %s: %v", path, err)
		}
		// The fixtures set the title last; the image's error event comes after its load fails.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.title === "done"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("%s did not finish: %v", path, err)
		}
		time.Sleep(300 * time.Millisecond)
	}

	load("/clean")
	if got := [][]string{r.ConsoleErrors(), r.CSPViolations(), r.Dialogs()}; len(got[0])+len(got[1])+len(got[2]) != 0 {
		t.Fatalf("clean page reported %q", got)
	}
	size, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[window.innerWidth, window.innerHeight]`))
	if err != nil {
		t.Fatal(err)
	}
	if size[0] != Width || size[1] != Height {
		t.Errorf("viewport %v, want %d×%d", size, Width, Height)
	}

	load("/strict")
	waitFor(t, func() bool { return len(r.CSPViolations()) > 0 })
	if d := r.Dialogs(); len(d) != 0 {
		t.Errorf("under a strict CSP the payload ran: %q", d)
	}
	if v := strings.Join(r.CSPViolations(), "\n"); !strings.Contains(v, "script-src") {
		t.Errorf("CSP violations %q do not name script-src", v)
	}

	load("/open")
	waitFor(t, func() bool { return len(r.Dialogs()) > 0 })
	if d := r.Dialogs(); !strings.Contains(d[0], "alert(1)") {
		t.Errorf("dialogs %q, want alert(1)", d)
	}

	r.Reset()
	load("/error")
	waitFor(t, func() bool { return len(r.ConsoleErrors()) > 0 })
	if c := r.ConsoleErrors(); len(c) != 1 || !strings.Contains(c[0], "boom 42") {
		t.Errorf("console errors %q, want boom 42", c)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // generous: a loaded machine's browser is slow
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("the browser did not report it within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFindEnv: CHROMIUM names the binary; one that is not executable is an error that says so,
// not a silent fallback to another browser.
func TestFindEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CHROMIUM", dir)
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "CHROMIUM=") {
		t.Errorf("Find with CHROMIUM=%s (a directory): %v, want an error naming CHROMIUM", dir, err)
	}
	t.Setenv("CHROMIUM", "/bin/sh")
	if p, err := Find(); err != nil || p != "/bin/sh" {
		t.Errorf("Find with CHROMIUM=/bin/sh = %q, %v", p, err)
	}
}
