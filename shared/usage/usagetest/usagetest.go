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
}

// StoreSuite holds a store to the counters' contract: adds sum per company, day, key and agent
// (concurrent adds included, fractional costs exactly enough), a range includes both of its
// days and nothing outside, companies are kept apart.
func StoreSuite(t *testing.T, newStore func(*testing.T) Counters) {
	ctx := context.Background()
	st := newStore(t)
	company := "co-" + time.Now().Format("150405.000000000")
	d1 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 1)
	d3 := d1.AddDate(0, 0, 2)
	one := domain.UsageCount{Requests: 1, Executions: 1, InputTokens: 10, OutputTokens: 5, EmbeddingTokens: 2, CostUSD: 0.000125}
	var wg sync.WaitGroup
	for range 8 {
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
	eight := domain.UsageCount{Requests: 8, Executions: 8, InputTokens: 80, OutputTokens: 40, EmbeddingTokens: 16, CostUSD: 0.001}
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
}
