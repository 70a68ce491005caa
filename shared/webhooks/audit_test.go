package webhooks_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

// TestWebhooksAudited: creating, changing, rotating and deleting a webhook each leave one audit
// entry naming the acting key, the action and the webhook, and never its secret; a service
// built without a recorder refuses those calls before anything is stored.
func TestWebhooksAudited(t *testing.T) {
	ctx := context.Background()
	rec := audittest.NewStore()
	st := webhookstest.NewStore()
	svc := webhooks.New(st, netguard.Policy{}).WithAudit(audit.New(rec))
	w, err := svc.Create(ctx, acme, webhooks.CreateInput{URL: ptr("https://hooks.example.com/in"), Events: ptr([]string{domain.EventExecutionCompleted})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Update(ctx, acme, w.ID, webhooks.UpdateInput{Description: domain.Optional[string]{Set: true, Value: "ops"}}); err != nil {
		t.Fatal(err)
	}
	rotated, err := svc.RotateSecret(ctx, acme, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, acme, w.ID); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range rec.Entries() {
		if e.TargetID != w.ID || e.Company != acme.Company || e.ActorKeyID != acme.KeyID {
			t.Errorf("entry %+v: want target %s, company %s, key %s", e, w.ID, acme.Company, acme.KeyID)
		}
		for _, secret := range []string{w.Secret, rotated.Secret} {
			if e.TargetID == secret || e.Action == secret || e.ActorKeyID == secret {
				t.Errorf("entry %+v carries a secret", e)
			}
		}
		actions = append(actions, e.Action)
	}
	sort.Strings(actions)
	want := []string{audit.WebhookCreated, audit.WebhookDeleted, audit.WebhookSecretRotated, audit.WebhookUpdated}
	sort.Strings(want)
	if strings.Join(actions, ",") != strings.Join(want, ",") {
		t.Errorf("recorded %v, want %v", actions, want)
	}

	bare := webhooks.New(webhookstest.NewStore(), netguard.Policy{})
	if _, err := bare.Create(ctx, acme, webhooks.CreateInput{URL: ptr("https://hooks.example.com/in"), Events: ptr([]string{domain.EventExecutionCompleted})}); err == nil {
		t.Error("a service without a recorder created a webhook")
	}
	if err := bare.Delete(ctx, acme, w.ID); err == nil || errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a service without a recorder: delete answered %v, want a refusal", err)
	}
}
