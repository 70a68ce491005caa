// Package usagetest holds the in-memory fake of the usage counters and the StoreSuite that
// holds it and the DynamoDB adapter to one contract.
package usagetest

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store is the fake: counters in a map, added to as UpdateItem ADD does.
type Store struct {
	mu sync.Mutex
	m  map[[4]string]domain.UsageCount
}

// NewStore builds an empty fake.
func NewStore() *Store { return &Store{m: map[[4]string]domain.UsageCount{}} }

// CountUsage adds e to its counter.
func (s *Store) CountUsage(_ context.Context, e domain.UsageEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [4]string{e.Company, e.Day.UTC().Format(time.DateOnly), e.KeyID, e.AgentID}
	c := s.m[k]
	c.Add(e.UsageCount)
	s.m[k] = c
	return nil
}

// UsageEntries lists a company's counters of the days from to to, by day, key and agent.
func (s *Store) UsageEntries(_ context.Context, company string, from, to time.Time) ([]domain.UsageEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lo, hi := from.UTC().Format(time.DateOnly), to.UTC().Format(time.DateOnly)
	var out []domain.UsageEntry
	for k, c := range s.m {
		if k[0] != company || k[1] < lo || k[1] > hi {
			continue
		}
		day, _ := time.Parse(time.DateOnly, k[1])
		out = append(out, domain.UsageEntry{Company: company, Day: day, KeyID: k[2], AgentID: k[3], UsageCount: c})
	}
	sortEntries(out)
	return out, nil
}

// MonthUsage sums the counters of month's UTC month: key's when it is not empty, the company's
// when ofCompany, as the adapter's month counters hold them.
func (s *Store) MonthUsage(_ context.Context, company, keyID string, ofCompany bool, month time.Time) (key, co domain.UsageCount, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := month.UTC().Format("2006-01")
	for k, c := range s.m {
		if k[0] != company || k[1][:7] != m {
			continue
		}
		if keyID != "" && k[2] == keyID {
			key.Add(c)
		}
		if ofCompany {
			co.Add(c)
		}
	}
	return key, co, nil
}

func sortEntries(es []domain.UsageEntry) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if !a.Day.Equal(b.Day) {
			return a.Day.Before(b.Day)
		}
		if a.KeyID != b.KeyID {
			return a.KeyID < b.KeyID
		}
		return a.AgentID < b.AgentID
	})
}

// Counters is the port StoreSuite checks: what the execute path writes and the report reads.
type Counters interface {
	CountUsage(ctx context.Context, e domain.UsageEntry) error
	UsageEntries(ctx context.Context, company string, from, to time.Time) ([]domain.UsageEntry, error)
	MonthUsage(ctx context.Context, company, keyID string, ofCompany bool, month time.Time) (key, co domain.UsageCount, err error)
}

// StoreSuite holds a store to the counters' contract: adds sum per company, day, key and agent
// (concurrent adds included, fractional costs exactly enough), a range includes both of its
// days and nothing outside, companies are kept apart; a month's counters of a key and of the
// company sum that month's adds, each once however many ran at the same time.
func StoreSuite(t *testing.T, newStore func(*testing.T) Counters) {
	ctx := context.Background()
	st := newStore(t)
	company := "co-" + time.Now().Format("150405.000000000")
	d1 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 1)
	d3 := d1.AddDate(0, 0, 2)
	one := domain.UsageCount{Requests: 1, Executions: 1, InputTokens: 10, OutputTokens: 5, EmbeddingTokens: 2, CostUSD: 0.000125}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := st.CountUsage(ctx, domain.UsageEntry{Company: company, Day: d1.Add(5 * time.Hour), KeyID: "k1", AgentID: "a1", UsageCount: one}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	adds := []domain.UsageEntry{
		{Company: company, Day: d2, KeyID: "k1", UsageCount: domain.UsageCount{Requests: 1, Unpriced: 1, InputTokens: 3}},
		{Company: company, Day: d3, KeyID: "k2", AgentID: "a1", UsageCount: one},
		{Company: company + "-other", Day: d2, KeyID: "k1", UsageCount: one},
	}
	for _, e := range adds {
		if err := st.CountUsage(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.UsageEntries(ctx, company, d1, d2)
	if err != nil {
		t.Fatal(err)
	}
	sortEntries(got)
	eight := domain.UsageCount{Requests: 16, Executions: 16, InputTokens: 160, OutputTokens: 80, EmbeddingTokens: 32, CostUSD: 0.002}
	want := []domain.UsageEntry{
		{Company: company, Day: d1, KeyID: "k1", AgentID: "a1", UsageCount: eight},
		{Company: company, Day: d2, KeyID: "k1", UsageCount: domain.UsageCount{Requests: 1, Unpriced: 1, InputTokens: 3}},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 })); diff != "" {
		t.Errorf("UsageEntries (-want +got):\n%s", diff)
	}
	if got, err := st.UsageEntries(ctx, company, d3, d3); err != nil || len(got) != 1 || got[0].KeyID != "k2" || got[0].AgentID != "a1" {
		t.Errorf("one day's entries = %+v, %v", got, err)
	}
	if got, err := st.UsageEntries(ctx, "nobody-"+company, d1, d3); err != nil || len(got) != 0 {
		t.Errorf("an unknown company's entries = %+v, %v", got, err)
	}
	floats := cmp.Comparer(func(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 })
	k1, co, err := st.MonthUsage(ctx, company, "k1", true, d2.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wantK1 := eight
	wantK1.Add(domain.UsageCount{Requests: 1, Unpriced: 1, InputTokens: 3})
	wantCo := wantK1
	wantCo.Add(one)
	if diff := cmp.Diff(wantK1, k1, floats); diff != "" {
		t.Errorf("month of k1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantCo, co, floats); diff != "" {
		t.Errorf("month of the company (-want +got):\n%s", diff)
	}
	if k2, co, err := st.MonthUsage(ctx, company, "k2", false, d1); err != nil || k2 != one || co != (domain.UsageCount{}) {
		t.Errorf("month of k2 alone = %+v, company %+v, %v; want %+v and nothing", k2, co, err, one)
	}
	if k, co, err := st.MonthUsage(ctx, company, "", true, d1.AddDate(0, 1, 0)); err != nil || k != (domain.UsageCount{}) || co != (domain.UsageCount{}) {
		t.Errorf("the next month = %+v, %+v, %v; want nothing", k, co, err)
	}
}
