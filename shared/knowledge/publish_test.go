package knowledge_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

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

// expect fails t unless the events published so far are want.
func (e *webhookEvents) expect(t testing.TB, want []domain.WebhookEvent) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := cmp.Diff(want, e.got); d != "" {
		t.Errorf("published (-want +got):\n%s", d)
	}
}

// publishingKBs is the harness built with opts whose webhooks' publisher is the recorder it
// returns.
func publishingKBs(t testing.TB, opts ...func(*knowledge.Deps, *knowledge.Limits)) (*kbHarness, *webhookEvents) {
	ev := &webhookEvents{}
	withEvents := func(d *knowledge.Deps, _ *knowledge.Limits) { d.Events = ev }
	return newKBService(t, append([]func(*knowledge.Deps, *knowledge.Limits){withEvents}, opts...)...), ev
}

// kbOver is alice's knowledge base "KB" over files.
func (k *kbHarness) kbOver(t testing.TB, files ...*domain.File) *knowledge.KB {
	t.Helper()
	return k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(files...)})
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
	k, ev := publishingKBs(t)
	f := k.addFile(t, alice, "returns.txt", returnsText)
	kb := k.kbOver(t, f)
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
		k, ev := publishingKBs(t)
		f := k.addFile(t, alice, "a.png", pngBytes)
		kb := k.kbOver(t, f)
		k.drain(t)
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionFailed, k.record(t, kb.ID))}
		ev.expect(t, want)
	})
	t.Run("start dead-lettered", func(t *testing.T) {
		var busy bool
		k, ev := publishingKBs(t, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Store = busyLists{Store: d.Store, on: &busy} })
		f := k.addFile(t, alice, "a.txt", returnsText)
		kb := k.kbOver(t, f)
		busy = true
		k.drain(t)
		busy = false
		got := k.record(t, kb.ID)
		if got.Status != domain.KBFailed {
			t.Fatalf("status %s, want failed", got.Status)
		}
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionFailed, got)}
		ev.expect(t, want)
	})
	t.Run("file jobs not queued", func(t *testing.T) {
		k, ev := publishingKBs(t)
		f := k.addFile(t, alice, "a.txt", returnsText)
		kb := k.kbOver(t, f)
		k.Queue.SendErr = errBusy
		k.drain(t)
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionFailed, k.record(t, kb.ID))}
		ev.expect(t, want)
	})
	t.Run("file dead-lettered, run completed", func(t *testing.T) {
		k, ev := publishingKBs(t)
		good := k.addFile(t, alice, "good.txt", returnsText)
		bad := k.addFile(t, alice, "bad.txt", "poison pill text that the embedder cannot take")
		kb := k.kbOver(t, good, bad)
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
		ev.expect(t, want)
	})
}

