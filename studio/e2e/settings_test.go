package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentorch/agentorch/infra/mcptest"
)

// The settings' names (studio/README.md) these tests drive beyond those of the harness.
const (
	keyExpires, keyExpiryLimit         = "key-expires", "key-expiry-limit"
	keyLocked, keyUnlockInput          = "key-locked", "key-unlock-input"
	keyUnlock                          = "key-unlock"
	mcpHeaderAdd, mcpHeaderName        = "mcp-header-add", "mcp-header-name"
	mcpHeaderValue, mcpEdit            = "mcp-header-value", "mcp-edit"
	mcpEditURL, mcpHeaderNames         = "mcp-edit-url", "mcp-header-names"
	mcpHeadersReplace, mcpEditHeaderV  = "mcp-headers-replace", "mcp-edit-header-value"
	mcpSave, mcpDelete, mcpDeleteConfm = "mcp-save", "mcp-delete", "mcp-delete-confirm"
)

// listKeys lists the keys the test's key manages, by id.
func (s *studio) listKeys() map[string]map[string]any {
	s.t.Helper()
	var keys []map[string]any
	if err := json.Unmarshal(s.call("GET", "/api/v1/api-keys/?limit=100", nil), &keys); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, k := range keys {
		out[k["id"].(string)] = k
	}
	return out
}

// onPage reports whether text is anywhere on the page: in its text or in an input's value.
func (s *studio) onPage(text string) bool {
	v, _ := json.Marshal(text)
	return s.eval(fmt.Sprintf(`document.body.innerText.includes(%s) || Array.from(document.querySelectorAll("input, textarea"), e => e.value).some(x => x.includes(%s))`, v, v)) == true
}

// TestKeyExpiryLimit: signed in with a key that has 30 days to live, the new key form does not
// offer 30 days (a child key may not outlive its parent): it says how long a key may live and,
// left as it is, creates one that expires with the signed-in key.
func TestKeyExpiryLimit(t *testing.T) {
	s := newStudio(t)
	month := s.api("POST", "/api/v1/api-keys/", map[string]any{"name": "a month", "expires_in": 30 * 86400})
	s.key, s.keyID = month["key"].(string), month["id"].(string)
	s.signIn()
	s.click(navSettings)
	s.waitText(keyExpiryLimit, "at most 29 days", patience)
	if v := s.eval(fmt.Sprintf(`document.querySelector(%q).value`, tid(keyExpires))); v != "" {
		t.Errorf("the expiry reads %q by default, want empty (with the signed-in key)", v)
	}
	s.fill(keyName, "child")
	s.click(keyCreate)
	s.visible(keySecret)
	keys := s.listKeys()
	var child map[string]any
	for _, k := range keys {
		if k["name"] == "child" {
			child = k
		}
	}
	if child == nil || child["parent_id"] != s.keyID {
		t.Fatalf("no child of the signed-in key named child among %v", keys)
	}
	if got, want := child["expires_at"], keys[s.keyID]["expires_at"]; got != want {
		t.Errorf("the child expires at %v, want %v (with its parent)", got, want)
	}
	// A number of days within the limit is taken as it is.
	s.fill(keyName, "week")
	s.fill(keyExpires, "7")
	s.click(keyCreate)
	s.waitText(keyRow, "week", patience)
	for _, k := range s.listKeys() {
		if k["name"] == "week" {
			at, _ := time.Parse(time.RFC3339, k["expires_at"].(string))
			if d := time.Until(at); d < 6*24*time.Hour || d > 7*24*time.Hour {
				t.Errorf("the 7-day key expires in %v", d)
			}
		}
	}
	s.report.Clean(t)
}

