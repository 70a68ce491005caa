package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The Knowledge screen's test ids beyond TestKnowledge's (studio/README.md).
const (
	kbSourceFiles, kbFile = "kb-source-files", "kb-file"
)

// TestKnowledgeSteady: each Knowledge screen (files, collections, knowledge bases) opened by
// address with its lists answering slowly (300 ms of latency on every API request) does not
// shift as they load: the cumulative layout shift Chromium reports (layout-shift entries without
// recent input) stays at or under 0.1, and axe-core finds no violation on the loaded screen.
func TestKnowledgeSteady(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.completedKB("returns.txt", returnsPolicy)
	s.completedKB("shipping.txt", "Shipping policy. Parcels leave within two working days.")
	s.api("POST", "/api/v1/collections/", map[string]any{"name": "Policies"})

	for _, sc := range []struct{ path, what, sel string }{
		{"/studio/knowledge", "Knowledge › Files", tid(fileRow)},
		{"/studio/knowledge/collections", "Knowledge › Collections", tid(collectionRow)},
		{"/studio/knowledge/bases", "Knowledge › Knowledge bases", tid(kbRow)},
	} {
		s.steady(sc.what, sc.path, sc.sel)
	}
	s.report.Clean(t)
}

// steady opens path with 300 ms of latency on every API request, waits for sel and for the
// lists to load, and fails the test when the page's cumulative layout shift passes 0.1; then
// axe-core checks the loaded screen.
func (s *studio) steady(what, path, sel string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.tab, patience)
	defer cancel()
	if _, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{URLPattern: s.base + "/api/*", Latency: 300, DownloadThroughput: -1, UploadThroughput: -1}}}); err != nil {
		s.fail("emulate API latency: %v", err)
	}
	s.do("open "+path, patience, chromedp.Navigate(s.base+path))
	s.do("wait for "+sel, patience, chromedp.WaitVisible(chromedp.CSS(sel)))
	s.listsLoaded()
	// Each shift's value and what moved (for the log), summed as Chromium's CLS counts them.
	r, _ := s.eval(`new Promise(done => {
  const out = {sum: 0, shifts: []}
  new PerformanceObserver(l => {
    for (const e of l.getEntries()) {
      if (e.hadRecentInput) continue
      out.sum += e.value
      out.shifts.push(e.value.toFixed(3) + " " + (e.sources || []).map(x => {
        const n = x.node
        return !n ? "?" : n.nodeType === 1 ? n.tagName.toLowerCase() + (n.className ? "." + n.className : "") + (n.dataset?.testid ? "[" + n.dataset.testid + "]" : "") : "#text"
      }).join(" "))
    }
  }).observe({type: "layout-shift", buffered: true})
  setTimeout(() => done(out), 500)
})`).(map[string]any)
	cls, _ := r["sum"].(float64)
	s.t.Logf("cumulative layout shift of %s loading: %.3f; shifts: %v", what, cls, r["shifts"])
	if cls > 0.1 {
		s.t.Errorf("%s shifts by %.3f as it loads; want ≤ 0.1", what, cls)
	}
	if _, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{}}); err != nil {
		s.fail("stop the latency: %v", err)
	}
	s.axe(what + " with its lists")
}

// TestKnowledgeFromFiles: sizes are for people (a 5,000-byte upload reads 4.9 KB in its progress
// row and in the files table), a knowledge base is built from files picked one by one (not only
// from a collection) and completes on its own screen, and both create forms are empty again
// after a create.
func TestKnowledgeFromFiles(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navKnowledge)
	path := filepath.Join(t.TempDir(), "policy.txt")
	text := strings.Repeat(returnsPolicy+"\n", 5000/(len(returnsPolicy)+1)+1)[:5000]
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s.do("choose the file", patience, chromedp.SetUploadFiles(chromedp.CSS(tid(uploadInput)), []string{path}))
	s.waitText(uploadRow, "uploaded · 4.9 KB", patience)
	row := s.waitText(fileRow, "policy.txt", patience)
	if !strings.Contains(row, "4.9 KB") || strings.Contains(row, "5,000") {
		t.Errorf("the file's row reads %q; want its size as 4.9 KB", row)
	}

	s.click(knowledgeCollections)
	s.fill(collectionName, "Policies")
	s.clickIn(collectionFile, "policy.txt", "")
	s.click(collectionCreate)
	s.waitText(collectionRow, "Policies", patience)
	s.waitValue(collectionName, "")
	if n := s.eval(`document.querySelectorAll('[data-testid="collection-file"] input:checked').length`); n != 0.0 {
		t.Errorf("%v files stay ticked in the collection form after its create", n)
	}

	s.click(knowledgeBases)
	s.click(kbSourceFiles)
	s.clickIn(kbFile, "policy.txt", "")
	s.fill(kbName, "From files")
	s.click(kbCreate)
	// The knowledge base's own screen opens and follows its run; the list's form is empty again.
	s.waitStatus("completed", 3*time.Minute)
	s.waitText(kbCounts, "1/1 files ingested", patience)
	s.click(knowledgeBases)
	s.waitText(kbRow, "From files", patience)
	s.waitValue(kbName, "")
	if s.eval(`document.querySelector('[data-testid="kb-source-collection"]').checked`) != true {
		t.Error("the knowledge-base form does not return to its default source after a create")
	}
	s.axe("Knowledge › Knowledge bases after a knowledge base from files")
	s.report.Clean(t)
}

// waitValue waits until the form field named holds want.
func (s *studio) waitValue(name, want string) {
	s.t.Helper()
	js := `document.querySelector(` + "`" + tid(name) + "`" + `)?.value`
	deadline := time.Now().Add(patience)
	for {
		got, _ := s.eval(js).(string)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			s.fail("%s holds %q, not %q, within %v", name, got, want, patience)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
