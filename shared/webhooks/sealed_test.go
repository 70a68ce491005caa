package webhooks_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/seal"
	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

// testBox seals under a fixed test secret.
func testBox() *seal.Box { return seal.New(seal.Static("webhooks-test-credentials-key-of-32-bytes+")) }

// TestSealedStoreSuite: the sealing store keeps the port's contract over the fake.
func TestSealedStoreSuite(t *testing.T) {
	webhookstest.StoreSuite(t, func(*testing.T) webhooks.Store { return webhooks.Sealed(webhookstest.NewStore(), testBox()) })
}

// TestSecretsSealedAtRest: what the service creates and rotates reaches the store with neither
// secret in the clear; it reads back in the clear, the rotated-out one as the previous secret;
// a list carries no secret.
func TestSecretsSealedAtRest(t *testing.T) {
	ctx := context.Background()
	raw := webhookstest.NewStore()
	svc := webhooks.New(webhooks.Sealed(raw, testBox()), netguard.Policy{}).WithAudit(audit.New(audittest.NewStore()))
	w := create(t, svc, "https://hooks.example.com/in")
	if !strings.HasPrefix(w.Secret, webhooks.SecretPrefix) {
		t.Fatalf("created secret %q", w.Secret)
	}
	rot, err := svc.RotateSecret(ctx, acme, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := raw.GetWebhook(ctx, "acme", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{stored.Secret, stored.PreviousSecret} {
		if s == "" || strings.Contains(s, webhooks.SecretPrefix) || strings.Contains(s, strings.TrimPrefix(w.Secret, webhooks.SecretPrefix)) ||
			strings.Contains(s, strings.TrimPrefix(rot.Secret, webhooks.SecretPrefix)) {
			t.Errorf("stored secret %q is empty or in the clear", s)
		}
	}
	got, err := svc.Get(ctx, acme, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Secret != rot.Secret || got.PreviousSecret != w.Secret {
		t.Errorf("read back secret %q previous %q, want %q and %q", got.Secret, got.PreviousSecret, rot.Secret, w.Secret)
	}
	list, _, err := svc.List(ctx, acme, 0, 10)
	if err != nil || len(list) != 1 || list[0].Secret != "" || list[0].PreviousSecret != "" {
		t.Errorf("list: %+v, %v; want one webhook without secrets", list, err)
	}
}

// storedWebhook is a webhook of acme's as a store holds it, with the secrets given as they are.
func storedWebhook(secret, previous string) *domain.Webhook {
	now := time.Now().UTC()
	return &domain.Webhook{ID: "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f", Company: "acme", URL: "https://hooks.example.com/in",
		Events: []string{domain.EventExecutionCompleted}, Enabled: true, Secret: secret, PreviousSecret: previous, CreatedAt: now, UpdatedAt: now}
}

// TestPlaintextSecretsStillServe: a webhook stored before secrets were sealed reads and signs
// as it is, and its next write seals it; a sealed secret moved into another webhook's record
// does not open there, nor under another key.
func TestPlaintextSecretsStillServe(t *testing.T) {
	ctx := context.Background()
	raw := webhookstest.NewStore()
	old := storedWebhook(webhooks.NewSecret(), "")
	if err := raw.CreateWebhook(ctx, old, 20); err != nil {
		t.Fatal(err)
	}
	sealed := webhooks.Sealed(raw, testBox())
	svc := webhooks.New(sealed, netguard.Policy{}).WithAudit(audit.New(audittest.NewStore()))
	got, err := svc.Get(ctx, acme, old.ID)
	if err != nil || got.Secret != old.Secret {
		t.Fatalf("a plaintext record reads %+v, %v", got, err)
	}
	if _, err := svc.Update(ctx, acme, old.ID, webhooks.UpdateInput{Description: domain.Optional[string]{Set: true, Value: "sealed now"}}); err != nil {
		t.Fatal(err)
	}
	stored, _ := raw.GetWebhook(ctx, "acme", old.ID)
	if strings.HasPrefix(stored.Secret, webhooks.SecretPrefix) {
		t.Errorf("the write left the secret in the clear: %q", stored.Secret)
	}
	if got, err := svc.Get(ctx, acme, old.ID); err != nil || got.Secret != old.Secret {
		t.Errorf("after the write: %+v, %v", got, err)
	}

	other := create(t, svc, "https://hooks.example.com/other")
	moved, _ := raw.GetWebhook(ctx, "acme", other.ID)
	prev := *moved
	moved.Secret, moved.UpdatedAt = stored.Secret, moved.UpdatedAt.Add(time.Second)
	if err := raw.UpdateWebhook(ctx, moved, &prev); err != nil {
		t.Fatal(err)
	}
	if _, err := sealed.GetWebhook(ctx, "acme", other.ID); err == nil {
		t.Error("a secret sealed for another webhook opened")
	}
	otherKey := webhooks.Sealed(raw, seal.New(seal.Static("another-credentials-key-of-at-least-32-bytes")))
	if _, err := otherKey.GetWebhook(ctx, "acme", old.ID); err == nil {
		t.Error("a secret opened under another key")
	}
}

// TestSealedDeliverySigns: a delivery through the sealing store is signed with the secret the
// creation showed (the signature checked here with the signer's own verification; shared/dynamo
// checks one with the standardwebhooks package).
func TestSealedDeliverySigns(t *testing.T) {
	r := newRig(t)
	hooks := webhooks.Sealed(webhookstest.NewStore(), testBox())
	r.svc = webhooks.New(hooks, netguard.Policy{AllowHosts: []string{"127.0.0.1"}}).WithAudit(audit.New(audittest.NewStore()))
	r.del = webhooks.NewDeliverer(hooks, r.dels, r.queue, webhooks.Client(netguard.Policy{AllowHosts: []string{"127.0.0.1"}}))
	w := create(t, r.svc, r.url)
	if err := r.del.Publish(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	r.drain(t, 3)
	if len(r.ep.got) != 1 {
		t.Fatalf("%d requests, want 1", len(r.ep.got))
	}
	req := r.ep.got[0]
	ts, err := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(ts, 0)
	want, err := webhooks.Sign([]string{w.Secret}, req.Header.Get("webhook-id"), at, r.ep.bodies[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("webhook-signature"); got != want {
		t.Errorf("signature %q, want %q (signed with the created secret)", got, want)
	}
}

// BenchmarkSealedGet: what opening the sealed secrets adds to a read of a webhook (a delivery
// attempt makes one), over the in-memory store.
func BenchmarkSealedGet(b *testing.B) {
	ctx := context.Background()
	raw := webhookstest.NewStore()
	w := storedWebhook(webhooks.NewSecret(), webhooks.NewSecret())
	sealed := webhooks.Sealed(raw, testBox())
	if err := sealed.CreateWebhook(ctx, w, 20); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		st   webhooks.Store
	}{{"plain", raw}, {"sealed", sealed}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.st.GetWebhook(ctx, "acme", w.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