// TestRequestEndedRunsPublish: a run that ends in a request rather than in the ingestion
// functions publishes too, once: a read that settles an overdue run (failed, naming the run that
// ended), a sync whose start job cannot be queued (failed), and a file delete that removes the
// run's last open datasource (completed with the files left).
func TestRequestEndedRunsPublish(t *testing.T) {
	t.Run("settled after the deadline", func(t *testing.T) {
		k, ev := publishingKBs(t)
		f := k.addFile(t, alice, "a.txt", returnsText)
		kb := k.kbOver(t, f)
		run := k.record(t, kb.ID).RunID
		k.Queue.Take() // the start job is lost
		k.Clock.Advance(61 * time.Minute)
		k.get(t, alice, kb.ID)
		k.get(t, alice, kb.ID) // a second read finds the run settled
		if _, _, err := k.Svc.ListKBs(kbCtx(t), alice, knowledge.KBFilter{}); err != nil {
			t.Fatal(err)
		}
		want := []domain.WebhookEvent{{Type: domain.EventIngestionFailed, Company: "acme",
			Data: map[string]string{"knowledge_base_id": kb.ID, "run_id": run, "status": domain.KBFailed}}}
		ev.expect(t, want)
	})
	t.Run("sync not queued", func(t *testing.T) {
		k, ev := publishingKBs(t)
		f := k.addFile(t, alice, "a.txt", returnsText)
		kb := k.kbOver(t, f)
		k.drain(t)
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionCompleted, k.record(t, kb.ID))}
		k.Queue.SendErr = errBusy
		if _, err := k.Svc.SyncKB(kbCtx(t), alice, kb.ID); err == nil {
			t.Fatal("the sync succeeded without its start job")
		}
		got := k.record(t, kb.ID)
		if got.Status != domain.KBFailed {
			t.Fatalf("status %s, want failed", got.Status)
		}
		want = append(want, ingestionEvent(domain.EventIngestionFailed, got))
		ev.expect(t, want)
	})
	t.Run("file delete ends the run", func(t *testing.T) {
		k, ev := publishingKBs(t)
		r := k.addFile(t, alice, "returns.txt", returnsText)
		s := k.addFile(t, alice, "shipping.txt", shippingText)
		kb := k.kbOver(t, r, s)
		k.step(t) // the start job queues one job per file
		var rest []string
		for _, m := range k.Queue.Take() {
			if strings.Contains(m, s.ID) {
				rest = append(rest, m) // s's job waits
				continue
			}
			if err := k.Svc.ProcessJob(kbCtx(t), m); err != nil {
				t.Fatal(err)
			}
		}
		if len(ev.got) != 0 || len(rest) != 1 {
			t.Fatalf("before the delete: published %v, %d jobs of the deleted file", ev.got, len(rest))
		}
		if err := k.Svc.DeleteFile(kbCtx(t), alice, s.ID); err != nil {
			t.Fatal(err)
		}
		for _, m := range rest { // the deleted file's late job ends nothing more
			if err := k.Svc.ProcessJob(kbCtx(t), m); err != nil {
				t.Fatal(err)
			}
		}
		got := k.record(t, kb.ID)
		if got.Status != domain.KBCompleted {
			t.Fatalf("status %s, want completed", got.Status)
		}
		want := []domain.WebhookEvent{ingestionEvent(domain.EventIngestionCompleted, got)}
		ev.expect(t, want)
	})
}

// unreadableKBs fails every read of a knowledge base while on.
type unreadableKBs struct {
	knowledge.Store
	on *bool
}

func (u unreadableKBs) GetKB(ctx context.Context, id string) (*domain.KnowledgeBase, error) {
	if *u.on {
		return nil, errors.New("the record does not decode")
	}
	return u.Store.GetKB(ctx, id)
}

// TestDeadLetterUnreadablePublishes: a dead-lettered job whose knowledge base cannot be read is
// tried again until the run's deadline, publishing nothing; past it, the dead-letter processor
// publishes the run failed from the job alone (company, knowledge base, run), once, and the
// message is done. A start job and a file job alike.
func TestDeadLetterUnreadablePublishes(t *testing.T) {
	for _, kind := range []string{"start", "file"} {
		t.Run(kind, func(t *testing.T) {
			var broken bool
			k, ev := publishingKBs(t, func(d *knowledge.Deps, _ *knowledge.Limits) {
				d.Store = unreadableKBs{Store: d.Store, on: &broken}
			})
			f := k.addFile(t, alice, "a.txt", returnsText)
			kb := k.kbOver(t, f)
			run := k.record(t, kb.ID).RunID
			if kind == "file" {
				k.step(t)
			}
			msgs := k.Queue.Take()
			if len(msgs) != 1 || !strings.Contains(msgs[0], `"kind":"`+kind+`"`) {
				t.Fatalf("queued %v, want one %s job", msgs, kind)
			}
			broken = true
			k.Clock.Advance(30 * time.Minute)
			if err := k.Svc.HandleDeadLetter(kbCtx(t), msgs[0]); err == nil || !domain.KindOf(err).Retryable() {
				t.Fatalf("before the deadline: %v, want a retryable error", err)
			}
			if len(ev.got) != 0 {
				t.Fatalf("published before the deadline: %v", ev.got)
			}
			k.Clock.Advance(31 * time.Minute)
			if err := k.Svc.HandleDeadLetter(kbCtx(t), msgs[0]); err != nil {
				t.Fatalf("past the deadline: %v", err)
			}
			want := []domain.WebhookEvent{{Type: domain.EventIngestionFailed, Company: "acme",
				Data: map[string]string{"knowledge_base_id": kb.ID, "run_id": run, "status": domain.KBFailed}}}
			ev.expect(t, want)
		})
	}
}
