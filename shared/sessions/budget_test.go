package sessions_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/auth/authtest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
	"github.com/agentorch/agentorch/shared/usage/usagetest"
)

// budgetLimiter is auth's Limiter over usagetest's counters (which the runs count into):
// companies' limits in a map, and the reads of limits and counters counted.
type budgetLimiter struct {
	*usagetest.Store
	mu                 sync.Mutex
	limits             map[string]domain.Limits
	limitReads, counts int
}

func (l *budgetLimiter) Hit(context.Context, string, time.Time, int, time.Time) (int, error) {
	return 0, nil
}

func (l *budgetLimiter) CompanyLimits(_ context.Context, company string) (domain.Limits, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.limitReads++
	return l.limits[company], nil
}

func (l *budgetLimiter) UpdateCompanyLimits(context.Context, string, domain.LimitsChange, string, time.Time) (domain.Limits, error) {
	panic("not used")
}

func (l *budgetLimiter) MonthUsage(ctx context.Context, company, keyID string, ofCompany bool, month time.Time) (key, co domain.UsageCount, err error) {
	l.mu.Lock()
	l.counts++
	l.mu.Unlock()
	return l.Store.MonthUsage(ctx, company, keyID, ofCompany, month)
}

// message is the client's message of a domain error.
func message(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Message
	}
	return ""
}

// budgetRig is a sessions service whose runs are counted into usagetest's counters and held to
// the budgets auth.Service checks over them, with a model that counts its calls.
type budgetRig struct {
	st      *memStore
	q       *queue
	ev      *webhookEvents
	lim     *budgetLimiter
	budgets *auth.Service
	model   holdModel
	svc     *sessions.Service
}

func newBudgetRig(t *testing.T, company domain.Limits) *budgetRig {
	t.Helper()
	r := &budgetRig{st: newMemStore(), q: &queue{}, ev: &webhookEvents{}, model: newHoldModel(1 << 20),
		lim: &budgetLimiter{Store: usagetest.NewStore(), limits: map[string]domain.Limits{"acme": company}}}
	r.budgets = auth.NewService(authtest.NewStore(), r.lim, auth.NewTokens(auth.StaticSecret("0123456789abcdef0123456789abcdef"), time.Minute), time.Minute)
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": r.model}}
	r.svc = sessions.New(sessions.Deps{Store: r.st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg,
		Queue: r.q, Events: r.ev, Usage: r.lim.Store, Budgets: r.budgets}, sessions.Limits{})
	return r
}

// run hands the queue's job i to the worker.
func (r *budgetRig) run(t *testing.T, i int) {
	t.Helper()
	r.q.mu.Lock()
	body := r.q.bodies[i]
	r.q.mu.Unlock()
	if err := r.svc.ProcessJob(context.Background(), body); err != nil {
		t.Fatalf("job %d: %v", i, err)
	}
}

