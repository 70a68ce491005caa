package app_test

import (
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// TestQueuedRunOverBudgetOnDynamoDB: on DynamoDB Local, with the application's auth.Service as
// the worker's budgets and its usage counters, two executions are queued by a key with a budget
// of one token; the first runs and spends it, and the worker fails the second before any model
// call with the edge's rate_limit_error, publishing execution.failed. It logs what each queued
// run costs in DynamoDB calls: without a budget (the company's limits cached) none more than
// before, with the key's budget one GetItem of its month counter (and, on a cold instance, one
// of the company's limits).
func TestQueuedRunOverBudgetOnDynamoDB(t *testing.T) {
	env := localstack.NewTestEnv(t)
	calls := &ddbCalls{}
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler), calls.option)
	model := &onceModel{}
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	eng := engine.NewEngine(engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": model}}, reg, engine.Limits{})
	jobs, ev := &keptJobs{}, &recorded{}
	svc := sessions.New(sessions.Deps{Store: a.Store, Engine: eng, Tools: reg, Queue: jobs, Events: ev, Usage: a.Store, Budgets: a.Auth}, sessions.Limits{})
	ctx := t.Context()
	company := "budget-" + uuid.NewString()[:8]
	one := int64(1)
	budgeted, _, err := a.Auth.CreateKey(ctx, auth.NewKey{Name: "b", Owner: "o", Company: company, Budget: domain.Budget{MonthlyTokens: &one}})
	if err != nil {
		t.Fatal(err)
	}
	open, _, err := a.Auth.CreateKey(ctx, auth.NewKey{Name: "o", Owner: "o", Company: company})
	if err != nil {
		t.Fatal(err)
	}
	queue := func(p domain.Principal) (sessionID, execID string) {
		t.Helper()
		s, err := svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
		if err != nil {
			t.Fatal(err)
		}
		e, err := svc.Enqueue(ctx, p, s.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
		if err != nil {
			t.Fatal(err)
		}
		return s.ID, e.ID
	}
	run := func(i int) []string {
		t.Helper()
		calls.take()
		if err := svc.ProcessJob(ctx, jobs.bodies[i]); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
		return calls.take()
	}
	sFirst, eFirst := queue(budgeted.Principal())
	sSecond, eSecond := queue(budgeted.Principal())
	queue(open.Principal())

	first := run(0)
	if _, e, _, err := svc.GetExecution(ctx, budgeted.Principal(), sFirst, eFirst); err != nil || e.Status != domain.ExecCompleted {
		t.Fatalf("first run: %v %+v", err, e)
	}
	_, edge := a.Auth.CheckBudget(ctx, budgeted.Principal()) // what the edge answers now
	var want *domain.Error
	if !errors.As(edge, &want) || want.Kind != domain.KindRateLimited {
		t.Fatalf("the first run did not spend the budget: %v", edge)
	}

	over := run(1)
	_, e, _, err := svc.GetExecution(ctx, budgeted.Principal(), sSecond, eSecond)
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]string{e.Status, e.ErrorType, e.Error}; got != [3]string{domain.ExecFailed, "rate_limit_error", want.Message} {
		t.Errorf("the run over budget is %q, want failed with the edge's %q", got, want.Message)
	}
	if n := model.calls.Load(); n != 1 {
		t.Errorf("the model was called %d times, want once (the first run)", n)
	}
	if got := ev.events(); len(got) != 2 || got[1].Type != domain.EventExecutionFailed || got[1].Data["execution_id"] != eSecond {
		t.Errorf("published %+v, want execution.failed of %s second", got, eSecond)
	}

	unbudgeted := run(2)
	t.Logf("worker calls: key with a budget %d %v; over it %d %v; no budget (limits cached) %d %v",
		len(first), first, len(over), over, len(unbudgeted), unbudgeted)
	// The execution, the session with its lease, the key's month counter, the failed execution.
	if want := []string{"GetItem", "GetItem", "GetItem", "PutItem"}; !slices.Equal(over, want) {
		t.Errorf("the run over budget made %v, want %v", over, want)
	}
	// The first run, on a cold cache, adds the company's limits (once per the key cache's TTL) and the
	// key's month counter, both GetItems after the session's read, to what an unbudgeted one makes.
	if want := slices.Concat(unbudgeted[:2], []string{"GetItem", "GetItem"}, unbudgeted[2:]); !slices.Equal(first, want) {
		t.Errorf("the first run with a budget made %v, want %v", first, want)
	}
}
