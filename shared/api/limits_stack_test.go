package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// fakeOpenAI is an OpenAI-compatible chat completions server that answers every call with the
// same usage (600 input and 400 output tokens) and counts the calls: the model of a budget test.
type fakeOpenAI struct{ calls atomic.Int64 }

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	f.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"spent"},"finish_reason":"stop"}],"usage":{"prompt_tokens":600,"completion_tokens":400}}`)
}

// newModelStack is newStack with the openai provider pointed at a fakeOpenAI.
func newModelStack(t *testing.T, extra ...func(*dynamodb.Options)) (*stack, *fakeOpenAI) {
	t.Helper()
	env := testEnv(t)
	model := &fakeOpenAI{}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	cfg := env.Config
	cfg.OpenAIBaseURL, cfg.OpenAIAPIKey = srv.URL, "sk-test"
	a := app.NewWithAWS(env.AWS, cfg, slog.New(slog.DiscardHandler), extra...)
	a.UseMCP(mcp.ForPolicy)
	mux, err := sam.NewRouter(env.Template, func(dir, _ string) (http.Handler, error) { return a.Handler(dir) })
	if err != nil {
		t.Fatal(err)
	}
	env.RunEventSources(t, a.Processor)
	return &stack{t: t, app: a, mux: mux}, model
}

// pricedSession is an llm_agent on the fake OpenAI server's gpt-4o-mini, which has a list price:
// each run uses 1,000 tokens and costs $0.00033.
const pricedSession = `{"name":"Priced","agent_type":"llm_agent","system_prompt":"Be brief.","llm_config":{"provider":"openai","model":"gpt-4o-mini"}}`

// overBudget checks a 429 of a spent budget: its message, and Retry-After until the next month.
func overBudget(t *testing.T, what string, res response, message string) {
	t.Helper()
	wantStatus(t, what, res, 429, "rate_limit_error", message)
	next := domain.NextMonth(time.Now())
	secs, err := strconv.Atoi(res.header.Get("Retry-After"))
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > time.Until(next)+time.Minute {
		t.Errorf("%s: Retry-After %q, want the seconds until %s", what, res.header.Get("Retry-After"), next)
	}
}

// TestBudgetsRefuseBeforeTheModel: an execute of a key whose monthly token budget is spent, in
// every mode (synchronous, queued, streamed, an answer), answers 429 naming the budget, and the
// model is not called; another key of the company still runs, until the company's cost budget,
// set by an admin, is spent too; clearing it lets runs through again.
func TestBudgetsRefuseBeforeTheModel(t *testing.T) {
	s, model := newModelStack(t)
	company := fmt.Sprintf("budget-%d", time.Now().UnixNano())
	_, admin := s.operatorKey(auth.NewKey{Owner: "ops", Company: company, Scopes: []string{auth.ScopeAdmin}})
	res := s.do(req{method: "POST", path: "/api/v1/api-keys/", key: admin, body: `{"name":"budgeted","limits":{"monthly_tokens":1500}}`})
	wantStatus(t, "budgeted key", res, 201, "", "")
	budgeted := res.json(t)["key"].(string)
	free := s.key("ops", company)

	sid := s.session(budgeted, pricedSession)
	for i := range 2 { // 0 then 1,000 tokens spent of 1,500: both run
		s.execute(budgeted, sid, `{"content":"go"}`)
		if got := model.calls.Load(); got != int64(i+1) {
			t.Fatalf("after execute %d the model had %d calls", i+1, got)
		}
	}
	month := domain.NextMonth(time.Now()).Format(time.DateOnly)
	keyMsg := "Monthly token budget of 1500 for this API key is spent; it resets on " + month
	path := "/api/v1/runtime/" + sid + "/execute/"
	overBudget(t, "execute", s.do(req{method: "POST", path: path, key: budgeted, body: `{"content":"more"}`}), keyMsg)
	overBudget(t, "queued", s.do(req{method: "POST", path: path + "?async=true", key: budgeted, body: `{"content":"more"}`}), keyMsg)
	overBudget(t, "streamed", s.do(req{method: "POST", path: path + "?stream=true", key: budgeted, body: `{"content":"more"}`}), keyMsg)
	overBudget(t, "answer", s.do(req{method: "POST", path: path, key: budgeted, body: `{"tool_results":[{"tool_call_id":"c1","output":"x"}]}`}), keyMsg)
	if got := model.calls.Load(); got != 2 {
		t.Errorf("the model had %d calls after the refusals, want 2", got)
	}
	// Reads are not refused.
	wantStatus(t, "messages", s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/messages/", key: budgeted}), 200, "", "")

	// Another key has no budget of its own.
	other := s.session(free, pricedSession)
	s.execute(free, other, `{"content":"go"}`)
	if got := model.calls.Load(); got != 3 {
		t.Fatalf("the model had %d calls, want 3", got)
	}
	// The company's cost budget: three runs at $0.00033 spent more than $0.0005.
	wantStatus(t, "set the company's budget", s.do(req{method: "PUT", path: "/api/v1/limits/", key: admin, body: `{"monthly_cost_usd":0.0005}`}), 200, "", "")
	coMsg := "Monthly cost budget of $0.0005 for this company is spent; it resets on " + month
	overBudget(t, "company budget", s.do(req{method: "POST", path: "/api/v1/runtime/" + other + "/execute/", key: free, body: `{"content":"more"}`}), coMsg)
	if got := model.calls.Load(); got != 3 {
		t.Errorf("the model had %d calls after the company's refusal, want 3", got)
	}
	wantStatus(t, "clear the company's budget", s.do(req{method: "PUT", path: "/api/v1/limits/", key: admin, body: `{"monthly_cost_usd":null}`}), 200, "", "")
	s.execute(free, other, `{"content":"again"}`)
	if got := model.calls.Load(); got != 4 {
		t.Errorf("the model had %d calls after the budget was cleared, want 4", got)
	}
}

// TestLimitsAdminOnlyAndAudited: only admin keys read and change the company's limits; a change
// sets what it gives, clears what it sends as null, keeps the rest, names a wrong value, and is
// in the audit log with the acting key and the company.
func TestLimitsAdminOnlyAndAudited(t *testing.T) {
	s := newStack(t)
	company := fmt.Sprintf("limits-%d", time.Now().UnixNano())
	adminKey, admin := s.operatorKey(auth.NewKey{Owner: "ops", Company: company, Scopes: []string{auth.ScopeAdmin}})
	plain := s.key("ops", company)
	wantStatus(t, "read by a non-admin", s.do(req{method: "GET", path: "/api/v1/limits/", key: plain}), 403, "permission_error", domain.MsgNoPermission)
	wantStatus(t, "change by a non-admin", s.do(req{method: "PUT", path: "/api/v1/limits/", key: plain, body: `{"monthly_tokens":5}`}), 403, "permission_error", domain.MsgNoPermission)

	get := func() map[string]any {
		t.Helper()
		return s.ok("GET", "/api/v1/limits/", admin, nil).json(t)
	}
	if got, want := get(), map[string]any{"object": "limits", "requests_per_minute": nil, "monthly_tokens": nil, "monthly_cost_usd": nil}; !equalJSON(got, want) {
		t.Errorf("limits of a new company = %v, want %v", got, want)
	}
	put := func(body string) map[string]any {
		t.Helper()
		return s.ok("PUT", "/api/v1/limits/", admin, body).json(t)
	}
	want := map[string]any{"object": "limits", "requests_per_minute": 1000.0, "monthly_tokens": 2000000.0, "monthly_cost_usd": 25.5}
	if got := put(`{"requests_per_minute":1000,"monthly_tokens":2000000,"monthly_cost_usd":25.5}`); !equalJSON(got, want) {
		t.Errorf("set = %v, want %v", got, want)
	}
	want["monthly_tokens"] = nil
	if got := put(`{"monthly_tokens":null}`); !equalJSON(got, want) || !equalJSON(get(), want) {
		t.Errorf("cleared one = %v, want %v", got, want)
	}
	for body, field := range map[string]string{`{"monthly_tokens":0}`: "monthly_tokens", `{"monthly_cost_usd":-1}`: "monthly_cost_usd",
		`{"requests_per_minute":1.5}`: "requests_per_minute", `{"monthly_budget":1}`: "monthly_budget"} {
		if got, _ := fieldError(t, s.do(req{method: "PUT", path: "/api/v1/limits/", key: admin, body: body})); got != field {
			t.Errorf("%s: field %q, want %q", body, got, field)
		}
	}
	var entries []struct {
		Action, ActorKeyID, TargetID string
	}
	raw := s.ok("GET", "/api/v1/audit/?action=limits.updated", admin, nil).body
	var page []map[string]any
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	for _, e := range page {
		entries = append(entries, struct{ Action, ActorKeyID, TargetID string }{e["action"].(string), e["actor_key_id"].(string), e["target_id"].(string)})
		if strings.Contains(string(raw), admin) {
			t.Errorf("the audit log shows a secret: %s", raw)
		}
	}
	if len(entries) != 2 {
		t.Fatalf("audit = %s, want the two changes", raw)
	}
	for _, e := range entries {
		if e.ActorKeyID != adminKey.ID || e.TargetID != company {
			t.Errorf("audit entry %+v, want by %s of %s", e, adminKey.ID, company)
		}
	}
}

// parallel sends n requests at once and counts the answers by status.
func parallel(s *stack, n int, r func(i int) req) map[int]int {
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := send(s.t, s.mux, r(i))
			mu.Lock()
			counts[res.status]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return counts
}

// awayFromTheMinute waits, if need be, until a fixed one-minute window has more than margin
// left, so that a burst of requests falls in one window.
func awayFromTheMinute(margin time.Duration) {
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < margin {
		time.Sleep(left + 100*time.Millisecond)
	}
}

// TestRateLimitUnderConcurrency: 50 requests at once against a limit of 10 per minute let
// exactly 10 through, for a key's rate_limit and for a company's requests_per_minute shared by
// five keys without limits of their own (one conditional UpdateItem per request on DynamoDB
// Local decides).
func TestRateLimitUnderConcurrency(t *testing.T) {
	s := newStack(t)
	company := fmt.Sprintf("burst-%d", time.Now().UnixNano())
	key := s.key("alice", company, func(k *auth.NewKey) { k.RateLimit = 10 })
	awayFromTheMinute(15 * time.Second)
	got := parallel(s, 50, func(int) req { return req{method: "GET", path: "/api/v1/agent/", key: key} })
	if got[200] != 10 || got[429] != 40 {
		t.Errorf("a key's limit of 10: %v, want 10 × 200 and 40 × 429", got)
	}

	_, admin := s.operatorKey(auth.NewKey{Owner: "ops", Company: company + "-co", Scopes: []string{auth.ScopeAdmin}})
	wantStatus(t, "company limit", s.do(req{method: "PUT", path: "/api/v1/limits/", key: admin, body: `{"requests_per_minute":10}`}), 200, "", "")
	keys := make([]string, 5)
	for i := range keys {
		keys[i] = s.key("ops", company+"-co")
	}
	awayFromTheMinute(15 * time.Second)
	got = parallel(s, 50, func(i int) req { return req{method: "GET", path: "/api/v1/agent/", key: keys[i%5]} })
	if got[200] != 10 || got[429] != 40 {
		t.Errorf("a company's limit of 10 over five keys: %v, want 10 × 200 and 40 × 429", got)
	}
	res := s.do(req{method: "GET", path: "/api/v1/agent/", key: keys[0]})
	if res.status != 429 || res.header.Get("RateLimit-Policy") != `"per-company";q=10;w=60` || res.header.Get("X-RateLimit-Limit") != "10" ||
		!strings.HasPrefix(res.header.Get("RateLimit"), `"per-company";r=0;t=`) || res.header.Get("Retry-After") == "" {
		t.Errorf("over the company's limit: %d %v", res.status, res.header)
	}
}

// limitedKey makes a key of k (owner ops) in a new company named prefix-<nanoseconds>, whose
// limits are set first by its admin key to the PUT /api/v1/limits/ body limits (none if "").
func (s *stack) limitedKey(tb testing.TB, prefix string, k auth.NewKey, limits string) (company, key string) {
	tb.Helper()
	company = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	_, admin := s.operatorKey(auth.NewKey{Owner: "ops", Company: company, Scopes: []string{auth.ScopeAdmin}})
	if limits != "" {
		if res := s.do(req{method: "PUT", path: "/api/v1/limits/", key: admin, body: limits}); res.status != 200 {
			tb.Fatalf("company limits %s: %d %s", limits, res.status, res.body)
		}
	}
	k.Owner, k.Company = "ops", company
	_, key = s.operatorKey(k)
	return company, key
}

// TestLimitsRoundTrips counts an execute's DynamoDB calls on a warm instance: a key and company
// without limits cost none beyond the execute's four (lease, history, commit, count); a key
// budget and a company budget together cost one more (one BatchGetItem of the two month
// counters), a key's rate limit one more (its window's UpdateItem).
func TestLimitsRoundTrips(t *testing.T) {
	meter := &ddbMeter{}
	s := newStack(t, meter.option)
	tokens := int64(1 << 40)
	for _, tc := range []struct {
		name    string
		key     auth.NewKey
		company string
		want    int64
	}{
		{"no limits", auth.NewKey{}, "", 4},
		{"key and company budgets", auth.NewKey{Budget: domain.Budget{MonthlyTokens: &tokens}}, `{"monthly_cost_usd":1000}`, 5},
		{"key rate limit", auth.NewKey{RateLimit: 1000}, "", 5},
	} {
		_, key := s.limitedKey(t, "trips", tc.key, tc.company)
		sid := s.session(key, flatSession) // warms the key's and the company's cache entries
		meter.reset()
		s.execute(key, sid, `{"content":"count me"}`)
		if got := meter.calls.Load(); got != tc.want {
			t.Errorf("%s: an execute made %d DynamoDB calls, want %d", tc.name, got, tc.want)
		}
	}
}
