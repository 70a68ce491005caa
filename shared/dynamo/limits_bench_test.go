package dynamo_test

import (
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// BenchmarkLimiterCalls measures each call the limits add to a request, one per op, on DynamoDB
// Local: a rate window's conditional UpdateItem, the budget check's read of one or both month
// counters, and the company limits' GetItem (made once per company per KEY_CACHE_TTL).
func BenchmarkLimiterCalls(b *testing.B) {
	env := localstack.NewTestEnv(b)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := b.Context()
	co := "bench-" + time.Now().Format("150405.000000000")
	if err := st.CountUsage(ctx, domain.UsageEntry{Company: co, Day: time.Now().UTC().Truncate(24 * time.Hour), KeyID: "k1",
		UsageCount: domain.UsageCount{Requests: 1, InputTokens: 10, OutputTokens: 5, CostUSD: 0.001}}); err != nil {
		b.Fatal(err)
	}
	b.Run("rate-window-UpdateItem", func(b *testing.B) {
		w := time.Now().Truncate(time.Minute)
		for i := 0; i < b.N; i++ {
			if _, err := st.Hit(ctx, "k1", w, 1<<30, w.Add(2*time.Minute)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("month-counter-GetItem", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, err := st.MonthUsage(ctx, co, "k1", false, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("month-counters-BatchGetItem", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, err := st.MonthUsage(ctx, co, "k1", true, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("company-limits-GetItem", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := st.CompanyLimits(ctx, co); err != nil {
				b.Fatal(err)
			}
		}
	})
}
