package authtest

import (
	"context"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// StoreSuite pins the contract of auth.KeyStore: what reads back by hash and by id, the
// not-found and conflict errors with their kinds, that one company never reads another's keys,
// lists newest first, revocation. newStore may hand every subtest the same store: each subtest
// makes its own hashes, ids and companies.
func StoreSuite(t *testing.T, newStore func(t *testing.T) KeyStore) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, KeyStore)
	}{
		{"PutReadsBack", putReadsBack},
		{"NotFound", notFound},
		{"HashStoredOnce", hashStoredOnce},
		{"CompaniesApart", companiesApart},
		{"ListNewestFirst", listNewestFirst},
		{"Revoke", revoke},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)

func company() string { return "co-" + uuid.NewString()[:8] }

// newKey is an unrevoked key of company created at at.
func newKey(company string, at time.Time) *domain.APIKey {
	id := uuid.NewString()
	return &domain.APIKey{ID: id, Name: "key " + id, Prefix: "ak_" + id[:4], Hash: "hash-" + uuid.NewString(),
		Owner: "owner-" + company, Company: company, Scopes: []string{"agents:read", "sessions:write"}, RateLimit: 60,
		ExpiresAt: at.Add(24 * time.Hour), CreatedAt: at}
}

func put(t *testing.T, st KeyStore, k *domain.APIKey) {
	t.Helper()
	if err := st.PutKey(context.Background(), k); err != nil {
		t.Fatalf("put key %s: %v", k.ID, err)
	}
}

func wantKind(t *testing.T, what string, err error, want domain.Kind) {
	t.Helper()
	if got := domain.KindOf(err); err == nil || got != want {
		t.Errorf("%s: %v (kind %v), want kind %v", what, err, got, want)
	}
}

func copyKey(k *domain.APIKey) *domain.APIKey { return clone(k) }

func putReadsBack(t *testing.T, st KeyStore) {
	ctx := context.Background()
	co := company()
	parent := newKey(co, t0)
	child := newKey(co, t0.Add(time.Second))
	child.ParentID, child.Ancestors, child.Scopes = &parent.ID, []string{parent.ID, uuid.NewString()}, []string{}
	bare := newKey(co, t0.Add(2*time.Second))
	bare.Scopes, bare.Ancestors, bare.RateLimit = nil, []string{}, 0
	tokens, dollars, free := int64(1_000_000), 12.5, 0.0
	parent.Budget = domain.Budget{MonthlyTokens: &tokens, MonthlyCostUSD: &dollars}
	child.Budget = domain.Budget{MonthlyCostUSD: &free} // a zero budget is a budget, not none
	for _, k := range []*domain.APIKey{parent, child, bare} {
		want := copyKey(k)
		if len(k.Ancestors) == 0 {
			want.Ancestors = nil // an empty list of ancestors reads back as none
		}
		put(t, st, k)
		k.Name = "changed after the put"
		if len(k.Scopes) > 0 {
			k.Scopes[0] = "changed"
		}
		got, err := st.GetKeyByHash(ctx, want.Hash)
		if err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(want, got); d != "" {
			t.Errorf("GetKeyByHash (-put +read):\n%s", d)
		}
		got, err = st.GetKey(ctx, co, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(want, got); d != "" {
			t.Errorf("GetKey (-put +read):\n%s", d)
		}
	}
}

func notFound(t *testing.T, st KeyStore) {
	ctx := context.Background()
	k := newKey(company(), t0)
	_, err := st.GetKeyByHash(ctx, k.Hash)
	wantKind(t, "GetKeyByHash of an unknown hash", err, domain.KindNotFound)
	_, err = st.GetKey(ctx, k.Company, k.ID)
	wantKind(t, "GetKey of an unknown id", err, domain.KindNotFound)
	_, err = st.RevokeKey(ctx, k, t0)
	wantKind(t, "RevokeKey of a key never stored", err, domain.KindNotFound)
	if _, err := st.GetKeyByHash(ctx, k.Hash); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused revocation stored the key: %v", err)
	}
}

func hashStoredOnce(t *testing.T, st KeyStore) {
	ctx := context.Background()
	k := newKey(company(), t0)
	put(t, st, k)
	again := newKey(k.Company, t0.Add(time.Second))
	again.Hash = k.Hash
	wantKind(t, "PutKey of a hash stored", st.PutKey(ctx, again), domain.KindConflict)
	if got, _ := st.GetKeyByHash(ctx, k.Hash); got == nil || got.ID != k.ID {
		t.Errorf("the hash now reads %+v, want key %s", got, k.ID)
	}
	_, err := st.GetKey(ctx, k.Company, again.ID)
	wantKind(t, "GetKey of the refused key", err, domain.KindNotFound)
}

func companiesApart(t *testing.T, st KeyStore) {
	ctx := context.Background()
	a, b := newKey(company(), t0), newKey(company(), t0)
	put(t, st, a)
	put(t, st, b)
	_, err := st.GetKey(ctx, b.Company, a.ID)
	wantKind(t, "GetKey of another company's key", err, domain.KindNotFound)
	list, err := st.ListKeys(ctx, b.Company)
	if err != nil || len(list) != 1 || list[0].ID != b.ID {
		t.Errorf("ListKeys of b's company: %v, %v; want only b's key", list, err)
	}
	list, err = st.ListKeys(ctx, company())
	if err != nil || len(list) != 0 {
		t.Errorf("ListKeys of a company without keys: %v, %v", list, err)
	}
}

func listNewestFirst(t *testing.T, st KeyStore) {
	co := company()
	var want []string
	for _, d := range []time.Duration{time.Second, 3 * time.Second, 0, 2 * time.Second} {
		k := newKey(co, t0.Add(d))
		put(t, st, k)
		want = append(want, k.ID)
	}
	want = []string{want[1], want[3], want[0], want[2]}
	list, err := st.ListKeys(context.Background(), co)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range list {
		got = append(got, k.ID)
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("ListKeys order (-want +got):\n%s", d)
	}
}

func revoke(t *testing.T, st KeyStore) {
	ctx := context.Background()
	k := newKey(company(), t0)
	put(t, st, k)
	at := t0.Add(time.Hour)
	got, err := st.RevokeKey(ctx, k, at)
	if err != nil {
		t.Fatal(err)
	}
	want := copyKey(k)
	want.RevokedAt = &at
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("RevokeKey's answer (-want +got):\n%s", d)
	}
	if k.RevokedAt != nil {
		t.Errorf("RevokeKey changed the caller's key")
	}
	for _, read := range []func() (*domain.APIKey, error){
		func() (*domain.APIKey, error) { return st.GetKeyByHash(ctx, k.Hash) },
		func() (*domain.APIKey, error) { return st.GetKey(ctx, k.Company, k.ID) },
	} {
		stored, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(want, stored); d != "" {
			t.Errorf("the revoked key as stored (-want +got):\n%s", d)
		}
	}
	// A key revoked before keeps its first revocation time.
	again, err := st.RevokeKey(ctx, got, at.Add(time.Hour))
	if err != nil || again.RevokedAt == nil || !again.RevokedAt.Equal(at) {
		t.Errorf("revoked again: %v, %v; want the first time %v", again, err, at)
	}
	if stored, _ := st.GetKeyByHash(ctx, k.Hash); stored == nil || stored.RevokedAt == nil || !stored.RevokedAt.Equal(at) {
		t.Errorf("revoked again, stored %+v; want the first time %v", stored, at)
	}
}
