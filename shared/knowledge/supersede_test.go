package knowledge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// manyBatches sets limits under which numbered(60) is one job of many embedding batches.
func manyBatches(_ *knowledge.Deps, l *knowledge.Limits) { l.ChunksPerJob, l.EmbedBatch = 1000, 2 }

// TestIngestStopsAfterDelete: a job whose knowledge base is deleted, whose file is deleted or
// whose run is superseded by a sync while it embeds stops within a batch or two, not at the end
// of its range, and leaves nothing of the file in the index that should not be there.
func TestIngestStopsAfterDelete(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(t *testing.T, k *kbHarness, kbID string, f *domain.File)
	}{
		{"knowledge base deleted", func(t *testing.T, k *kbHarness, kbID string, _ *domain.File) {
			if err := k.Svc.DeleteKB(kbCtx(t), alice, kbID); err != nil {
				t.Error(err)
			}
		}},
		{"file deleted", func(t *testing.T, k *kbHarness, _ string, f *domain.File) {
			if err := k.Svc.DeleteFile(kbCtx(t), alice, f.ID); err != nil {
				t.Error(err)
			}
		}},
		{"sync", func(t *testing.T, k *kbHarness, kbID string, _ *domain.File) {
			if _, err := k.Svc.SyncKB(kbCtx(t), alice, kbID); err != nil {
				t.Error(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKBService(t, manyBatches)
			f := k.addFile(t, alice, "big.txt", numbered(60))
			other := k.addFile(t, alice, "other.txt", "Short note about returns.")
			total := chunksOf(t, numbered(60))
			kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f, other),
				"chunking_strategy": map[string]any{"chunk_size": 15, "chunk_overlap": 0}})
			k.step(t) // start
			jobs := k.Queue.Take()
			var bigJob string
			for _, j := range jobs {
				if strings.Contains(j, f.ID) {
					bigJob = j
				} else if err := k.Svc.ProcessJob(kbCtx(t), j); err != nil {
					t.Fatal(err)
				}
			}
			before := k.Emb.Calls()
			k.Emb.FailWith(func(call int, _ []string) error {
				if call == before+2 {
					tc.act(t, k, kb.ID, f)
				}
				return nil
			})
			if err := k.Svc.ProcessJob(kbCtx(t), bigJob); err != nil {
				t.Fatalf("the superseded job: %v", err)
			}
			k.Emb.FailWith(nil)
			if calls, all := k.Emb.Calls()-before, (total+1)/2; calls > 3 || calls >= all {
				t.Errorf("the job made %d embedding calls of its %d after the change at the 2nd", calls, all)
			}
			if errs := k.drain(t); len(errs) != 0 {
				t.Fatalf("jobs failed: %v", errs)
			}
			switch tc.name {
			case "knowledge base deleted":
				if got := k.indexed(t, "acme", kb.ID, ""); len(got) != 0 {
					t.Errorf("chunks of the deleted knowledge base: %v", got)
				}
			case "file deleted":
				if got := k.indexed(t, "acme", kb.ID, f.ID); len(got) != 0 {
					t.Errorf("chunks of the deleted file: %v", got)
				}
				if got := k.get(t, alice, kb.ID); got.Status != domain.KBCompleted {
					t.Errorf("status %s", got.Status)
				}
			case "sync":
				got := k.get(t, alice, kb.ID)
				if got.Status != domain.KBCompleted || snapshot(got, f.ID).Chunks != total {
					t.Errorf("after the sync's run: %s %+v", got.Status, snapshot(got, f.ID))
				}
				if n := len(k.indexed(t, "acme", kb.ID, f.ID)[f.ID]); n != total {
					t.Errorf("%d chunks of the file indexed, want %d", n, total)
				}
			}
		})
	}
}

// TestDeadLetterCountsDeliveries: attempts counts the deliveries of the job that failed, not the
// jobs of the file: a continuation that fails on every delivery is "failed after 3 attempts".
func TestDeadLetterCountsDeliveries(t *testing.T) {
	k := newKBService(t, func(_ *knowledge.Deps, l *knowledge.Limits) { l.ChunksPerJob, l.EmbedBatch = 4, 2 })
	text := numbered(60)
	f := k.addFile(t, alice, "big.txt", text)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f),
		"chunking_strategy": map[string]any{"chunk_size": 15, "chunk_overlap": 0}})
	k.Emb.FailWith(func(_ int, texts []string) error {
		for _, t := range texts {
			if strings.Contains(t, "Sentence 59 ") { // the last chunk: a later job's
				return errBusy
			}
		}
		return nil
	})
	errs := k.drain(t)
	if len(errs) != MaxReceives {
		t.Errorf("%d failed deliveries, want %d", len(errs), MaxReceives)
	}
	got := k.get(t, alice, kb.ID)
	want := fmt.Sprintf("ingestion failed after %d attempts: embedding failed: The embedding service is busy; retry shortly", MaxReceives)
	if got.Status != domain.KBFailed || sourceErrors(got)[f.ID] != want {
		t.Errorf("status %s, errors %q; want %q", got.Status, sourceErrors(got)[f.ID], want)
	}
}

// TestIngestCollectionDeletedMidRun: a collection deleted while its run ingests takes its files
// out of the knowledge base when the run ends (chunks deleted, datasources removed), and the
// run settles with the sources that remain: completed with the other collection's file, or
// failed with "no files" when none remains.
func TestIngestCollectionDeletedMidRun(t *testing.T) {
	for _, keepOther := range []bool{true, false} {
		t.Run(fmt.Sprintf("another collection %v", keepOther), func(t *testing.T) {
			k := newKBService(t)
			a := k.addFile(t, alice, "returns.txt", returnsText)
			b := k.addFile(t, alice, "shipping.txt", shippingText)
			gone := k.addCollection(t, alice, "Gone", a)
			colls := []*domain.Collection{gone}
			if keepOther {
				colls = append(colls, k.addCollection(t, alice, "Kept", b))
			}
			kb := k.createKB(t, alice, "KB", map[string]any{"selected_collections": idList(colls...)})
			k.step(t) // start: the run's files are resolved
			if err := k.Svc.DeleteCollection(kbCtx(t), alice, gone.ID); err != nil {
				t.Fatal(err)
			}
			if errs := k.drain(t); len(errs) != 0 {
				t.Fatalf("jobs failed: %v", errs)
			}
			got := k.get(t, alice, kb.ID)
			if got := k.indexed(t, "acme", kb.ID, a.ID); len(got) != 0 {
				t.Errorf("chunks of the deleted collection's file: %v", got)
			}
			for _, d := range sourceIDs(got, nil) {
				if d == a.ID {
					t.Errorf("the deleted collection's file is still a datasource: %+v", d)
				}
			}
			if keepOther {
				if got.Status != domain.KBCompleted || len(got.Collections) != 1 || got.Collections[0] != colls[1].ID ||
					snapshot(got, b.ID).Status != domain.IngestIngested {
					t.Errorf("status %s, collections %v, snapshots %+v", got.Status, got.Collections, snapshots(got))
				}
				return
			}
			if got.Status != domain.KBFailed || !strings.Contains(got.Error, "has no files") || len(got.Collections) != 0 {
				t.Errorf("status %s, error %q, collections %v", got.Status, got.Error, got.Collections)
			}
		})
	}
}
