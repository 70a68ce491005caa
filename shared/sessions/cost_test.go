package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/pricing"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
	"github.com/agentorch/agentorch/shared/usage/usagetest"
)

// TestExecutionCost: an execution's cost is the sum of its model calls at the book's prices
// (the local model's calls free), stored with the execution; a call of a model without a
// price makes the cost unknown (nil), never a guess.
func TestExecutionCost(t *testing.T) {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	// "paid" is the local model under another provider's name, so that its token counts are
	// known: words in, words out.
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}, "paid": localmodel.Model{}}}
	book := pricing.NewBook(pricing.Table{"paid/m1": {InputPerMTok: 1_000_000, OutputPerMTok: 2_000_000}}, pricing.Defaults{Provider: "local"})
	st := newMemStore()
	counters := usagetest.NewStore()
	svc := sessions.New(sessions.Deps{Store: st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg, Prices: book, Usage: counters},
		sessions.Limits{})
	p := alice
	p.KeyID = "k1"
	ctx := context.Background()

	run := func(llm map[string]any) *domain.Execution {
		t.Helper()
		cfg := map[string]any{"name": "a", "system_prompt": "hi"}
		if llm != nil {
			cfg["llm_config"] = llm
		}
		sess, err := svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Execute(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello there")}, sessions.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := st.GetExecution(ctx, sess.ID, res.Execution.ID)
		if err != nil {
			t.Fatal(err)
		}
		if (stored.CostUSD == nil) != (res.Execution.CostUSD == nil) || (stored.CostUSD != nil && *stored.CostUSD != *res.Execution.CostUSD) {
			t.Errorf("stored cost %v, result's %v", stored.CostUSD, res.Execution.CostUSD)
		}
		return res.Execution
	}

	paid := run(map[string]any{"provider": "paid", "model": "m1"})
	if paid.InputTokens == 0 || paid.OutputTokens == 0 {
		t.Fatalf("no tokens counted: %+v", paid)
	}
	wantUSD := float64(paid.InputTokens)*1 + float64(paid.OutputTokens)*2 // USD at 1 and 2 per token
	if paid.CostUSD == nil || *paid.CostUSD != wantUSD {
		t.Errorf("priced run's cost = %v, want %v (%d in, %d out)", paid.CostUSD, wantUSD, paid.InputTokens, paid.OutputTokens)
	}
	local := run(nil)
	if local.CostUSD == nil || *local.CostUSD != 0 {
		t.Errorf("local run's cost = %v, want 0", local.CostUSD)
	}
	unknown := run(map[string]any{"provider": "paid", "model": "m2"})
	if unknown.CostUSD != nil {
		t.Errorf("unpriced run's cost = %v, want nil", *unknown.CostUSD)
	}

	// Each run added to the counter of its day, key and agent (inline configurations: none).
	entries, err := counters.UsageEntries(ctx, alice.Company, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := domain.UsageCount{Requests: 3, Executions: 3, Unpriced: 1, CostUSD: *paid.CostUSD,
		InputTokens: int64(paid.InputTokens + local.InputTokens + unknown.InputTokens), OutputTokens: int64(paid.OutputTokens + local.OutputTokens + unknown.OutputTokens)}
	if len(entries) != 1 || entries[0].KeyID != "k1" || entries[0].AgentID != "" || entries[0].UsageCount != want {
		t.Errorf("counters = %+v, want one of key k1 with %+v", entries, want)
	}
}

// TestResumedExecutionCost: a paused execution's cost is its first part's; resumed, it adds the
// second part's calls, and the counters add each part once: two requests, one execution, the
// execution's tokens and cost in all.
func TestResumedExecutionCost(t *testing.T) {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	models := engine.ModelSet{Default: "paid", ByName: map[string]domain.Model{"paid": localmodel.Model{}}}
	book := pricing.NewBook(pricing.Table{"paid/m1": {InputPerMTok: 1_000_000, OutputPerMTok: 2_000_000}},
		pricing.Defaults{Provider: "paid", Models: map[string]string{"paid": "m1"}})
	counters := usagetest.NewStore()
	svc := sessions.New(sessions.Deps{Store: newMemStore(), Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg, Prices: book, Usage: counters},
		sessions.Limits{})
	ctx := context.Background()
	costOf := func(e *domain.Execution) float64 { return float64(e.InputTokens)*1 + float64(e.OutputTokens)*2 }

	sid, _, answer := paused(t, svc)
	first, err := counters.UsageEntries(ctx, alice.Company, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
	if err != nil || len(first) != 1 || first[0].CostUSD == 0 {
		t.Fatalf("counters after the pause: %+v, %v", first, err)
	}
	res, err := svc.Execute(ctx, alice, sid, sessions.ExecuteRequest{Answer: answer}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Execution
	if e.Status != domain.ExecCompleted || e.CostUSD == nil || *e.CostUSD != costOf(e) || *e.CostUSD <= first[0].CostUSD {
		t.Fatalf("resumed execution %s: cost %v, want %v (more than the first part's %v)", e.Status, e.CostUSD, costOf(e), first[0].CostUSD)
	}
	all, err := counters.UsageEntries(ctx, alice.Company, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := domain.UsageCount{Requests: 2, Executions: 1, InputTokens: int64(e.InputTokens), OutputTokens: int64(e.OutputTokens), CostUSD: *e.CostUSD}
	if len(all) != 1 || all[0].UsageCount != want {
		t.Errorf("counters = %+v, want %+v", all, want)
	}
}

// TestQueuedRunCountedUnderItsKey: the worker's run of a queued execution is counted under the
// key that queued it, which the execution keeps until then.
func TestQueuedRunCountedUnderItsKey(t *testing.T) {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}}}
	counters := usagetest.NewStore()
	st := newMemStore()
	svc := sessions.New(sessions.Deps{Store: st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg, Queue: &queue{},
		Prices: pricing.NewBook(nil, pricing.Defaults{Provider: "local"}), Usage: counters}, sessions.Limits{})
	ctx := context.Background()
	p := alice
	p.KeyID = "kq"
	sess, err := svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.Enqueue(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RunQueued(ctx, sess.ID, e.ID); err != nil {
		t.Fatal(err)
	}
	done, err := st.GetExecution(ctx, sess.ID, e.ID)
	if err != nil || done.Status != domain.ExecCompleted {
		t.Fatalf("queued run: %+v, %v", done, err)
	}
	all, err := counters.UsageEntries(ctx, alice.Company, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
	if err != nil || len(all) != 1 || all[0].KeyID != "kq" || all[0].Requests != 1 || all[0].Executions != 1 {
		t.Errorf("counters = %+v, %v; want one run of key kq", all, err)
	}
}
