package app_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/app/hooks"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// TestWebhookDeliveredAfterIngestion: a knowledge base's ingestion run that ends reaches a
// registered endpoint through the stack as make dev runs it: the ingestion function (driven by
// the event-source stand-in on IngestQueue) publishes to WebhookQueue once the run completes,
// and the delivery function POSTs knowledge_base.ingestion.completed naming the knowledge base,
// its run and the status, and nothing of the file's content.
func TestWebhookDeliveredAfterIngestion(t *testing.T) {
	env := localstack.NewTestEnv(t)
	if env.Config.WebhookQueueURL == "" {
		t.Fatal("the test stack has no WebhookQueue")
	}
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	env.RunEventSources(t, a.Processor)

	got := make(chan []byte, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	defer srv.Close()

	ctx := t.Context()
	p := domain.Principal{KeyID: "k1", Owner: "o", Company: "company-webhooks-ingest"}
	if _, err := hooks.Service(a.App).Create(ctx, p, webhooks.CreateInput{URL: ptrTo(srv.URL + "/hook"),
		Events: ptrTo([]string{domain.EventIngestionCompleted, domain.EventIngestionFailed})}); err != nil {
		t.Fatal(err)
	}
	k, kb := returnsKB(t, a, p, "hooked")
	var body []byte
	select {
	case body = <-got:
	case <-time.After(120 * time.Second):
		t.Fatal("no delivery within 120 s")
	}
	rec, err := k.GetKB(ctx, p, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	var payload struct {
		Type string            `json:"type"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(body, &payload); err != nil {
		t.Fatalf("payload %s: %v", body, err)
	}
	want := map[string]string{"knowledge_base_id": kb.ID, "run_id": rec.RunID, "status": domain.KBCompleted}
	if payload.Type != domain.EventIngestionCompleted || rec.Status != domain.KBCompleted ||
		len(payload.Data) != len(want) || payload.Data["knowledge_base_id"] != want["knowledge_base_id"] ||
		payload.Data["run_id"] != want["run_id"] || payload.Data["status"] != want["status"] {
		t.Errorf("payload %s (knowledge base %s), want %s with %v", body, rec.Status, domain.EventIngestionCompleted, want)
	}
	if strings.Contains(string(body), "thirty days") {
		t.Errorf("the delivery carries the file's content: %s", body)
	}
}