// TestQueuedRunHeldToBudget: two executions are queued while the budget holds; the first runs
// and spends it; the worker then fails the second before any model call, with the error the
// API's edge gives an execute over that budget (rate_limit_error, the budget and its reset day),
// and publishes execution.failed. The key's budget travels with the job; the company's is read
// through auth's cache. A queued answer is held the same way.
func TestQueuedRunHeldToBudget(t *testing.T) {
	tokens := int64(1)
	for _, tc := range []struct {
		name    string
		key     domain.Budget
		company domain.Limits
	}{
		{"key", domain.Budget{MonthlyTokens: &tokens}, domain.Limits{}},
		{"company", domain.Budget{}, domain.Limits{Budget: domain.Budget{MonthlyTokens: &tokens}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newBudgetRig(t, tc.company)
			ctx := context.Background()
			p := alice
			p.KeyID, p.Budget = "key-1", tc.key
			sess, err := r.svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
			if err != nil {
				t.Fatal(err)
			}
			first, err := r.svc.Enqueue(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello there")})
			if err != nil {
				t.Fatal(err)
			}
			second, err := r.svc.Enqueue(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("and again")})
			if err != nil {
				t.Fatal(err)
			}
			r.run(t, 0)
			if _, e, _, err := r.svc.GetExecution(ctx, p, sess.ID, first.ID); err != nil || e.Status != domain.ExecCompleted {
				t.Fatalf("first: %v %+v", err, e)
			}
			calls := r.model.calls.Load()
			_, edge := r.budgets.CheckBudget(ctx, p) // what the edge would answer now
			if domain.KindOf(edge) != domain.KindRateLimited {
				t.Fatalf("the first run did not spend the budget: %v", edge)
			}

			r.run(t, 1)
			_, e, _, err := r.svc.GetExecution(ctx, p, sess.ID, second.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := [3]string{e.Status, e.ErrorType, e.Error}, [3]string{domain.ExecFailed, "rate_limit_error", message(edge)}; got != want {
				t.Errorf("second = %q, want %q", got, want)
			}
			if n := r.model.calls.Load(); n != calls {
				t.Errorf("the model was called %d times for the run over budget", n-calls)
			}
			want := domain.WebhookEvent{Type: domain.EventExecutionFailed, Company: "acme",
				Data: map[string]string{"session_id": sess.ID, "execution_id": second.ID, "status": domain.ExecFailed}}
			if got := r.ev.got; len(got) != 2 || !cmp.Equal(got[1], want) {
				t.Errorf("published %+v, want the completed first and then %+v", got, want)
			}
			// Delivered again, it changes nothing.
			r.run(t, 1)
			if len(r.ev.got) != 2 {
				t.Errorf("a second delivery published again: %+v", r.ev.got)
			}
		})
	}
}

// TestQueuedAnswerHeldToBudget: an answer queued while the budget held, taken once it is spent,
// is failed with the edge's rate_limit_error before any model call; the session still waits for
// an answer.
func TestQueuedAnswerHeldToBudget(t *testing.T) {
	tokens := int64(1_000_000)
	r := newBudgetRig(t, domain.Limits{})
	ctx := context.Background()
	p := alice
	p.KeyID, p.Budget = "key-1", domain.Budget{MonthlyTokens: &tokens}
	sess, err := r.svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(clientAgent)})
	if err != nil {
		t.Fatal(err)
	}
	paused, err := r.svc.Execute(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent(`lookup {"word":"otter"}`)}, sessions.Observer{})
	if err != nil || paused.Pending == nil {
		t.Fatalf("paused: %v %+v", err, paused)
	}
	answer := &sessions.Answer{HasResults: true, ToolResults: []sessions.ToolResultInput{{ToolCallID: paused.Pending.ToolCalls[0].ID, Output: "a river animal"}}}
	if _, err := r.svc.Enqueue(ctx, p, sess.ID, sessions.ExecuteRequest{Answer: answer}); err != nil {
		t.Fatal(err)
	}
	// The budget runs out meanwhile (another run of the key's).
	if err := r.lim.CountUsage(ctx, domain.UsageEntry{Company: "acme", KeyID: "key-1", Day: time.Now().UTC().Truncate(24 * time.Hour),
		UsageCount: domain.UsageCount{InputTokens: tokens}}); err != nil {
		t.Fatal(err)
	}
	calls := r.model.calls.Load()
	r.run(t, 0)
	got, e, _, err := r.svc.GetExecution(ctx, p, sess.ID, paused.Execution.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != domain.ExecFailed || e.ErrorType != "rate_limit_error" {
		t.Errorf("answer = %s %s %q, want failed rate_limit_error", e.Status, e.ErrorType, e.Error)
	}
	if n := r.model.calls.Load(); n != calls {
		t.Errorf("the model was called %d times for the answer over budget", n-calls)
	}
	if got.Pending == nil {
		t.Error("the session no longer waits for an answer")
	}
}

// TestQueuedRunWithoutBudgetReadsNoCounters: with no budget on the key nor on its company, the
// worker's check reads no month counter, and the company's limits once (auth's cache) for two
// runs.
func TestQueuedRunWithoutBudgetReadsNoCounters(t *testing.T) {
	r := newBudgetRig(t, domain.Limits{})
	ctx := context.Background()
	sess, err := r.svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := r.svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}); err != nil {
			t.Fatal(err)
		}
		r.run(t, i)
	}
	if got := [2]int{r.lim.limitReads, r.lim.counts}; got != [2]int{1, 0} {
		t.Errorf("company limits read %d times, month counters %d; want 1 and 0", got[0], got[1])
	}
}
