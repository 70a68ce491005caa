package knowledge_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// pngBytes is the head of a PNG image: a type the extractor does not read.
var pngBytes = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"

// TestIngestPipeline: upload, collection, knowledge base, the queue drained: the run completes
// with each file's outcome — two ingested, a file without text and an image failed with the
// extractor's reasons — and a search finds the right file.
func TestIngestPipeline(t *testing.T) {
	k := newKBService(t)
	r := k.addFile(t, alice, "returns.txt", returnsText, "policy")
	s := k.addFile(t, alice, "shipping.txt", shippingText)
	blank := k.addFile(t, alice, "blank.txt", " \n\t-- \n")
	img := k.addFile(t, alice, "photo.png", pngBytes)
	c := k.addCollection(t, alice, "Support", r, s, blank, img)
	kb := k.createKB(t, alice, "Support", map[string]any{"selected_collections": idList(c)})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	got := k.get(t, alice, kb.ID)
	if got.Status != domain.KBCompleted || got.Progress() != 100 || got.SuccessRate() != 50 || got.Completed == nil || got.Error != "" {
		t.Fatalf("after the run: status %s progress %d success %d last %v error %q", got.Status, got.Progress(), got.SuccessRate(), got.Completed, got.Error)
	}
	if diff := cmp.Diff(sortedStrs(r.ID, s.ID), sourceIDs(got, (*domain.Datasource).Ingested)); diff != "" {
		t.Errorf("ingested_datasources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sortedStrs(blank.ID, img.ID), sourceIDs(got, failedSource)); diff != "" {
		t.Errorf("failed_datasources (-want +got):\n%s", diff)
	}
	for id, want := range map[string]string{blank.ID: "no text could be extracted", img.ID: "unsupported file type image/png"} {
		if msg := sourceErrors(got)[id]; !strings.Contains(msg, want) {
			t.Errorf("datasource_errors[%s] = %q, want it to say %q", id, msg, want)
		}
	}
	for id, want := range map[string]string{r.ID: "ingested", s.ID: "ingested", blank.ID: "failed", img.ID: "failed"} {
		snap := snapshot(got, id)
		if snap.Status != want || snap.FileID != id || (want == "ingested" && snap.Chunks == 0) {
			t.Errorf("snapshot of %s = %+v, want %s", id, snap, want)
		}
	}
	if got.Metadata.Phase != "done" || !strings.Contains(got.Metadata.Message, "2 failed") {
		t.Errorf("processing_metadata = %+v", got.Metadata)
	}
	hits := k.search(t, alice, kb.ID, map[string]any{"query": "refund for purchases sent back"})
	if len(hits) == 0 || hits[0].FileID != r.ID || hits[0].FileName != "returns.txt" || !strings.Contains(hits[0].Text, "thirty days") {
		t.Fatalf("hits = %+v, want returns.txt first", hits)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hits not best first: %+v", hits)
		}
	}
}

