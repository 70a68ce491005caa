package dynamo_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// TestCompanyLimits: a company without limits has none; a change sets the fields it gives,
// clears those sent as null and leaves the others, and reads back as it answered.
func TestCompanyLimits(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := t.Context()
	co := "limits-" + time.Now().Format("150405.000000000")
	if l, err := st.CompanyLimits(ctx, co); err != nil || l.Set() {
		t.Fatalf("limits of a new company = %+v, %v", l, err)
	}
	tokens, dollars := int64(1_000_000), 12.5
	steps := []struct {
		change domain.LimitsChange
		want   domain.Limits
	}{
		{domain.LimitsChange{RequestsPerMinute: domain.Some(10), MonthlyTokens: domain.Some(tokens), MonthlyCostUSD: domain.Some(dollars)},
			domain.Limits{RequestsPerMinute: 10, Budget: domain.Budget{MonthlyTokens: &tokens, MonthlyCostUSD: &dollars}}},
		{domain.LimitsChange{MonthlyTokens: domain.Optional[int64]{Set: true, Null: true}},
			domain.Limits{RequestsPerMinute: 10, Budget: domain.Budget{MonthlyCostUSD: &dollars}}},
		{domain.LimitsChange{},
			domain.Limits{RequestsPerMinute: 10, Budget: domain.Budget{MonthlyCostUSD: &dollars}}},
		{domain.LimitsChange{RequestsPerMinute: domain.Optional[int]{Set: true, Null: true}, MonthlyCostUSD: domain.Some(0.0)},
			domain.Limits{Budget: domain.Budget{MonthlyCostUSD: new(float64)}}},
	}
	for i, s := range steps {
		got, err := st.UpdateCompanyLimits(ctx, co, s.change, "key-1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(s.want, got); d != "" {
			t.Errorf("step %d: answered (-want +got):\n%s", i, d)
		}
		read, err := st.CompanyLimits(ctx, co)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(s.want, read); d != "" {
			t.Errorf("step %d: read back (-want +got):\n%s", i, d)
		}
	}
	if l, err := st.CompanyLimits(ctx, co+"-other"); err != nil || l.Set() {
		t.Errorf("another company's limits = %+v, %v", l, err)
	}
}
