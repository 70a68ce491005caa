package audittest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/domain"
)

// StoreSuite is audit.Store's contract: entries read back as written, newest first with ties by
// id, pages by offset and limit, the action, acting key and time filters (from inclusive, to
// exclusive) alone and together, full pages of one key's entries, companies kept apart. newStore may return one store for every subtest: each
// subtest uses companies of its own.
func StoreSuite(t *testing.T, newStore func(*testing.T) audit.Store) {
	ctx := context.Background()
	// Entries of an hour ago: their expiry is ahead, for DynamoDB Local does delete expired items
	// (by TTL, at times of its own choosing), which a fixed date long past would meet.
	base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour + 123456789)
	// seed stores n entries of a fresh company, one second apart from base, actions taking turns
	// between KeyCreated and KeyRevoked, and returns them newest first.
	seed := func(t *testing.T, st audit.Store, n int) (string, []*domain.AuditEntry) {
		t.Helper()
		company := "co" + uuid.NewString()[:8]
		var out []*domain.AuditEntry
		for i := range n {
			action := audit.KeyCreated
			if i%2 == 1 {
				action = audit.KeyRevoked
			}
			at := base.Add(time.Duration(i) * time.Second)
			e := &domain.AuditEntry{ID: uuid.NewString(), Company: company, ActorKeyID: uuid.NewString(), ViaToken: i == 1,
				Action: action, TargetID: uuid.NewString(), CreatedAt: at, ExpiresAt: at.Add(audit.Retention)}
			if err := st.PutAuditEntry(ctx, e); err != nil {
				t.Fatalf("put: %v", err)
			}
			out = append([]*domain.AuditEntry{e}, out...)
		}
		return company, out
	}
	list := func(t *testing.T, st audit.Store, company string, f domain.AuditFilter, offset, limit int) ([]*domain.AuditEntry, bool) {
		t.Helper()
		got, more, err := st.ListAuditEntries(ctx, company, f, offset, limit)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		return got, more
	}

	t.Run("ReadBackNewestFirst", func(t *testing.T) {
		st := newStore(t)
		company, want := seed(t, st, 3)
		got, more := list(t, st, company, domain.AuditFilter{}, 0, 10)
		if diff := cmp.Diff(want, got); diff != "" || more {
			t.Fatalf("more = %v; entries (-want +got):\n%s", more, diff)
		}
	})

	t.Run("TiesByID", func(t *testing.T) {
		st := newStore(t)
		company := "co" + uuid.NewString()[:8]
		ids := []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"}
		for _, id := range ids {
			if err := st.PutAuditEntry(ctx, &domain.AuditEntry{ID: id, Company: company, ActorKeyID: "k", Action: audit.AgentDeleted,
				TargetID: "a", CreatedAt: base, ExpiresAt: base.Add(audit.Retention)}); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := list(t, st, company, domain.AuditFilter{}, 0, 10)
		if len(got) != 2 || got[0].ID != ids[1] || got[1].ID != ids[0] {
			t.Fatalf("got %v, want %s then %s", got, ids[1], ids[0])
		}
	})

	t.Run("Pages", func(t *testing.T) {
		st := newStore(t)
		company, want := seed(t, st, 5)
		for _, c := range []struct {
			offset, limit int
			want          []*domain.AuditEntry
			more          bool
		}{
			{0, 2, want[0:2], true}, {2, 2, want[2:4], true}, {4, 2, want[4:5], false},
			{0, 5, want, false}, {5, 2, []*domain.AuditEntry{}, false}, {9, 1, []*domain.AuditEntry{}, false},
		} {
			got, more := list(t, st, company, domain.AuditFilter{}, c.offset, c.limit)
			if diff := cmp.Diff(c.want, got); diff != "" || more != c.more {
				t.Errorf("offset %d limit %d: more = %v, want %v; (-want +got):\n%s", c.offset, c.limit, more, c.more, diff)
			}
		}
	})

	t.Run("Filters", func(t *testing.T) {
		st := newStore(t)
		company, all := seed(t, st, 6) // all[0] is base+5s, a KeyRevoked; all[5] is base, a KeyCreated
		at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
		for _, c := range []struct {
			name   string
			filter domain.AuditFilter
			want   []*domain.AuditEntry
		}{
			{"action", domain.AuditFilter{Action: audit.KeyCreated}, []*domain.AuditEntry{all[1], all[3], all[5]}},
			{"unused action", domain.AuditFilter{Action: audit.AgentDeleted}, []*domain.AuditEntry{}},
			{"from inclusive", domain.AuditFilter{From: at(4)}, all[0:2]},
			{"to exclusive", domain.AuditFilter{To: at(1)}, all[5:6]},
			{"from and to", domain.AuditFilter{From: at(1), To: at(4)}, all[2:5]},
			{"action and time", domain.AuditFilter{Action: audit.KeyRevoked, From: at(1), To: at(5)}, []*domain.AuditEntry{all[2], all[4]}},
			{"from after all", domain.AuditFilter{From: at(6)}, []*domain.AuditEntry{}},
		} {
			got, more := list(t, st, company, c.filter, 0, 10)
			if len(got) == 0 {
				got = []*domain.AuditEntry{}
			}
			if diff := cmp.Diff(c.want, got); diff != "" || more {
				t.Errorf("%s: more = %v; (-want +got):\n%s", c.name, more, diff)
			}
		}
		got, more := list(t, st, company, domain.AuditFilter{Action: audit.KeyCreated}, 1, 1)
		if diff := cmp.Diff([]*domain.AuditEntry{all[3]}, got); diff != "" || !more {
			t.Errorf("filtered page: more = %v; (-want +got):\n%s", more, diff)
		}
	})

	t.Run("ActorFilter", func(t *testing.T) {
		st := newStore(t)
		company, all := seed(t, st, 6) // every entry by a key of its own
		// Three more entries of one key, between the seeded ones, and one whose target is that key.
		key := all[5].ActorKeyID // base, a KeyCreated
		var mine []*domain.AuditEntry
		for i, s := range []int{1, 3, 5} {
			at := base.Add(time.Duration(s)*time.Second + 500*time.Millisecond)
			e := &domain.AuditEntry{ID: uuid.NewString(), Company: company, ActorKeyID: key, ViaToken: i == 0,
				Action: audit.KeyRevoked, TargetID: uuid.NewString(), CreatedAt: at, ExpiresAt: at.Add(audit.Retention)}
			if err := st.PutAuditEntry(ctx, e); err != nil {
				t.Fatal(err)
			}
			mine = append([]*domain.AuditEntry{e}, mine...)
		}
		at := base.Add(2*time.Second + 500*time.Millisecond)
		if err := st.PutAuditEntry(ctx, &domain.AuditEntry{ID: uuid.NewString(), Company: company, ActorKeyID: all[0].ActorKeyID,
			Action: audit.KeyRevoked, TargetID: key, CreatedAt: at, ExpiresAt: at.Add(audit.Retention)}); err != nil {
			t.Fatal(err)
		}
		byKey := []*domain.AuditEntry{mine[0], mine[1], mine[2], all[5]} // base+5.5s, +3.5s, +1.5s, +0s
		for _, c := range []struct {
			name          string
			filter        domain.AuditFilter
			offset, limit int
			want          []*domain.AuditEntry
			more          bool
		}{
			{"key", domain.AuditFilter{ActorKeyID: key}, 0, 10, byKey, false},
			{"first page", domain.AuditFilter{ActorKeyID: key}, 0, 2, byKey[0:2], true},
			{"second page", domain.AuditFilter{ActorKeyID: key}, 2, 2, byKey[2:4], false},
			{"past the end", domain.AuditFilter{ActorKeyID: key}, 4, 2, []*domain.AuditEntry{}, false},
			{"key and action", domain.AuditFilter{ActorKeyID: key, Action: audit.KeyCreated}, 0, 10, byKey[3:4], false},
			{"key and time", domain.AuditFilter{ActorKeyID: key, From: base.Add(time.Second), To: base.Add(4 * time.Second)}, 0, 10, byKey[1:3], false},
			{"key, action and time", domain.AuditFilter{ActorKeyID: key, Action: audit.KeyRevoked, To: base.Add(4 * time.Second)}, 0, 1, byKey[1:2], true},
			{"unknown key", domain.AuditFilter{ActorKeyID: uuid.NewString()}, 0, 10, []*domain.AuditEntry{}, false},
		} {
			got, more := list(t, st, company, c.filter, c.offset, c.limit)
			if len(got) == 0 {
				got = []*domain.AuditEntry{}
			}
			if diff := cmp.Diff(c.want, got); diff != "" || more != c.more {
				t.Errorf("%s: more = %v, want %v; (-want +got):\n%s", c.name, more, c.more, diff)
			}
		}
	})

	t.Run("CompaniesApart", func(t *testing.T) {
		st := newStore(t)
		a, wantA := seed(t, st, 2)
		b, wantB := seed(t, st, 1)
		gotA, _ := list(t, st, a, domain.AuditFilter{}, 0, 10)
		gotB, _ := list(t, st, b, domain.AuditFilter{}, 0, 10)
		if diff := cmp.Diff(wantA, gotA); diff != "" {
			t.Errorf("company a (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantB, gotB); diff != "" {
			t.Errorf("company b (-want +got):\n%s", diff)
		}
		none, more := list(t, st, "co"+uuid.NewString()[:8], domain.AuditFilter{}, 0, 10)
		if len(none) != 0 || more {
			t.Errorf("unknown company: %v, more %v", none, more)
		}
	})
}
