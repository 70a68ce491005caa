package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/webhooknpm"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/seal"
	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

// TestWebhooksStoreSuite holds the adapter to webhooks.Store's contract on DynamoDB Local: the
// suite the fake (webhookstest.Store) passes too, over the adapter itself and with the signing
// secrets sealed (webhooks.Sealed, as the functions build it). Its subtests share one table.
func TestWebhooksStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	t.Run("Plain", func(t *testing.T) {
		webhookstest.StoreSuite(t, func(*testing.T) webhooks.Store { return st })
	})
	t.Run("Sealed", func(t *testing.T) {
		sealed := webhooks.Sealed(st, seal.New(seal.Static("dynamo-test-credentials-key-of-32-bytes+")))
		webhookstest.StoreSuite(t, func(*testing.T) webhooks.Store { return sealed })
	})
}

// TestWebhookSecretsSealedInDynamoDB: on DynamoDB Local, the item of a created and rotated
// webhook holds no signing secret in the clear (no whsec_, not the key's base64), while a
// delivery read through the sealing store is signed so that the standardwebhooks npm package
// verifies it with the secret the creation showed. A webhook stored before sealing (its secret in
// the clear) still delivers, verified the same way.
func TestWebhookSecretsSealedInDynamoDB(t *testing.T) {
	env := localstack.NewTestEnv(t)
	ctx := t.Context()
	db := env.DynamoDB()
	st := dynamo.NewStore(db, env.Config.Table)
	hooks := webhooks.Sealed(st, seal.New(seal.Static("dynamo-test-credentials-key-of-32-bytes+")))
	guard := netguard.Policy{AllowHosts: []string{"127.0.0.1"}}
	svc := webhooks.New(hooks, guard).WithAudit(audit.New(audittest.NewStore()))
	q := &webhookstest.Queue{}
	del := webhooks.NewDeliverer(hooks, st, q, webhooks.Client(guard))

	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, b)
		mu.Unlock()
	}))
	defer srv.Close()

	company := "company-sealed-" + time.Now().Format("150405.000000")
	p := domain.Principal{KeyID: "k1", Company: company}
	url := srv.URL + "/hook"
	events := []string{domain.EventExecutionCompleted}
	first, err := svc.Create(ctx, p, webhooks.CreateInput{URL: &url, Events: &events})
	if err != nil {
		t.Fatal(err)
	}
	w, err := svc.RotateSecret(ctx, p, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Config.Table), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "CO#" + company + "#WH"}, "sk": &types.AttributeValueMemberS{Value: "W#" + w.ID}}})
	if err != nil || out.Item == nil {
		t.Fatalf("the stored item: %v, %v", out, err)
	}
	raw, err := json.Marshal(out.Item)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{first.Secret, w.Secret} {
		if strings.Contains(string(raw), webhooks.SecretPrefix) || strings.Contains(string(raw), strings.TrimPrefix(secret, webhooks.SecretPrefix)) {
			t.Errorf("the stored item holds a secret in the clear: %s", raw)
		}
	}
	if !strings.Contains(string(raw), "sealed:") {
		t.Errorf("the stored item holds no sealed secret: %s", raw)
	}

	// A webhook written before sealing: its secret stored in the clear.
	now := time.Now().UTC()
	old := &domain.Webhook{ID: "0b7c6a1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f", Company: company, URL: url, Events: events, Enabled: true,
		Secret: webhooks.NewSecret(), CreatedAt: now, UpdatedAt: now}
	if err := st.CreateWebhook(ctx, old, webhooks.MaxWebhooksPerCompany); err != nil {
		t.Fatal(err)
	}

	if err := del.Publish(ctx, domain.WebhookEvent{Type: domain.EventExecutionCompleted, Company: company,
		Data: map[string]string{"session_id": "s-1", "execution_id": "e-1", "status": "completed"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		for _, m := range q.Take() {
			if err := del.Process(ctx, m); err != nil {
				t.Fatalf("process %s: %v", m, err)
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(got))
	}

	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := webhooknpm.EnsureDeps(context.Background(), root, os.Stderr); errors.Is(err, webhooknpm.ErrNoNPM) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	// The rotated webhook's delivery verifies under the secret the rotation showed, the older
	// webhook's under its plaintext one; neither under the other's.
	for i, secret := range []string{w.Secret, old.Secret} {
		var ok []int
		for j, req := range got {
			h := map[string]string{}
			for _, k := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
				h[k] = req.Header.Get(k)
			}
			if _, err := webhooknpm.Verify(ctx, root, secret, h, bodies[j]); err == nil {
				ok = append(ok, j)
			}
		}
		if len(ok) != 1 {
			t.Errorf("secret %d verifies deliveries %v with standardwebhooks, want exactly one", i, ok)
		}
	}
}
