package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/usage"
	"github.com/agentorch/agentorch/shared/usage/usagetest"
)

func TestStoreSuite(t *testing.T) {
	usagetest.StoreSuite(t, func(*testing.T) usagetest.Counters { return usagetest.NewStore() })
}

func TestReport(t *testing.T) {
	ctx := context.Background()
	st := usagetest.NewStore()
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	add := func(d int, key, agent string, c domain.UsageCount) {
		if err := st.CountUsage(ctx, domain.UsageEntry{Company: "acme", Day: day(d), KeyID: key, AgentID: agent, UsageCount: c}); err != nil {
			t.Fatal(err)
		}
	}
	c1 := domain.UsageCount{Requests: 1, Executions: 1, InputTokens: 10, OutputTokens: 20, CostUSD: 0.5}
	c2 := domain.UsageCount{Requests: 2, Executions: 1, InputTokens: 1, OutputTokens: 2, Unpriced: 1}
	add(1, "k1", "a1", c1)
	add(2, "k1", "", c2)
	add(2, "k2", "a1", c1)
	add(9, "k1", "a1", c1)                                                                   // outside the range
	_ = st.CountUsage(ctx, domain.UsageEntry{Company: "other", Day: day(2), UsageCount: c1}) // another company
	svc := usage.New(st)
	p := domain.Principal{Company: "acme", Scopes: []string{domain.ScopeUsageRead}}
	sum := func(cs ...domain.UsageCount) domain.UsageCount {
		var s domain.UsageCount
		for _, c := range cs {
			s.Add(c)
		}
		return s
	}
	q := usage.Query{From: "2026-11-01", To: "2026-11-02"}
	for _, tt := range []struct {
		groupBy string
		want    []usage.Row
	}{
		{"", []usage.Row{{Day: day(1), UsageCount: c1}, {Day: day(2), UsageCount: sum(c2, c1)}}},
		{"api_key", []usage.Row{{KeyID: "k1", UsageCount: sum(c1, c2)}, {KeyID: "k2", UsageCount: c1}}},
		{"agent", []usage.Row{{UsageCount: c2}, {AgentID: "a1", UsageCount: sum(c1, c1)}}},
	} {
		q.GroupBy = tt.groupBy
		rep, err := svc.Report(ctx, p, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, rep.Rows); diff != "" {
			t.Errorf("group_by=%q (-want +got):\n%s", tt.groupBy, diff)
		}
		if want := sum(c1, c2, c1); rep.Total != want {
			t.Errorf("group_by=%q: total %+v, want %+v", tt.groupBy, rep.Total, want)
		}
	}
	if _, err := svc.Report(ctx, domain.Principal{Company: "acme", Scopes: []string{domain.ScopeSessionRead}}, q); domain.KindOf(err) != domain.KindPermission {
		t.Errorf("without usage:read: %v, want a permission error", err)
	}
	for _, bad := range []usage.Query{{From: "2026-11-3"}, {To: "tomorrow"}, {GroupBy: "model"}, {From: "2026-11-05", To: "2026-11-04"},
		{From: "2024-01-01", To: "2026-11-04"}} {
		if _, err := svc.Report(ctx, p, bad); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("Report(%+v) = %v, want invalid", bad, err)
		}
	}
}
