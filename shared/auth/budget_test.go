package auth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

func ptr[T any](v T) *T { return &v }

// TestKeyBudgets: a key's monthly budget is validated, stored and authenticated with it, and a
// key made by a key with a budget has one no larger (by default the same), as a rate limit is.
func TestKeyBudgets(t *testing.T) {
	s, _, _ := newTestService(t)
	ctx := context.Background()
	_, secret, err := s.CreateKey(ctx, NewKey{Owner: "alice", Company: "acme",
		Budget: domain.Budget{MonthlyTokens: ptr(int64(1000)), MonthlyCostUSD: ptr(2.5)}})
	if err != nil {
		t.Fatal(err)
	}
	budgeted := mustAuth(t, s, secret, "")
	if b := budgeted.Budget; b.MonthlyTokens == nil || *b.MonthlyTokens != 1000 || b.MonthlyCostUSD == nil || *b.MonthlyCostUSD != 2.5 {
		t.Fatalf("principal's budget = %+v", b)
	}
	_, open, err := s.CreateKey(ctx, NewKey{Owner: "alice", Company: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	unbudgeted := mustAuth(t, s, open, "")

	// A child without a budget of its own takes its creator's; a smaller one is its own.
	k, _, err := s.CreateKeyAs(ctx, budgeted, NewKey{})
	if err != nil {
		t.Fatal(err)
	}
	if b := k.Budget; b.MonthlyTokens == nil || *b.MonthlyTokens != 1000 || b.MonthlyCostUSD == nil || *b.MonthlyCostUSD != 2.5 {
		t.Errorf("default child budget = %+v, want the creator's", b)
	}
	k, _, err = s.CreateKeyAs(ctx, budgeted, NewKey{Budget: domain.Budget{MonthlyTokens: ptr(int64(10)), MonthlyCostUSD: ptr(0.0)}})
	if err != nil {
		t.Fatal(err)
	}
	if b := k.Budget; *b.MonthlyTokens != 10 || *b.MonthlyCostUSD != 0 {
		t.Errorf("smaller child budget = %+v", b)
	}
	// A key without a budget makes keys without one.
	if k, _, err = s.CreateKeyAs(ctx, unbudgeted, NewKey{}); err != nil || k.Budget.Set() {
		t.Errorf("child of an unbudgeted key: %+v %v", k, err)
	}

	for _, tc := range []struct {
		name  string
		by    domain.Principal
		in    NewKey
		field string
		msg   string
	}{
		{"zero tokens", unbudgeted, NewKey{Budget: domain.Budget{MonthlyTokens: ptr(int64(0))}}, "limits.monthly_tokens", "positive"},
		{"negative cost", unbudgeted, NewKey{Budget: domain.Budget{MonthlyCostUSD: ptr(-1.0)}}, "limits.monthly_cost_usd", "between 0"},
		{"more tokens than its creator", budgeted, NewKey{Budget: domain.Budget{MonthlyTokens: ptr(int64(1001))}}, "limits.monthly_tokens", "at most 1000"},
		{"more dollars than its creator", budgeted, NewKey{Budget: domain.Budget{MonthlyCostUSD: ptr(2.51)}}, "limits.monthly_cost_usd", "at most 2.5,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := s.CreateKeyAs(ctx, tc.by, tc.in)
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) == 0 {
				t.Fatalf("got %v, want a 400", err)
			}
			if f := de.Fields[0]; f.Field != tc.field || !strings.Contains(f.Message, tc.msg) {
				t.Errorf("got %s: %s, want %s: …%s…", f.Field, f.Message, tc.field, tc.msg)
			}
		})
	}
}
