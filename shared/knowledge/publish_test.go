package knowledge_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// webhookEvents records what the service publishes.
type webhookEvents struct {
	mu  sync.Mutex
	got []domain.WebhookEvent
}

func (e *webhookEvents) Publish(_ context.Context, ev domain.WebhookEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
	return nil
}

// withEvents builds the harness with ev as the webhooks' publisher.
func withEvents(ev *webhookEvents) func(*knowledge.Deps, *knowledge.Limits) {
	return func(d *knowledge.Deps, _ *knowledge.Limits) { d.Events = ev }
}

// ingestionEvent is the event a run of kb ends with: the knowledge base, the run and the status.
func ingestionEvent(typ string, kb *domain.KnowledgeBase) domain.WebhookEvent {
	return domain.WebhookEvent{Type: typ, Company: "acme",
		Data: map[string]string{"knowledge_base_id": kb.ID, "run_id": kb.RunID, "status": kb.Status}}
}

// TestIngestionPublishesCompleted: a run that ingests its files publishes one
// knowledge_base.ingestion.completed for the company, naming the knowledge base, the run and the
// status and nothing of the content; a sync's second run publishes its own.
func TestIngestionPublishesCompleted(t *testing.T) {
	ev := &webhookEvents{}
	k := newKBService(t, withEvents(ev))
	f := k.addFile(t, alice, "returns.txt", returnsText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	first := k.record(t, kb.ID)
	want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionCompleted, first)}
	if d := cmp.Diff(want, ev.got); d != "" {
		t.Fatalf("published (-want +got):\n%s", d)
	}
	if _, err := k.Svc.SyncKB(kbCtx(t), alice, kb.ID); err != nil {
		t.Fatal(err)
	}
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	second := k.record(t, kb.ID)
	if second.RunID == first.RunID {
		t.Fatal("the sync did not start a new run")
	}
	want = append(want, ingestionEvent(domain.EventIngestionCompleted, second))
	if d := cmp.Diff(want, ev.got); d != "" {
		t.Errorf("published after the sync (-want +got):\n%s", d)
	}
	for _, e := range ev.got {
		for _, v := range e.Data {
			if strings.Contains(v, "thirty days") {
				t.Errorf("an event carries content: %v", e.Data)
			}
		}
	}
}

// TestIngestionPublishesFailed: a run that ends failed publishes one
// knowledge_base.ingestion.failed, whether it failed in the ingestion function (no file could be
// ingested) or in the dead-letter processor (its start never ran, its file jobs could not be
// queued); a run the dead-letter processor finishes completed publishes completed.
func TestIngestionPublishesFailed(t *testing.T) {
	t.Run("no file ingested", func(t *testing.T) {
		ev := &webhookEvents{}
		k := newKBService(t, withEvents(ev))
		f := k.addFile(t, alice, "a.png", pngBytes)
		kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
		k.drain(t)
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionFailed, k.record(t, kb.ID))}
		if d := cmp.Diff(want, ev.got); d != "" {
			t.Errorf("published (-want +got):\n%s", d)
		}
	})
	t.Run("start dead-lettered", func(t *testing.T) {
		var busy bool
		ev := &webhookEvents{}
		k := newKBService(t, withEvents(ev), func(d *knowledge.Deps, _ *knowledge.Limits) { d.Store = busyLists{Store: d.Store, on: &busy} })
		f := k.addFile(t, alice, "a.txt", returnsText)
		kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
		busy = true
		k.drain(t)
		busy = false
		got := k.record(t, kb.ID)
		if got.Status != domain.KBFailed {
			t.Fatalf("status %s, want failed", got.Status)
		}
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionFailed, got)}
		if d := cmp.Diff(want, ev.got); d != "" {
			t.Errorf("published (-want +got):\n%s", d)
		}
	})
	t.Run("file jobs not queued", func(t *testing.T) {
		ev := &webhookEvents{}
		k := newKBService(t, withEvents(ev))
		f := k.addFile(t, alice, "a.txt", returnsText)
		kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
		k.Queue.SendErr = errBusy
		k.drain(t)
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionFailed, k.record(t, kb.ID))}
		if d := cmp.Diff(want, ev.got); d != "" {
			t.Errorf("published (-want +got):\n%s", d)
		}
	})
	t.Run("file dead-lettered, run completed", func(t *testing.T) {
		ev := &webhookEvents{}
		k := newKBService(t, withEvents(ev))
		good := k.addFile(t, alice, "good.txt", returnsText)
		bad := k.addFile(t, alice, "bad.txt", "poison pill text that the embedder cannot take")
		kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(good, bad)})
		k.Emb.FailWith(func(_ int, texts []string) error {
			for _, t := range texts {
				if strings.Contains(t, "poison") {
					return errBusy
				}
			}
			return nil
		})
		k.drain(t)
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionCompleted, k.record(t, kb.ID))}
		if d := cmp.Diff(want, ev.got); d != "" {
			t.Errorf("published (-want +got):\n%s", d)
		}
	})
}
