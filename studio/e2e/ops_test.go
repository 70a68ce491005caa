package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// The Operations area's names (studio/README.md) these tests drive.
const (
	navOps                              = "nav-ops"
	opsWebhooks, opsUsage               = "ops-webhooks", "ops-usage"
	opsLimits, opsAudit                 = "ops-limits", "ops-audit"
	opsForbidden                        = "ops-forbidden"
	hookURL, hookCreate, hookSecret     = "hook-url", "hook-create", "hook-secret"
	hookRow, hookState, hookOpen        = "hook-row", "hook-state", "hook-open"
	hookToggle, hookBack                = "hook-toggle", "hook-back"
	hookEdit, hookEditEvent, hookSave   = "hook-edit", "hook-edit-event", "hook-save"
	hookEditDescription                 = "hook-edit-description"
	hookRotate, hookRotateConfirm       = "hook-rotate", "hook-rotate-confirm"
	hookDelete, hookDeleteConfirm       = "hook-delete", "hook-delete-confirm"
	deliveryRow, deliveryStatus         = "delivery-row", "delivery-status"
	deliveryCode, deliveryAttempts      = "delivery-code", "delivery-attempts"
	deliveryRedeliver                   = "delivery-redeliver"
	opsAgentConfig                      = `{"name":"Ops bot","agent_type":"llm_agent","system_prompt":"Answer briefly.","llm_config":{"provider":"local","model":"dev"}}`
	opsWebhookEvent                     = "execution.completed"
	opsAdminName                        = "ops admin"
	opsDelivered, opsRefused            = http.StatusOK, http.StatusServiceUnavailable
	opsReceiverPath                     = "/hook"
	opsSignatureHeader, opsIDHeader     = webhooks.HeaderSignature, "webhook-id"
	opsTimestampHeader                  = webhooks.HeaderTimestamp
	opsPendingStatus, opsSucceededState = "pending", "succeeded"
	usageBar, usageRow, usageTotal      = "usage-bar", "usage-row", "usage-total"
	usageGroupAgent, usageGroupKey      = "usage-group-agent", "usage-group-api_key"
	usageMetric, usageChart             = "usage-metric", "usage-chart"
	limitsRPM, limitsTokens             = "limits-requests_per_minute", "limits-monthly_tokens"
	limitsSave, limitsSaved, limitsUsed = "limits-save", "limits-saved", "limits-used"
	limitsKeyRow                        = "limits-key-row"
	auditRow, auditAction, auditActor   = "audit-row", "audit-action", "audit-actor"
	auditFrom, auditTo, auditClear      = "audit-from", "audit-to", "audit-clear"
	auditKey                            = "audit-key"
	mcpOAuth, mcpAuthorize              = "mcp-oauth", "mcp-authorize"
	keyBudgetTokens, keyBudgetCost      = "key-budget-tokens", "key-budget-cost"
)

// asAdmin makes the studio sign in with an admin key of the test's company (limits and the
// audit log need the admin scope; make dev's key is one too).
func (s *studio) asAdmin() {
	s.t.Helper()
	k, secret, err := s.app.Auth.CreateKey(context.Background(), auth.NewKey{Name: opsAdminName, Owner: "alice", Company: "acme", Scopes: []string{auth.ScopeAdmin}})
	if err != nil {
		s.t.Fatal(err)
	}
	s.key, s.keyID = secret, k.ID
}

// runAgent opens a session on the stored agent agentKey and runs one execute through the API,
// with the test's key; it returns the answer's status code.
func (s *studio) runAgent(agentKey string) int {
	s.t.Helper()
	return s.runAgentAs(s.key, agentKey)
}

// runAgentAs is runAgent with the API key key.
func (s *studio) runAgentAs(key, agentKey string) int {
	s.t.Helper()
	was := s.key
	s.key = key
	sid, _ := s.api("GET", "/api/v1/sessions/from-agent/?agent_key="+agentKey, nil)["session_id"].(string)
	s.key = was
	req, err := http.NewRequest("POST", s.base+"/api/v1/runtime/"+sid+"/execute/", strings.NewReader(`{"content":"hello"}`))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}

// receiver is a webhook endpoint of the test: it answers status and keeps what it was sent.
type receiver struct {
	mu     sync.Mutex
	status int
	hits   []hit
}

type hit struct {
	header http.Header
	body   []byte
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hits = append(r.hits, hit{req.Header.Clone(), b})
	w.WriteHeader(r.status)
}

