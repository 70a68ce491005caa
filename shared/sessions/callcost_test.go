package sessions_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/pricing"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// TestModelCallEventCost: each model_call event carries its call's cost_usd by the book that
// prices the execution — in the stored events and in the events streamed as they happen — and
// the calls' costs add up to the execution's cost; a model without a price gives null (the
// execution's cost unknown), the local model 0.
func TestModelCallEventCost(t *testing.T) {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	// "paid" is the local model under another provider's name: its token counts are known.
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}, "paid": localmodel.Model{}}}
	book := pricing.NewBook(pricing.Table{"paid/m1": {InputPerMTok: 3, OutputPerMTok: 15}}, pricing.Defaults{Provider: "local"})
	st := newMemStore()
	svc := sessions.New(sessions.Deps{Store: st, Engine: engine.NewEngine(models, reg, engine.Limits{}), Tools: reg, Prices: book}, sessions.Limits{})
	ctx := context.Background()

	// run runs a message that makes the local model call the calculator, so two model calls:
	// the one asking for the tool and the one answering with its result.
	run := func(llm map[string]any) (exec *domain.Execution, stored, streamed []map[string]any) {
		t.Helper()
		cfg := map[string]any{"name": "a", "agent_type": "react_agent", "system_prompt": "hi", "tools": []any{"calculator"}}
		if llm != nil {
			cfg["llm_config"] = llm
		}
		sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		obs := sessions.Observer{OnEvent: func(e engine.Event) {
			if e.Type == engine.EventModelCall {
				streamed = append(streamed, e.Data)
			}
		}}
		res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent(`calculator {"expression":"2+2"}`)}, obs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.GetExecution(ctx, sess.ID, res.Execution.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range got.Events {
			if ev["type"] == engine.EventModelCall {
				data, _ := ev["data"].(map[string]any)
				stored = append(stored, data)
			}
		}
		if len(stored) != 2 || len(streamed) != 2 {
			t.Fatalf("model calls: %d stored, %d streamed; want 2 of each (a tool call and the answer)", len(stored), len(streamed))
		}
		return got, stored, streamed
	}

	exec, stored, streamed := run(map[string]any{"provider": "paid", "model": "m1"})
	var sum float64
	for i, data := range stored {
		in, _ := number(data["input_tokens"])
		out, _ := number(data["output_tokens"])
		want := (in*3 + out*15) / 1e6
		cost, ok := number(data["cost_usd"])
		if !ok || cost != want || in == 0 {
			t.Errorf("call %d: cost_usd = %#v, want %v (%v in, %v out)", i+1, data["cost_usd"], want, in, out)
		}
		if c, _ := number(streamed[i]["cost_usd"]); c != cost {
			t.Errorf("call %d: streamed cost_usd %#v, stored %#v", i+1, streamed[i]["cost_usd"], data["cost_usd"])
		}
		sum += cost
	}
	if exec.CostUSD == nil || *exec.CostUSD != sum || sum == 0 {
		t.Errorf("execution's cost %v, its calls' sum %v", exec.CostUSD, sum)
	}

	exec, stored, _ = run(map[string]any{"provider": "paid", "model": "m2"}) // no price
	for i, data := range stored {
		if v, present := data["cost_usd"]; !present || v != nil {
			t.Errorf("unpriced call %d: cost_usd = %#v (present %v), want null", i+1, v, present)
		}
	}
	if exec.CostUSD != nil {
		t.Errorf("unpriced execution's cost = %v, want nil", *exec.CostUSD)
	}

	exec, stored, _ = run(nil) // the local model: free
	for i, data := range stored {
		if c, ok := number(data["cost_usd"]); !ok || c != 0 {
			t.Errorf("local call %d: cost_usd = %#v, want 0", i+1, data["cost_usd"])
		}
	}
	if exec.CostUSD == nil || *exec.CostUSD != 0 {
		t.Errorf("local execution's cost = %v, want 0", exec.CostUSD)
	}
}

// number is an event's number as the store gives it back (a json.Number) or as the run made it.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}
