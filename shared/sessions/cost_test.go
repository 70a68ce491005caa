package sessions_test

import (
	"context"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/pricing"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
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
	svc := sessions.New(sessions.Deps{Store: st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg, Prices: book}, sessions.Limits{})
	ctx := context.Background()

	run := func(llm map[string]any) *domain.Execution {
		t.Helper()
		cfg := map[string]any{"name": "a", "system_prompt": "hi"}
		if llm != nil {
			cfg["llm_config"] = llm
		}
		sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello there")}, sessions.Observer{})
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
	want := float64(paid.InputTokens)*1 + float64(paid.OutputTokens)*2 // USD at 1 and 2 per token
	if paid.CostUSD == nil || *paid.CostUSD != want {
		t.Errorf("priced run's cost = %v, want %v (%d in, %d out)", paid.CostUSD, want, paid.InputTokens, paid.OutputTokens)
	}
	if local := run(nil); local.CostUSD == nil || *local.CostUSD != 0 {
		t.Errorf("local run's cost = %v, want 0", local.CostUSD)
	}
	if unknown := run(map[string]any{"provider": "paid", "model": "m2"}); unknown.CostUSD != nil {
		t.Errorf("unpriced run's cost = %v, want nil", *unknown.CostUSD)
	}
}
