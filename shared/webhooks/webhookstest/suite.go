package webhookstest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// StoreSuite holds a webhooks.Store to the port's contract: a webhook reads back as written, the
// bound on a company's webhooks (domain.ErrWebhookLimit, a delete frees a place), companies kept
// apart, updates and deletes only over the version read (a changed webhook is a conflict, a
// deleted one not found). newStore may return one store to every subtest: each makes up its own
// companies and ids.
func StoreSuite(t *testing.T, newStore func(t *testing.T) webhooks.Store) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, newStore(t)) })
	t.Run("Limit", func(t *testing.T) { limit(t, newStore(t)) })
	t.Run("List", func(t *testing.T) { list(t, newStore(t)) })
	t.Run("Update", func(t *testing.T) { update(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) { deleteHook(t, newStore(t)) })
}

var base = time.Date(2026, 11, 27, 9, 0, 0, 123456789, time.UTC)

func company(name string) string { return name + "-" + uuid.NewString()[:8] }

func hook(company string) *domain.Webhook {
	return &domain.Webhook{ID: uuid.NewString(), Company: company, CreatedBy: "k1", URL: "https://hooks.example.com/in",
		Events: []string{domain.EventExecutionCompleted, domain.EventIngestionFailed}, Description: "CI", Enabled: true,
		Secret: webhooks.NewSecret(), CreatedAt: base, UpdatedAt: base}
}

func mustCreate(t *testing.T, st webhooks.Store, max int, hooks ...*domain.Webhook) {
	t.Helper()
	for _, w := range hooks {
		if err := st.CreateWebhook(context.Background(), w, max); err != nil {
			t.Fatalf("create %s: %v", w.ID, err)
		}
	}
}

func wantIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

// roundTrip: a webhook reads back as written (a rotated one with its previous secret), never
// sharing memory with the caller; another company's id and an unknown id are not found.
func roundTrip(t *testing.T, st webhooks.Store) {
	ctx := context.Background()
	acme := company("acme")
	w := hook(acme)
	w.PreviousSecret, w.PreviousUntil, w.Enabled, w.DisabledReason = webhooks.NewSecret(), base.Add(24*time.Hour), false, "410"
	mustCreate(t, st, 20, w)
	want := *w
	want.Events = slices.Clone(w.Events)
	w.Events[0] = "changed after the write"
	got, err := st.GetWebhook(ctx, acme, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("get (-wrote +read):\n%s", d)
	}
	_, err = st.GetWebhook(ctx, company("globex"), w.ID)
	wantIs(t, "another company's id", err, domain.ErrNotFound)
	_, err = st.GetWebhook(ctx, acme, uuid.NewString())
	wantIs(t, "an unknown id", err, domain.ErrNotFound)
	wantIs(t, "the same id again", st.CreateWebhook(ctx, w, 20), domain.ErrConflict)
}

// limit: a company at max is refused and nothing is written; a delete frees a place; another
// company is not counted.
func limit(t *testing.T, st webhooks.Store) {
	ctx := context.Background()
	acme := company("acme")
	a, b := hook(acme), hook(acme)
	mustCreate(t, st, 2, a, b)
	over := hook(acme)
	wantIs(t, "a third of two", st.CreateWebhook(ctx, over, 2), domain.ErrWebhookLimit)
	_, err := st.GetWebhook(ctx, acme, over.ID)
	wantIs(t, "the refused webhook", err, domain.ErrNotFound)
	mustCreate(t, st, 2, hook(company("globex")))
	if err := st.DeleteWebhook(ctx, a); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, st, 2, over)
}

// list: every webhook of the company and no other's.
func list(t *testing.T, st webhooks.Store) {
	ctx := context.Background()
	acme := company("acme")
	a, b := hook(acme), hook(acme)
	mustCreate(t, st, 20, a, b, hook(company("globex")))
	got, err := st.ListWebhooks(ctx, acme)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range got {
		ids = append(ids, w.ID)
	}
	slices.Sort(ids)
	want := []string{a.ID, b.ID}
	slices.Sort(want)
	if d := cmp.Diff(want, ids); d != "" {
		t.Errorf("list (-want +got):\n%s", d)
	}
	if none, err := st.ListWebhooks(ctx, company("initech")); err != nil || len(none) != 0 {
		t.Errorf("a company with none: %v, %v", none, err)
	}
}

// update: a write over the version read lands; a second over the same stale version is a
// conflict; one over a deleted webhook is not found.
func update(t *testing.T, st webhooks.Store) {
	ctx := context.Background()
	acme := company("acme")
	w := hook(acme)
	mustCreate(t, st, 20, w)
	next := *w
	next.URL, next.UpdatedAt = "https://hooks.example.com/v2", base.Add(time.Second)
	if err := st.UpdateWebhook(ctx, &next, w); err != nil {
		t.Fatal(err)
	}
	stale := *w
	stale.Description = "lost"
	stale.UpdatedAt = base.Add(2 * time.Second)
	wantIs(t, "a write over a stale read", st.UpdateWebhook(ctx, &stale, w), domain.ErrConflict)
	if got, err := st.GetWebhook(ctx, acme, w.ID); err != nil || got.URL != next.URL || got.Description != w.Description {
		t.Errorf("after the lost write: %+v, %v", got, err)
	}
	gone := hook(acme)
	wantIs(t, "a write over a missing webhook", st.UpdateWebhook(ctx, gone, gone), domain.ErrNotFound)
}

// deleteHook: only over the version read; a deleted webhook is gone and deleting it again is not
// found.
func deleteHook(t *testing.T, st webhooks.Store) {
	ctx := context.Background()
	acme := company("acme")
	w := hook(acme)
	mustCreate(t, st, 20, w)
	next := *w
	next.UpdatedAt = base.Add(time.Second)
	if err := st.UpdateWebhook(ctx, &next, w); err != nil {
		t.Fatal(err)
	}
	wantIs(t, "a delete over a stale read", st.DeleteWebhook(ctx, w), domain.ErrConflict)
	if err := st.DeleteWebhook(ctx, &next); err != nil {
		t.Fatal(err)
	}
	_, err := st.GetWebhook(ctx, acme, w.ID)
	wantIs(t, "the deleted webhook", err, domain.ErrNotFound)
	wantIs(t, "a second delete", st.DeleteWebhook(ctx, &next), domain.ErrNotFound)
}
