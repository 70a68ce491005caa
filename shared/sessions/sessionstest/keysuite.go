package sessionstest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// KeysSuite pins the contract of sessions.Keys, the records of Idempotency-Keys: one claim
// wins, the record answers the others, a settled answer reads back (with its body), a released
// key is free again, an expired record counts as gone, and a pending one of the same request
// older than the stale time is claimed over.
func KeysSuite(t *testing.T, newStore func(t *testing.T) sessions.Keys) {
	ctx := context.Background()
	st := newStore(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	rec := func(company, key, fp string, at time.Time) *domain.IdempotencyRecord {
		return &domain.IdempotencyRecord{Company: company, Key: key, Fingerprint: fp, State: domain.KeyPending,
			CreatedAt: at, ExpiresAt: at.Add(domain.IdempotencyTTL)}
	}
	co, key := "co-"+uuid.NewString()[:8], "key \"with\" any/characters "+uuid.NewString()
	first := rec(co, key, "fp1", now)
	if old, err := st.ClaimIdempotencyKey(ctx, first, now, now.Add(-time.Minute)); err != nil || old != nil {
		t.Fatalf("first claim = %+v, %v; want it claimed", old, err)
	}
	old, err := st.ClaimIdempotencyKey(ctx, rec(co, key, "fp2", now), now, now.Add(-time.Minute))
	if err != nil || old == nil || old.Fingerprint != "fp1" || old.State != domain.KeyPending {
		t.Fatalf("second claim = %+v, %v; want the first's pending record", old, err)
	}
	// Another company's key of the same text is its own.
	if old, err := st.ClaimIdempotencyKey(ctx, rec("other-"+co, key, "fp2", now), now, now.Add(-time.Minute)); err != nil || old != nil {
		t.Errorf("another company's claim = %+v, %v; want it claimed", old, err)
	}
	done := *first
	done.State, done.Status, done.Body, done.SessionID, done.ExecutionID = domain.KeyDone, 200, []byte(`{"a":"<b>"}`), "s", "x"
	if err := st.SettleIdempotencyKey(ctx, &done); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "SettleIdempotencyKey of a settled record", st.SettleIdempotencyKey(ctx, &done), domain.KindConflict)
	old, err = st.ClaimIdempotencyKey(ctx, rec(co, key, "fp1", now), now, now.Add(time.Minute))
	if err != nil || old == nil || old.State != domain.KeyDone || old.Status != 200 || string(old.Body) != `{"a":"<b>"}` || old.ExecutionID != "x" {
		t.Fatalf("claim after the answer = %+v, %v; want the answer, even past the stale time", old, err)
	}
	// Past its expiry the record counts as gone.
	later := now.Add(domain.IdempotencyTTL + time.Minute)
	if old, err := st.ClaimIdempotencyKey(ctx, rec(co, key, "fp3", later), later, later.Add(-time.Minute)); err != nil || old != nil {
		t.Errorf("claim after the expiry = %+v, %v; want it claimed", old, err)
	}

	// A pending record: released, the key is free; left, it is claimed over once stale (by the
	// same request only).
	k2 := "k2-" + uuid.NewString()
	if _, err := st.ClaimIdempotencyKey(ctx, rec(co, k2, "fp", now), now, now); err != nil {
		t.Fatal(err)
	}
	if err := st.ReleaseIdempotencyKey(ctx, co, k2, "other-fp"); err != nil {
		t.Fatal(err)
	}
	if old, _ := st.ClaimIdempotencyKey(ctx, rec(co, k2, "fp", now), now, now.Add(-time.Minute)); old == nil {
		t.Error("a release naming another fingerprint freed the key")
	}
	if old, _ := st.ClaimIdempotencyKey(ctx, rec(co, k2, "fp2", now), now, now.Add(time.Minute)); old == nil {
		t.Error("another request claimed over a stale pending record")
	}
	if old, err := st.ClaimIdempotencyKey(ctx, rec(co, k2, "fp", now), now, now.Add(time.Minute)); err != nil || old != nil {
		t.Errorf("the same request over a stale pending record = %+v, %v; want it claimed", old, err)
	}
	if err := st.ReleaseIdempotencyKey(ctx, co, k2, "fp"); err != nil {
		t.Fatal(err)
	}
	if old, err := st.ClaimIdempotencyKey(ctx, rec(co, k2, "fp4", now), now, now.Add(-time.Minute)); err != nil || old != nil {
		t.Errorf("claim after the release = %+v, %v; want it claimed", old, err)
	}
}