// TestIngestCalls counts the store and index calls of a run of small files: a few per file,
// a few per run, none per chunk; a sync of changed files adds the delete of the old chunks.
func TestIngestCalls(t *testing.T) {
	k := newKBService(t)
	var files []*domain.File
	for i := range 4 {
		files = append(files, k.addFile(t, alice, fmt.Sprintf("f%d.txt", i), strings.Repeat(fmt.Sprintf("Paragraph %d of many words. ", i), 40)))
	}
	c := k.addCollection(t, alice, "C", files...)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_collections": idList(c),
		"chunking_strategy": map[string]any{"chunk_size": 30, "chunk_overlap": 0}})
	n := len(files)
	for _, run := range []string{"first", "sync of changed files"} {
		if run != "first" {
			for i, f := range files {
				k.rewrite(t, f, strings.Repeat(fmt.Sprintf("Section %d, revised. ", i), 50))
			}
			if _, err := k.Svc.SyncKB(kbCtx(t), alice, kb.ID); err != nil {
				t.Fatal(err)
			}
		}
		k.Store.Reset()
		k.Index.Reset()
		k.drain(t)
		if got := k.get(t, alice, kb.ID); got.Status != domain.KBCompleted || snapshot(got, files[0].ID).Chunks < 5 {
			t.Fatalf("%s run: %s, chunks %d", run, got.Status, snapshot(got, files[0].ID).Chunks)
		}
		// Per file: GetKB at the start and after indexing, GetFile, UpdateSource when it
		// starts and when it ends. Per run: GetKB, GetCollection and GetFiles (of the
		// collection's files only) of the start job, UpdateKB of the start and of the end,
		// GetCollection of the end (a collection deleted meanwhile leaves the run); GetKB and
		// GetFiles (of its sources) of the read above. Never a list of the company.
		wantStore := map[string]int{"GetKB": 2*n + 1 + 1, "GetFile": n, "UpdateSource": 2 * n, "GetFiles": 1 + 1, "GetCollection": 1 + 1, "UpdateKB": 2, "ListFiles": 0}
		for name, want := range wantStore {
			if got := k.Store.Get(name); got != want {
				t.Errorf("%s run: Store.%s: %d calls, want %d", run, name, got, want)
			}
		}
		if got, want := k.Store.Total(), 5*n+8; got != want {
			t.Errorf("%s run: store calls: %d, want %d (5 per file + 8)", run, got, want)
		}
		// Per file: one Put, and in a sync a DeleteFile of the old chunks first; per run: one
		// Refresh.
		deletes := 0
		if run != "first" {
			deletes = n
		}
		wantIndex := map[string]int{"DeleteFile": deletes, "Put": n, "Refresh": 1}
		for name, want := range wantIndex {
			if got := k.Index.Get(name); got != want {
				t.Errorf("%s run: Index.%s: %d calls, want %d", run, name, got, want)
			}
		}
		if got, want := k.Index.Total(), n+deletes+1; got != want {
			t.Errorf("%s run: index calls: %d, want %d", run, got, want)
		}
	}
}

// TestIngestAllFail: when no file can be ingested the run fails, with the reason in the record
// and each file's in datasource_errors; a search says the knowledge base never completed.
func TestIngestAllFail(t *testing.T) {
	k := newKBService(t)
	a := k.addFile(t, alice, "a.png", pngBytes)
	b := k.addFile(t, alice, "b.txt", "...")
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(a, b)})
	k.drain(t)
	got := k.get(t, alice, kb.ID)
	if got.Status != domain.KBFailed || !strings.Contains(got.Error, "none of its 2 files could be ingested") || got.SuccessRate() != 0 || len(sourceErrors(got)) != 2 {
		t.Fatalf("status %s, error %q, success %d, errors %v", got.Status, got.Error, got.SuccessRate(), sourceErrors(got))
	}
	_, err := k.Svc.Search(kbCtx(t), alice, kb.ID, decoded[knowledge.SearchInput](map[string]any{"query": "anything"}))
	kbWantErr(t, err, domain.KindConflict)
	if !strings.Contains(err.Error(), "never completed an ingestion") {
		t.Errorf("409 message: %v", err)
	}
}

// TestIngestEmptyKB: a knowledge base whose collection is empty fails with that reason.
func TestIngestEmptyKB(t *testing.T) {
	k := newKBService(t)
	c := k.addCollection(t, alice, "Empty")
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_collections": idList(c)})
	k.drain(t)
	if got := k.get(t, alice, kb.ID); got.Status != domain.KBFailed || !strings.Contains(got.Error, "has no files") {
		t.Errorf("status %s, error %q", got.Status, got.Error)
	}
}