// TestKeyUnlockAfterReload: after a reload only the token is left, which may not create keys;
// the form says so and takes the key again (another key is refused), then creates keys.
func TestKeyUnlockAfterReload(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navSettings)
	s.visible(keyName)
	s.do("reload", patience, chromedp.Reload())
	s.visible(keyLocked)
	s.waitText(keyLocked, "token may not create keys", patience)
	if s.eval(fmt.Sprintf(`document.querySelector(%q).disabled`, tid(keyCreate))) != true {
		t.Errorf("Create key is enabled with only a token")
	}
	other := s.api("POST", "/api/v1/api-keys/", map[string]any{"name": "other"})
	s.fill(keyUnlockInput, other["key"].(string))
	s.click(keyUnlock)
	s.waitText(keyLocked, "not the key you signed in with", patience)
	s.fill(keyUnlockInput, s.key)
	s.click(keyUnlock)
	s.do("wait for the form to unlock", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(keyLocked))))
	s.fill(keyName, "after reload")
	s.click(keyCreate)
	s.visible(keySecret)
	if code := s.status(strings.TrimSpace(s.texts(keySecret)[0])); code != http.StatusOK {
		t.Errorf("the key created after the unlock answers %d, want 200", code)
	}
	s.report.Clean(t)
}

// TestKeySecretHidden: the secret shown once goes when its key is revoked, and when the page is
// left.
func TestKeySecretHidden(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navSettings)
	s.fill(keyName, "shown")
	s.click(keyCreate)
	s.visible(keySecret)
	s.waitText(keyRow, "shown", patience)
	s.clickIn(keyRow, "shown", keyRevoke)
	s.clickIn(keyRow, "shown", keyRevokeConfirm)
	s.do("wait for the revoked key's secret to go", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(keySecret))))

	s.fill(keyName, "left")
	s.click(keyCreate)
	s.visible(keySecret)
	secret := strings.TrimSpace(s.texts(keySecret)[0])
	s.click(navAgents)
	s.click(navSettings)
	s.waitText(keyRow, "left", patience)
	if s.onPage(secret) {
		t.Errorf("the secret is still shown after leaving the settings")
	}
	s.report.Clean(t)
}

// headerSeen records the X-Token header and path of each request an MCP server answers.
type headerSeen struct {
	mu   sync.Mutex
	last map[string]string // path → the last X-Token sent there
}

func (h *headerSeen) get(path string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last[path]
}

// TestMCPServerEdit: a server registered with a header gets it; edited, its URL and header change
// (the value is given, never shown back: only the header's name is); deleted, it goes.
func TestMCPServerEdit(t *testing.T) {
	seen := &headerSeen{last: map[string]string{}}
	inner := mcptest.Handler()
	mcp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.mu.Lock()
		seen.last[r.URL.Path] = r.Header.Get("X-Token")
		seen.mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(mcp.Close)
	s := newStudio(t)
	s.signIn()
	s.click(navSettings)
	s.fill(mcpName, "local")
	s.fill(mcpURL, mcp.URL+mcptest.PathMCP)
	s.click(mcpHeaderAdd)
	s.fill(mcpHeaderName, "X-Token")
	s.fill(mcpHeaderValue, "first-secret")
	s.click(mcpRegister)
	s.waitText(mcpRow, "local", patience)
	s.waitText(mcpStatus, "active", patience)
	if got := seen.get(mcptest.PathMCP); got != "first-secret" {
		t.Errorf("the server got X-Token %q, want first-secret", got)
	}
	if s.onPage("first-secret") {
		t.Errorf("the header's value is on the page after registering")
	}

	s.clickIn(mcpRow, "local", mcpEdit)
	s.waitText(mcpHeaderNames, "X-Token", patience)
	s.fill(mcpEditURL, mcp.URL+mcptest.PathJSON)
	s.click(mcpHeadersReplace)
	s.fill(mcpEditHeaderV, "second-secret")
	s.click(mcpSave)
	s.waitText(mcpRow, mcptest.PathJSON, patience)
	s.waitText(mcpStatus, "active", patience)
	if got := seen.get(mcptest.PathJSON); got != "second-secret" {
		t.Errorf("the edited server got X-Token %q at %s, want second-secret", got, mcptest.PathJSON)
	}
	if s.onPage("second-secret") || s.onPage("first-secret") {
		t.Errorf("a header's value is on the page after the edit")
	}

	s.clickIn(mcpRow, "local", mcpDelete)
	s.clickIn(mcpRow, "local", mcpDeleteConfm)
	s.do("wait for the deleted server's row to go", patience, chromedp.WaitNotPresent(chromedp.CSS(tid(mcpRow))))
	if out := strings.TrimSpace(string(s.call("GET", "/api/v1/mcp-servers/", nil))); out != "[]" {
		t.Errorf("the servers after the delete: %s", out)
	}
	s.report.Clean(t)
}
