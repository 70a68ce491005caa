package webhookstest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// DeliveryStoreSuite holds a webhooks.DeliveryStore to the port's contract: a delivery reads back
// as written, a taken id is a conflict, attempts append in order with the status, deliveries
// of another webhook or company are apart, and pages come newest first (ids sort by time).
func DeliveryStoreSuite(t *testing.T, newStore func(t *testing.T) webhooks.DeliveryStore) {
	t.Run("RoundTrip", func(t *testing.T) { deliveryRoundTrip(t, newStore(t)) })
	t.Run("Pages", func(t *testing.T) { deliveryPages(t, newStore(t)) })
}

func delivery(company, webhookID string, at time.Time, n int) *domain.WebhookDelivery {
	return &domain.WebhookDelivery{ID: fmt.Sprintf("msg_%012x%020d", at.UnixMilli(), n), WebhookID: webhookID, Company: company,
		EventType: domain.EventExecutionCompleted, Payload: []byte(`{"id":"evt_1","type":"execution.completed"}`),
		Status: domain.DeliveryPending, Attempts: []domain.WebhookAttempt{}, CreatedAt: at}
}

func deliveryRoundTrip(t *testing.T, st webhooks.DeliveryStore) {
	ctx := context.Background()
	acme, hook := company("acme"), uuid.NewString()
	d := delivery(acme, hook, base, 1)
	if err := st.CreateDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateDelivery(ctx, d); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("the same id again: %v, want a conflict", err)
	}
	next := base.Add(time.Minute)
	a1 := domain.WebhookAttempt{At: base, StatusCode: 500, DurationMS: 12, Error: "the endpoint answered 500", NextRetryAt: &next}
	a2 := domain.WebhookAttempt{At: next, StatusCode: 200, DurationMS: 8}
	for _, a := range []struct {
		a      domain.WebhookAttempt
		status string
	}{{a1, domain.DeliveryPending}, {a2, domain.DeliverySucceeded}} {
		if err := st.AddAttempt(ctx, acme, hook, d.ID, a.a, a.status); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.GetDelivery(ctx, acme, hook, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *d
	want.Status, want.Attempts = domain.DeliverySucceeded, []domain.WebhookAttempt{a1, a2}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	if _, err := st.GetDelivery(ctx, company("globex"), hook, d.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's: %v", err)
	}
	if _, err := st.GetDelivery(ctx, acme, uuid.NewString(), d.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another webhook's: %v", err)
	}
	if err := st.AddAttempt(ctx, acme, hook, "msg_missing", a1, domain.DeliveryPending); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("an attempt of a missing delivery: %v", err)
	}
}

func deliveryPages(t *testing.T, st webhooks.DeliveryStore) {
	ctx := context.Background()
	acme, hook := company("acme"), uuid.NewString()
	var ids []string
	for i := range 5 {
		d := delivery(acme, hook, base.Add(time.Duration(i)*time.Second), i)
		if err := st.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		ids = append([]string{d.ID}, ids...) // newest first
	}
	if err := st.CreateDelivery(ctx, delivery(acme, uuid.NewString(), base.Add(time.Hour), 9)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for offset := 0; ; offset += 2 {
		page, more, err := st.ListDeliveries(ctx, acme, hook, offset, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page {
			got = append(got, d.ID)
		}
		if !more {
			break
		}
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
}