// TestIngestLargeFile: a file of more chunks than one job embeds is ingested by a chain of
// continuation jobs; progress and processing_metadata move per job; every chunk is indexed
// once and embedding calls stay within the batch size.
func TestIngestLargeFile(t *testing.T) {
	k := newKBService(t, func(_ *knowledge.Deps, l *knowledge.Limits) { l.ChunksPerJob, l.EmbedBatch = 4, 2 })
	var b strings.Builder
	for i := range 150 {
		fmt.Fprintf(&b, "word%d ", i)
	}
	big := k.addFile(t, alice, "big.txt", b.String())
	small := k.addFile(t, alice, "small.txt", "Short note about returns.")
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(big, small),
		"chunking_strategy": map[string]any{"chunk_size": 15, "chunk_overlap": 0}})
	k.step(t) // start
	k.step(t) // first job of each file
	got := k.get(t, alice, kb.ID)
	if got.Status != domain.KBRunning || got.Progress() != 50 {
		t.Errorf("after the first jobs: status %s progress %d", got.Status, got.Progress())
	}
	if m := got.Metadata; m.Phase != "embedding" || m.TotalChunks != 10+1 || m.ProcessedChunks != 4+1 || m.Message != "Generating embeddings: 5/11 chunks" {
		t.Errorf("processing_metadata = %+v", m)
	}
	if snap := snapshot(got, big.ID); snap.Status != domain.IngestRunning {
		t.Errorf("big file snapshot = %+v", snap)
	}
	jobs := 2
	for k.Queue.Len() > 0 {
		jobs += k.step(t)
	}
	if jobs != 4 {
		t.Errorf("%d file jobs, want 4 (3 for 10 chunks at 4 a job, 1 for the small file)", jobs)
	}
	got = k.get(t, alice, kb.ID)
	if got.Status != domain.KBCompleted || snapshot(got, big.ID).Chunks != 10 {
		t.Fatalf("after the run: %s, chunks %d", got.Status, snapshot(got, big.ID).Chunks)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, k.indexed(t, "acme", kb.ID, big.ID)[big.ID]); diff != "" {
		t.Errorf("indexed chunks of the big file (-want +got):\n%s", diff)
	}
	if n := len(k.Emb.Embedded()); n != 11 {
		t.Errorf("%d texts embedded, want 11 (each chunk once)", n)
	}
	if calls := k.Emb.Calls(); calls != 6 {
		t.Errorf("%d embedding calls, want 6 (batches of at most 2)", calls)
	}
}

// TestIngestTokenLimit: chunks over the embedder's token limit are split further — at word
// boundaries, a word over the limit between characters — with consecutive chunk indexes and
// every word of the text embedded, none dropped.
func TestIngestTokenLimit(t *testing.T) {
	k := newKBService(t)
	k.Emb.max = 8
	long := strings.Repeat("x", 100) // 13 tokens on its own
	var words []string
	for i := range 60 {
		words = append(words, fmt.Sprintf("w%d", i))
		if i == 30 {
			words = append(words, long)
		}
	}
	text := strings.Join(words, " ")
	f := k.addFile(t, alice, "a.txt", text)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f),
		"chunking_strategy": map[string]any{"chunk_size": 25, "chunk_overlap": 0, "split_by": "word"}})
	k.drain(t)
	if got := k.get(t, alice, kb.ID); got.Status != domain.KBCompleted {
		t.Fatalf("status %s: %v", got.Status, sourceErrors(got))
	}
	stored := k.Index.Stored()
	var joined []string
	for i, c := range stored {
		if c.ChunkIndex != i {
			t.Errorf("chunk %d has index %d", i, c.ChunkIndex)
		}
		if n := k.Emb.Tokens(c.Text); n > 8 {
			t.Errorf("chunk %d has %d tokens, over the limit of 8: %q", i, n, c.Text)
		}
		joined = append(joined, strings.Fields(c.Text)...)
	}
	if got := strings.Join(joined, ""); got != strings.Join(words, "") {
		t.Errorf("the chunks do not hold the text:\n got %q\nwant %q", got, strings.Join(words, ""))
	}
	if got := k.indexed(t, "acme", kb.ID, f.ID)[f.ID]; len(got) != len(stored) {
		t.Errorf("%d chunks indexed, %d put", len(got), len(stored))
	}
}

