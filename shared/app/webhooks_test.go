package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/webhooknpm"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/app/hooks"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// TestWebhookDeliveredAfterExecute: an execute's end reaches a registered endpoint through the
// stack as make dev runs it: the runtime publishes to WebhookQueue, the event-source stand-in
// drives the delivery function, which fans the event out and POSTs it signed; the official
// standardwebhooks library verifies it, and the attempt is recorded as succeeded.
func TestWebhookDeliveredAfterExecute(t *testing.T) {
	env := localstack.NewTestEnv(t)
	if env.Config.WebhookQueueURL == "" {
		t.Fatal("the test stack has no WebhookQueue")
	}
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	env.RunEventSources(t, a.Processor)

	type hit struct {
		header http.Header
		body   []byte
	}
	got := make(chan hit, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- hit{r.Header.Clone(), b}
	}))
	defer srv.Close()

	ctx := t.Context()
	p := domain.Principal{KeyID: "k1", Owner: "o", Company: "company-webhooks"}
	hook, err := hooks.Service(a.App).Create(ctx, p, webhooks.CreateInput{URL: ptrTo(srv.URL + "/hook"),
		Events: ptrTo([]string{domain.EventExecutionCompleted})})
	if err != nil {
		t.Fatal(err) // loopback is allowed locally (MCP_ALLOWED_HOSTS), as under make dev
	}
	svc := a.Sessions()
	sess, err := svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "w", "system_prompt": "be brief"})})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Execute(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	var h hit
	select {
	case h = <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("no delivery within 60 s")
	}
	var payload struct {
		Type string            `json:"type"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(h.body, &payload); err != nil || payload.Type != domain.EventExecutionCompleted ||
		payload.Data["execution_id"] != res.Execution.ID || payload.Data["session_id"] != sess.ID {
		t.Errorf("payload %s", h.body)
	}
	root := repoRoot(t)
	if err := webhooknpm.EnsureDeps(context.Background(), root, os.Stderr); errors.Is(err, webhooknpm.ErrNoNPM) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{}
	for _, k := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		headers[k] = h.header.Get(k)
	}
	if _, err := webhooknpm.Verify(ctx, root, hook.Secret, headers, h.body); err != nil {
		t.Errorf("the delivery does not verify with standardwebhooks: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, _, err := hooks.Deliverer(a.App).Deliveries(ctx, p, hook.ID, 0, 10)
		if err == nil && len(list) == 1 && list[0].Status == domain.DeliverySucceeded && list[0].ID == headers["webhook-id"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries: %+v, %v", list, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ptrTo[T any](v T) *T { return &v }