func (r *receiver) answer(status int) {
	r.mu.Lock()
	r.status = status
	r.mu.Unlock()
}

// wait returns the n-th request (from 1) once it has come.
func (r *receiver) wait(t *testing.T, n int) hit {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		r.mu.Lock()
		if len(r.hits) >= n {
			h := r.hits[n-1]
			r.mu.Unlock()
			return h
		}
		r.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("the receiver has %d requests after %v, want %d", len(r.hits), patience, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// signedBy fails unless h carries a Standard Webhooks signature of its body under secret.
func signedBy(t *testing.T, h hit, secret, what string) {
	t.Helper()
	ts, err := strconv.ParseInt(h.header.Get(opsTimestampHeader), 10, 64)
	if err != nil {
		t.Fatalf("%s: timestamp %q: %v", what, h.header.Get(opsTimestampHeader), err)
	}
	want, err := webhooks.Sign([]string{secret}, h.header.Get(opsIDHeader), time.Unix(ts, 0), h.body)
	if err != nil {
		t.Fatalf("%s: the secret shown %q: %v", what, secret, err)
	}
	if got := strings.Fields(h.header.Get(opsSignatureHeader)); !slices.Contains(got, want) {
		t.Errorf("%s: signatures %q, none is %q (the secret shown)", what, got, want)
	}
}

// axeBoth runs axe-core on the page in the light and the dark scheme, and leaves it light.
func (s *studio) axeBoth(what string) {
	s.t.Helper()
	for _, dark := range []bool{true, false} {
		s.scheme(dark)
		s.axe(fmt.Sprintf("%s (dark %t)", what, dark))
	}
}

// waitOther waits until the element named name holds a text that starts with prefix and is not
// was (a secret replaced by another), and returns it.
func (s *studio) waitOther(name, prefix, was string) string {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		for _, txt := range s.texts(name) {
			if strings.HasPrefix(txt, prefix) && txt != was {
				return txt
			}
		}
		if time.Now().After(deadline) {
			s.fail("no %s other than %q within %v", name, was, patience)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOpsWebhooks: in Operations → Webhooks a URL that is not one is refused at its field; a
// webhook to the test's receiver is created with its secret shown once; an execute reaches the
// receiver signed with that secret, and the webhook's deliveries show it refused (HTTP 503,
// pending, 1 attempt); delivered again once the receiver accepts, it shows succeeded with HTTP
// 200 and 2 attempts; the secret rotated is shown anew and the next delivery carries signatures
// under the new and the old secret; disabled it reads disabled; edited, it shows its new
// description and events; deleted, the list is empty
// again and says what to do. Every state is axe-clean, light and dark, under one h1.
func TestOpsWebhooks(t *testing.T) {
	s := newStudio(t)
	s.asAdmin()
	rcv := &receiver{status: opsRefused}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	agentKey := s.createAgent(opsAgentConfig)

	s.signIn()
	s.click(navOps)
	s.click(opsWebhooks)
	s.waitText(empty, "No webhooks yet", patience)
	s.listsLoaded()
	s.oneH1("Operations → Webhooks", "Operations")
	s.axeBoth("the empty webhooks")

	s.fill(hookURL, "not a URL")
	s.click(hookCreate)
	s.visible(fieldError)
	if f := s.eval(fmt.Sprintf(`document.querySelector(%q).dataset.field`, tid(fieldError))); f != "url" {
		t.Errorf("the bad URL's error is at %v, want url", f)
	}
	s.axeBoth("a webhook refused at its URL")
	s.report.Reset() // the 400 of the bad URL, provoked on purpose

	url := srv.URL + opsReceiverPath
	s.fill(hookURL, url)
	s.click(hookCreate)
	secret := s.waitText(hookSecret, "whsec_", patience)
	s.waitText(hookRow, url, patience)
	s.waitText(hookState, "enabled", patience)
	s.axeBoth("a webhook created with its secret")

	if code := s.runAgent(agentKey); code != http.StatusOK {
		t.Fatalf("execute: %d", code)
	}
	first := rcv.wait(t, 1)
	signedBy(t, first, secret, "the first delivery")
	if !strings.Contains(string(first.body), opsWebhookEvent) {
		t.Errorf("the first delivery %s is not of %s", first.body, opsWebhookEvent)
	}

	s.clickIn(hookRow, url, hookOpen)
	s.waitText(deliveryCode, strconv.Itoa(opsRefused), patience)
	s.waitText(deliveryStatus, opsPendingStatus, patience)
	s.waitText(deliveryAttempts, "1 attempt", patience)
	s.oneH1("a webhook's deliveries", "Operations")
	s.axeBoth("a refused delivery")

	rcv.answer(opsDelivered)
	s.click(deliveryRedeliver)
	second := rcv.wait(t, 2)
	if second.header.Get(opsIDHeader) != first.header.Get(opsIDHeader) {
		t.Errorf("delivered again as %q, want the same webhook-id %q", second.header.Get(opsIDHeader), first.header.Get(opsIDHeader))
	}
	s.waitText(deliveryStatus, opsSucceededState, patience)
	s.waitText(deliveryCode, strconv.Itoa(opsDelivered), patience)
	s.waitText(deliveryAttempts, "2 attempts", patience)
	s.axeBoth("a delivery delivered again")
	s.shot("ops-deliveries")

	s.click(hookBack)
	s.clickIn(hookRow, url, hookRotate)
	s.clickIn(hookRow, url, hookRotateConfirm)
	rotated := s.waitOther(hookSecret, "whsec_", secret)
	s.axeBoth("a rotated secret")
	s.clickIn(hookRow, url, hookOpen)
	s.click(deliveryRedeliver)
	third := rcv.wait(t, 3)
	signedBy(t, third, rotated, "the delivery after the rotation (new secret)")
	signedBy(t, third, secret, "the delivery after the rotation (old secret)")

	s.click(hookBack)
	s.clickIn(hookRow, url, hookToggle)
	s.waitText(hookState, "disabled", patience)
	s.clickIn(hookRow, url, hookEdit)
	s.fill(hookEditDescription, "CI notifications")
	s.clickIn(hookEditEvent, "execution.failed", "")
	s.click(hookSave)
	if row := s.waitText(hookRow, "CI notifications", patience); strings.Contains(row, "execution.failed") || !strings.Contains(row, opsWebhookEvent) {
		t.Errorf("the edited webhook reads %q, want %s and no longer execution.failed", row, opsWebhookEvent)
	}
	s.axeBoth("an edited, disabled webhook")
	s.clickIn(hookRow, url, hookDelete)
	s.clickIn(hookRow, url, hookDeleteConfirm)
	s.waitText(empty, "No webhooks yet", patience)
	s.report.Clean(t)
}

// bars returns the usage chart's bars, label to value, once it has n of them.
func (s *studio) bars(n int) map[string]float64 {
	s.t.Helper()
	s.count("the usage chart's bars", tid(usageBar), n)
	out := map[string]float64{}
	arr, _ := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q), b => [b.dataset.label, Number(b.dataset.value)])`, tid(usageBar))).([]any)
	for _, x := range arr {
		pair, _ := x.([]any)
		if len(pair) == 2 {
			label, _ := pair[0].(string)
			v, _ := pair[1].(float64)
			out[label] += v
		}
	}
	return out
}

// valueOf returns the value of the input named name.
func (s *studio) valueOf(name string) string {
	s.t.Helper()
	v, _ := s.eval(fmt.Sprintf(`document.querySelector(%q)?.value ?? ""`, tid(name))).(string)
	return v
}

// fieldAt waits for a field error and fails unless one is at field.
func (s *studio) fieldAt(field string) {
	s.t.Helper()
	s.visible(fieldError)
	js := fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.dataset.field)`, tid(fieldError))
	got, _ := s.eval(js).([]any)
	if !slices.Contains(got, any(field)) {
		s.t.Errorf("field errors at %v, want one at %s", got, field)
	}
}

// TestOpsUsageLimitsAudit: three runs by two keys on two agents show in Operations → Usage and
// cost: today's bar holds 3 requests out of 30 days, by agent the bars are 2 and 1 under the
// agents' names, by key 2 and 1 under the keys' names, and the tokens are counted; the table
// holds the same numbers. A key made in Settings with monthly budgets shows them in Limits. In Limits a rate of 0 is refused at its field; a monthly token budget
// of 1 is saved, read back after a reload and enforced (the next execute answers 429) and,
// cleared, runs go again; the second key's own budget shows in its row. The audit log lists the
// key created, the webhook created and deleted and each limits change, by the admin key through
// its sign-in token; kept to one action it shows only those; a window in the future shows none
// and says so; a window ending before it starts is refused at "to"; kept to one acting key
// (picked by its name) it shows that key's entries only, and its filters, in the address, outlive
// a reload. Every screen is axe-clean, light and dark.
func TestOpsUsageLimitsAudit(t *testing.T) {
	s := newStudio(t)
	s.asAdmin()
	bot := s.createAgent(opsAgentConfig)
	helper := s.createAgent(strings.Replace(opsAgentConfig, "Ops bot", "Ops helper", 1))
	second := s.api("POST", "/api/v1/api-keys/", map[string]any{"name": "ops second", "limits": map[string]any{"monthly_tokens": 100000}})
	secondKey, _ := second["key"].(string)
	hook := s.api("POST", "/api/v1/webhooks/", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{opsWebhookEvent}})
	s.call("DELETE", "/api/v1/webhooks/"+hook["id"].(string)+"/", nil)
	for _, run := range []struct{ key, agent string }{{s.key, bot}, {s.key, bot}, {secondKey, helper}} {
		if code := s.runAgentAs(run.key, run.agent); code != http.StatusOK {
			t.Fatalf("execute %s: %d", run.agent, code)
		}
	}

	s.signIn()
	s.click(navOps)
	s.click(opsUsage)
	byDay := s.bars(30)
	total, today := 0.0, 0.0
	for _, v := range byDay {
		total += v
	}
	if v, _ := s.eval(fmt.Sprintf(`Number(Array.from(document.querySelectorAll(%q)).at(-1).dataset.value)`, tid(usageBar))).(float64); v == 3 {
		today = v
	}
	if total != 3 || today != 3 {
		t.Errorf("by day: %v requests in all and %v on the last bar (today), want 3 and 3; bars %v", total, today, byDay)
	}
	s.waitText(usageTotal, "3", patience)
	s.waitText(usageRow, "3", patience)
	s.oneH1("Operations → Usage", "Operations")
	s.axeBoth("usage by day")

	s.click(usageGroupAgent)
	s.waitText(usageRow, "Ops helper", patience)
	if got, want := s.bars(2), map[string]float64{"Ops bot": 2, "Ops helper": 1}; !maps.Equal(got, want) {
		t.Errorf("by agent: bars %v, want %v", got, want)
	}
	s.axeBoth("usage by agent")
	s.shot("ops-usage")

	s.click(usageGroupKey)
	s.waitText(usageRow, "ops second", patience)
	byKey := s.bars(2)
	if got := fmt.Sprint(byKey); len(byKey) != 2 || !strings.Contains(got, opsAdminName) || !strings.Contains(got, "ops second") {
		t.Errorf("by key: bars %v, want the keys %q and %q by name", byKey, opsAdminName, "ops second")
	}
	for label, v := range byKey {
		if want := map[bool]float64{true: 2, false: 1}[strings.HasPrefix(label, opsAdminName)]; v != want {
			t.Errorf("by key: %s has %v requests, want %v", label, v, want)
		}
	}
	s.fill(usageMetric, "tokens")
	for label, v := range s.bars(2) {
		if v <= 0 {
			t.Errorf("by key, tokens: %s has %v", label, v)
		}
	}
	s.axeBoth("tokens by key")

	// A key made in Settings with its own budgets shows them in Limits, beside the one made
	// through the API.
	s.click(navSettings)
	s.fill(keyName, "budgeted")
	s.fill(keyBudgetTokens, "5000")
	s.fill(keyBudgetCost, "2.5")
	s.click(keyCreate)
	s.waitText(keySecret, "ak_", patience)
	s.click(navOps)
	s.click(opsLimits)
	s.waitText(limitsKeyRow, "ops second", patience)
	s.waitText(limitsKeyRow, "100,000", patience)
	if row := s.waitText(limitsKeyRow, "budgeted", patience); !strings.Contains(row, "5,000") || !strings.Contains(row, "$2.50") {
		t.Errorf("the key made with budgets reads %q in Limits, want 5,000 tokens and $2.50", row)
	}
	s.fill(limitsRPM, "0")
	s.click(limitsSave)
	s.fieldAt("requests_per_minute")
	s.oneH1("Operations → Limits", "Operations")
	s.axeBoth("a limit refused at its field")
	s.report.Reset() // the 400, provoked on purpose
	s.fill(limitsRPM, "")
	s.fill(limitsTokens, "1")
	s.click(limitsSave)
	s.visible(limitsSaved)
	s.waitText(limitsUsed, "of 1", patience)
	s.do("reload", patience, chromedp.Reload())
	s.visible(limitsSave)
	deadline := time.Now().Add(patience)
	for s.valueOf(limitsTokens) != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("after a reload the monthly token budget reads %q, want 1", s.valueOf(limitsTokens))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := s.runAgent(bot); code != http.StatusTooManyRequests {
		t.Errorf("an execute over the company's monthly token budget answered %d, want 429", code)
	}
	s.axeBoth("limits set")
	s.fill(limitsTokens, "")
	s.click(limitsSave)
	s.waitText(limitsUsed, "of none", patience)
	if code := s.runAgent(bot); code != http.StatusOK {
		t.Errorf("an execute after the budget was cleared answered %d, want 200", code)
	}

	s.click(opsAudit)
	for a, n := range map[string]int{"api_key.created": 2, "webhook.created": 1, "webhook.deleted": 1, "limits.updated": 2} {
		s.count("audit rows of "+a, tid(auditRow)+`[data-action="`+a+`"]`, n)
	}
	s.waitText(auditActor, opsAdminName, patience)
	s.waitText(auditActor, "sign-in token", patience)
	s.oneH1("Operations → Audit log", "Operations")
	s.axeBoth("the audit log")
	s.fill(auditAction, "limits.updated")
	s.count("audit rows kept to limits.updated", tid(auditRow)+`:not([data-action="limits.updated"])`, 0)
	s.count("audit rows of limits.updated", tid(auditRow), 2)
	s.fill(auditFrom, "2099-01-01T00:00")
	s.waitText(empty, "Nothing matches", patience)
	s.axeBoth("an audit filter matching nothing")
	s.fill(auditTo, "2098-01-01T00:00")
	s.fieldAt("to")
	s.axeBoth("an audit window refused at to")
	s.report.Reset() // the 400, provoked on purpose
	s.click(auditClear)
	s.count("audit rows after the filters are cleared", tid(auditRow), 6)

	// Another admin key acts through the API. Kept to it by name (By), the log shows its entry
	// alone; the filters are in the address, so a reload keeps them; kept to the signed-in key,
	// only that key's entries show.
	auditor, secret, err := s.app.Auth.CreateKey(context.Background(), auth.NewKey{Name: "ops auditor", Owner: "bob", Company: "acme", Scopes: []string{auth.ScopeAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	was := s.key
	s.key = secret
	s.api("POST", "/api/v1/webhooks/", map[string]any{"url": "http://127.0.0.1:9/audited", "events": []string{opsWebhookEvent}})
	s.key = was
	s.do("reload", patience, chromedp.Reload())
	s.count("audit rows with the auditor's", tid(auditRow), 7)
	s.choose(auditKey, "ops auditor", true)
	s.count("audit rows of the auditor", tid(auditRow), 1)
	s.count("audit rows of the auditor that are not its webhook", tid(auditRow)+`:not([data-action="webhook.created"])`, 0)
	s.waitText(auditActor, "ops auditor", patience)
	if l := s.location(); !strings.Contains(l, "key="+auditor.ID) {
		t.Errorf("the audit log kept to a key is at %s, want key=%s in the address", l, auditor.ID)
	}
	s.fill(auditAction, "webhook.created")
	s.do("reload", patience, chromedp.Reload())
	s.count("audit rows of the auditor's webhooks after a reload", tid(auditRow), 1)
	s.waitText(auditActor, "ops auditor", patience)
	if k, a := s.valueOf(auditKey), s.valueOf(auditAction); k != auditor.ID || a != "webhook.created" {
		t.Errorf("after a reload the filters read key %q and action %q, want %s and webhook.created", k, a, auditor.ID)
	}
	s.axeBoth("the audit log kept to one key")
	s.choose(auditKey, opsAdminName, true)
	s.waitText(auditActor, opsAdminName, patience)
	s.count("audit rows of the signed-in key's webhooks", tid(auditRow)+`:not([data-action="webhook.created"])`, 0)
	s.count("audit rows of the signed-in key's webhooks", tid(auditRow), 1)
	if got := s.texts(auditActor); len(got) != 1 || !strings.Contains(got[0], opsAdminName) {
		t.Errorf("kept to the signed-in key, the actors read %q, want %s", got, opsAdminName)
	}
	s.click(auditClear)
	s.count("audit rows after the filters are cleared", tid(auditRow), 7)
	if l := s.location(); strings.Contains(l, "key=") || strings.Contains(l, "action=") {
		t.Errorf("cleared, the audit log is at %s, want no filters in the address", l)
	}
	s.report.Clean(t)
}

// TestOpsMCPConnect: an MCP server behind OAuth (infra/mcptest's authorization server, which
// registers the client dynamically and answers at once) is registered in Settings with OAuth
// ticked and shows auth_required and Connect; Connect opens the authorization in a window of its own,
// whose return to /studio/oauth/callback completes it in the studio's tab: the server shows
// active with its tools, and its button Reconnect. Signed in with a key without the admin scope, Limits and the audit log
// say that they need it.
func TestOpsMCPConnect(t *testing.T) {
	s := newStudio(t)
	o, mcpAt, stop, err := mcptest.StartOAuth(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	s.signIn()
	s.click(navSettings)
	s.fill(mcpName, "guarded")
	s.fill(mcpURL, mcpAt)
	s.click(mcpOAuth)
	s.click(mcpRegister)
	s.waitText(mcpStatus, "auth_required", patience)
	s.axeBoth("an MCP server waiting for its authorization")
	if got := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q), b => b.textContent + "|" + b.getAttribute("aria-label")).join(",")`, tid(mcpAuthorize))); got != "Connect|Connect guarded" {
		t.Errorf("the button of a server waiting for its authorization reads %q, want Connect named Connect guarded", got)
	}
	s.clickIn(mcpRow, "guarded", mcpAuthorize)
	s.waitText(mcpStatus, "active", patience)
	s.waitText(mcpRow, "tools", patience)
	s.waitText(mcpAuthorize, "Reconnect", patience)
	if got := s.eval(fmt.Sprintf(`document.querySelector(%q).getAttribute("aria-label")`, tid(mcpAuthorize))); got != "Reconnect guarded" {
		t.Errorf("the connected server's button is named %q, want Reconnect guarded", got)
	}
	s.axeBoth("a connected MCP server")
	if n := len(o.Authorizations); n != 1 {
		t.Errorf("the authorization server saw %d authorization requests, want 1", n)
	}
	if n := len(o.TokenRequests); n == 0 {
		t.Error("the authorization server saw no token request")
	}

	// The test's key is not an admin: Limits and the audit log say which scope they need.
	s.report.Reset() // the 403s that say so
	s.click(navOps)
	for _, screen := range []string{opsLimits, opsAudit} {
		s.click(screen)
		s.waitText(opsForbidden, "admin", patience)
		s.axeBoth(screen + " refused to a key without admin")
	}
	if c := s.report.CSPViolations(); len(c) > 0 {
		t.Errorf("CSP violations: %v", c)
	}
}

// TestOpsSteady: each Operations screen opened by address with every API request 300 ms slow
// (webhooks, a webhook's deliveries, usage, limits, the audit log, each with content) keeps its
// layout shift at or under 0.1 as it loads, and is axe-clean loaded; at a phone's width (390×844)
// none scrolls sideways.
func TestOpsSteady(t *testing.T) {
	s := newStudio(t)
	s.asAdmin()
	rcv := &receiver{status: opsDelivered}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	hook, _ := s.api("POST", "/api/v1/webhooks/", map[string]any{"url": srv.URL + opsReceiverPath, "events": []string{opsWebhookEvent}})["id"].(string)
	if code := s.runAgent(s.createAgent(opsAgentConfig)); code != http.StatusOK {
		t.Fatalf("execute: %d", code)
	}
	rcv.wait(t, 1)
	s.signIn()
	screens := []struct{ path, what, sel string }{
		{"/studio/ops/webhooks", "Operations › Webhooks", tid(hookRow)},
		{"/studio/ops/webhooks/" + hook, "Operations › a webhook's deliveries", tid(deliveryRow)},
		{"/studio/ops/usage", "Operations › Usage and cost", tid(usageRow)},
		{"/studio/ops/limits", "Operations › Limits", tid(limitsKeyRow)},
		{"/studio/ops/audit", "Operations › Audit log", tid(auditRow)},
	}
	for _, sc := range screens {
		s.steady(sc.what, sc.path, sc.sel)
	}
	// At a phone's width, each screen with its content fits: nothing scrolls sideways.
	s.do("set a phone's viewport", patience, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, sc := range screens {
		s.do("open "+sc.path, patience, chromedp.Navigate(s.base+sc.path))
		s.do("wait for "+sc.sel, patience, chromedp.WaitVisible(chromedp.CSS(sc.sel)))
		s.listsLoaded()
		s.fits(sc.what + " at a phone's width")
	}
	s.report.Clean(t)
}