// TestIngestRetryThenSuccess: a retryable embedding error is returned (SQS delivers again) and
// recorded as the datasource's last error; the next delivery ingests the file.
func TestIngestRetryThenSuccess(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
	k.step(t) // start
	k.Emb.FailWith(func(call int, _ []string) error {
		if call == 1 {
			return errBusy
		}
		return nil
	})
	jobs := k.Queue.Take()
	if len(jobs) != 1 {
		t.Fatalf("jobs %v", jobs)
	}
	err := k.Svc.ProcessJob(kbCtx(t), jobs[0])
	if !domain.KindOf(err).Retryable() {
		t.Fatalf("first delivery: %v, want a retryable error", err)
	}
	ds := k.record(t, kb.ID).Sources[f.ID]
	if ds.Status != domain.IngestRunning || ds.Attempts != 1 || ds.Error != "embedding failed: The embedding service is busy; retry shortly" {
		t.Errorf("after the failed delivery: %+v", ds)
	}
	if err := k.Svc.ProcessJob(kbCtx(t), jobs[0]); err != nil {
		t.Fatalf("second delivery: %v", err)
	}
	got := k.get(t, alice, kb.ID)
	snap := snapshot(got, f.ID)
	if got.Status != domain.KBCompleted || snap.Status != domain.IngestIngested || snap.Attempts != 2 || snap.Error != "" {
		t.Errorf("after the second delivery: %s %+v", got.Status, snap)
	}
}

// TestDeadLetter: a file whose every delivery fails goes to the dead-letter queue, whose
// handler records it failed with the number of attempts and the last error; the other file is
// ingested and the run completes.
func TestDeadLetter(t *testing.T) {
	k := newKBService(t)
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
	errs := k.drain(t)
	if len(errs) != MaxReceives {
		t.Errorf("%d failed deliveries, want %d: %v", len(errs), MaxReceives, errs)
	}
	got := k.get(t, alice, kb.ID)
	want := "ingestion failed after 3 attempts: embedding failed: The embedding service is busy; retry shortly"
	if got.Status != domain.KBCompleted || got.SuccessRate() != 50 || sourceErrors(got)[bad.ID] != want {
		t.Errorf("status %s, success %d, errors %v; want %q", got.Status, got.SuccessRate(), sourceErrors(got), want)
	}
	if got := k.indexed(t, "acme", kb.ID, bad.ID); len(got) != 0 {
		t.Errorf("chunks of the failed file: %v", got)
	}
}

// TestDeadLetterStartJob: a start job whose file jobs cannot be queued ends, through the
// dead-letter queue, with its datasources failed instead of pending for ever.
func TestDeadLetterStartJob(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
	k.Queue.SendErr = fmt.Errorf("queue unavailable")
	if errs := k.drain(t); len(errs) != MaxReceives {
		t.Errorf("%d failed deliveries, want %d", len(errs), MaxReceives)
	}
	got := k.get(t, alice, kb.ID)
	if got.Status != domain.KBFailed || sourceErrors(got)[f.ID] != "ingestion could not be queued; run sync to retry" {
		t.Errorf("status %s, errors %v", got.Status, sourceErrors(got))
	}
}

// busyLists fails GetFiles while *on, as a throttled table would.
type busyLists struct {
	knowledge.Store
	on *bool
}

func (b busyLists) GetFiles(ctx context.Context, ids []string) (map[string]*domain.File, error) {
	if *b.on {
		return nil, errBusy
	}
	return b.Store.GetFiles(ctx, ids)
}

// TestDeadLetterUnresolvedStart: a start job that could never resolve the run's files ends,
// through the dead-letter queue, with the run failed and its datasources failed with the reason.
func TestDeadLetterUnresolvedStart(t *testing.T) {
	var busy bool
	k := newKBService(t, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Store = busyLists{Store: d.Store, on: &busy} })
	f := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
	busy = true
	if errs := k.drain(t); len(errs) != MaxReceives {
		t.Errorf("%d failed deliveries, want %d", len(errs), MaxReceives)
	}
	busy = false
	got := k.get(t, alice, kb.ID)
	const msg = "ingestion could not be started after repeated attempts; run sync to retry"
	if got.Status != domain.KBFailed || got.Error != msg || sourceErrors(got)[f.ID] != msg || got.Progress() != 100 {
		t.Errorf("status %s, error %q, datasource errors %v, progress %d", got.Status, got.Error, sourceErrors(got), got.Progress())
	}
}

// TestIngestDeleteFile: a deleted file's chunks are never found again; it leaves the
// knowledge base's datasources and selected_datasources.
func TestIngestDeleteFile(t *testing.T) {
	k := newKBService(t)
	r := k.addFile(t, alice, "returns.txt", returnsText)
	s := k.addFile(t, alice, "shipping.txt", shippingText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(r, s)})
	k.drain(t)
	if hits := k.search(t, alice, kb.ID, map[string]any{"query": "refund thirty days"}); len(hits) == 0 || hits[0].FileID != r.ID {
		t.Fatalf("before the delete: %+v", hits)
	}
	if err := k.Svc.DeleteFile(kbCtx(t), alice, r.ID); err != nil {
		t.Fatal(err)
	}
	for _, h := range k.search(t, alice, kb.ID, map[string]any{"query": "refund thirty days", "top_k": 50}) {
		if h.FileID == r.ID {
			t.Errorf("deleted file found: %+v", h)
		}
	}
	if got := k.indexed(t, "acme", kb.ID, r.ID); len(got) != 0 {
		t.Errorf("chunks of the deleted file in the index: %v", got)
	}
	got := k.get(t, alice, kb.ID)
	if diff := cmp.Diff([]string{s.ID}, sourceIDs(got, nil)); diff != "" {
		t.Errorf("datasources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{s.ID}, got.Files); diff != "" {
		t.Errorf("selected_datasources (-want +got):\n%s", diff)
	}
	if got.Status != domain.KBCompleted || got.SuccessRate() != 100 {
		t.Errorf("status %s success %d", got.Status, got.SuccessRate())
	}
}

// TestIngestDeleteFileDuringRun: a file deleted while a worker ingests it — the delete landing
// between the worker's read and its Put — leaves nothing in the index, and the run completes
// with the other file.
func TestIngestDeleteFileDuringRun(t *testing.T) {
	k := newKBService(t)
	r := k.addFile(t, alice, "returns.txt", returnsText)
	s := k.addFile(t, alice, "shipping.txt", shippingText)
	c := k.addCollection(t, alice, "C", r, s)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_collections": idList(c)})
	k.Index.BeforePut(func(chunks []domain.Chunk) {
		if chunks[0].FileID == r.ID {
			k.Index.BeforePut(nil)
			if err := k.Svc.DeleteFile(kbCtx(t), alice, r.ID); err != nil {
				t.Error(err)
			}
		}
	})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	if got := k.indexed(t, "acme", kb.ID, ""); len(got[r.ID]) != 0 || len(got[s.ID]) == 0 {
		t.Errorf("index after the delete: %v", got)
	}
	got := k.get(t, alice, kb.ID)
	if got.Status != domain.KBCompleted || got.SuccessRate() != 100 || slices.Contains(sourceIDs(got, nil), r.ID) {
		t.Errorf("status %s, success %d, datasources %v", got.Status, got.SuccessRate(), sourceIDs(got, nil))
	}
}

// TestIngestMalformedJob: a body this package did not write is an invalid_request error that
// the queue consumer drops (not retryable); a job of a knowledge base that is gone does nothing.
func TestIngestMalformedJob(t *testing.T) {
	k := newKBService(t)
	for _, body := range []string{"", "{", `{"kind":"start"}`, `{"kind":"purge","kb_id":"a","run_id":"b"}`, `{"kind":"file","kb_id":"a","run_id":"b"}`,
		`{"kind":"file","kb_id":"a","run_id":"b","file_id":"c","from":-1}`} {
		if err := k.Svc.ProcessJob(kbCtx(t), body); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("ProcessJob(%q) = %v, want an invalid_request error", body, err)
		}
		if err := knowledge.CheckJob(body); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("CheckJob(%q) = %v", body, err)
		}
		if err := k.Svc.HandleDeadLetter(kbCtx(t), body); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("HandleDeadLetter(%q) = %v", body, err)
		}
	}
	for _, body := range []string{`{"kind":"start","kb_id":"5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f","run_id":"r"}`,
		`{"kind":"file","kb_id":"5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f","run_id":"r","file_id":"f","index":"test-kb-test-bow-256","company":"acme"}`} {
		if err := knowledge.CheckJob(body); err != nil {
			t.Errorf("CheckJob(%s): %v", body, err)
		}
		if err := k.Svc.ProcessJob(kbCtx(t), body); err != nil {
			t.Errorf("ProcessJob of a gone knowledge base: %v", err)
		}
		if err := k.Svc.HandleDeadLetter(kbCtx(t), body); err != nil {
			t.Errorf("HandleDeadLetter of a gone knowledge base: %v", err)
		}
	}
}
