package knowledge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

const (
	returnsText  = "Returns and refunds.\n\nPurchases may be sent back within thirty days of delivery for a full refund. Items must be unused and in their original packaging."
	shippingText = "Shipping.\n\nParcels leave the warehouse every weekday at noon. International shipping takes between one and three weeks depending on customs."
)

// TestKBCreate: a knowledge base over a collection and selected files answers the contract's
// detail view, pending, with each file once among its datasources, and queues its start job.
func TestKBCreate(t *testing.T) {
	k := newKBService(t)
	a := k.addFile(t, alice, "returns.txt", returnsText)
	b := k.addFile(t, alice, "shipping.txt", shippingText)
	c := k.addCollection(t, alice, "Support", a)
	got := k.createKB(t, bob, "Support KB (v2)", map[string]any{"description": "answers",
		"selected_collections": idList(c), "selected_datasources": idList(b, a)})

	if got.Status != domain.KBPending || got.Progress() != 0 || got.Name != "Support KB (v2)" || domain.NormalizeName(got.Name) != "support_kb_v2" {
		t.Errorf("new knowledge base = %+v", got)
	}
	if got.Owner != "bob" || got.Company != "acme" || got.Engine != "opensearch" || got.Description != "answers" {
		t.Errorf("owner, company, engine, description = %q %q %q %q", got.Owner, got.Company, got.Engine, got.Description)
	}
	if diff := cmp.Diff(chunk.Default(), got.Chunking); diff != "" {
		t.Errorf("chunking_strategy (-want +got):\n%s", diff)
	}
	if want := (domain.Embedding{Provider: "test", Model: "test-bow", Dimensions: bowDims}); got.Embedding != want {
		t.Errorf("embedding_config = %+v, want %+v", got.Embedding, want)
	}
	for _, f := range []*domain.File{a, b} {
		d := snapshot(got, f.ID)
		if d.Name != f.Name || d.Status != domain.IngestPending || domain.SourceStatus(got.SourceFiles, f.ID) != domain.FileActive {
			t.Errorf("datasource %s = %+v, file %+v", f.Name, d, got.SourceFiles[f.ID])
		}
	}
	if diff := cmp.Diff(sortedStrs(a.ID, b.ID), sourceIDs(got, nil)); diff != "" {
		t.Errorf("datasources (-want +got):\n%s", diff)
	}
	if len(got.SourceFiles) != 2 || len(got.LiveSources()) != 2 || snapshot(got, a.ID).Status != domain.IngestPending {
		t.Errorf("counts %d/%d, snapshots %+v", len(got.SourceFiles), len(got.LiveSources()), snapshots(got))
	}
	if diff := cmp.Diff([]string{b.ID, a.ID}, got.Files); diff != "" {
		t.Errorf("selected_datasources (-want +got):\n%s", diff)
	}
	// The JSON view of the detail (every field of the contract) is api's: its shape is pinned in
	// testdata/knowledge_views.json and what it derives in TestKnowledgeViewsDerive.
	if msgs := k.Queue.Take(); len(msgs) != 1 || !strings.Contains(msgs[0], `"kind":"start"`) {
		t.Errorf("queued %v, want one start job", msgs)
	}
	if rec := k.record(t, got.ID); rec.Index != "test-kb-test-bow-256-v2" || rec.RunDeadline == nil || rec.RunID == "" {
		t.Errorf("record: index %q, deadline %v, run %q", rec.Index, rec.RunDeadline, rec.RunID)
	}
}

// TestKBCreateChunking: defaults fit the embedder (Atthene's 500 words where it reads that
// much, the local default for a 128-token model, in proportion between), a chunk_size alone
// never makes the default overlap too large, and split_by "character" is char.
func TestKBCreateChunking(t *testing.T) {
	tests := []struct {
		name      string
		maxTokens int
		body      map[string]any
		want      domain.Chunking
	}{
		{"large model", 8192, nil, chunk.Default()},
		{"128-token model", 128, nil, domain.Chunking{Strategy: "recursive", ChunkSize: 120, ChunkOverlap: 20, SplitBy: "token", RecursiveSeparators: chunk.AttheneSeparators()}},
		{"512-token model", 512, nil, domain.Chunking{Strategy: "recursive", ChunkSize: 480, ChunkOverlap: 80, SplitBy: "token", RecursiveSeparators: chunk.AttheneSeparators()}},
		{"words on a 128-token model", 128, map[string]any{"split_by": "word"}, chunk.DefaultLocal()},
		{"tokens on a large model", 8192, map[string]any{"split_by": "token"}, domain.Chunking{Strategy: "recursive", ChunkSize: 500, ChunkOverlap: 83, SplitBy: "token", RecursiveSeparators: chunk.AttheneSeparators()}},
		{"size alone, over twice the default overlap", 8192, map[string]any{"chunk_size": 99}, domain.Chunking{Strategy: "recursive", ChunkSize: 99, ChunkOverlap: 9, SplitBy: "word", RecursiveSeparators: chunk.AttheneSeparators()}},
		{"size alone", 8192, map[string]any{"chunk_size": 40}, domain.Chunking{Strategy: "recursive", ChunkSize: 40, ChunkOverlap: 4, SplitBy: "word", RecursiveSeparators: chunk.AttheneSeparators()}},
		{"all given, character", 8192, map[string]any{"strategy": "recursive", "chunk_size": 1000, "chunk_overlap": 100, "split_by": "character", "recursive_separators": []any{"\n", ""}},
			domain.Chunking{Strategy: "recursive", ChunkSize: 1000, ChunkOverlap: 100, SplitBy: "char", RecursiveSeparators: []string{"\n", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKBService(t)
			k.Emb.max = tt.maxTokens
			f := k.addFile(t, alice, "a.txt", returnsText)
			body := map[string]any{"selected_datasources": idList(f)}
			if tt.body != nil {
				body["chunking_strategy"] = tt.body
			}
			got := k.createKB(t, alice, "KB", body)
			if diff := cmp.Diff(tt.want, got.Chunking); diff != "" {
				t.Errorf("chunking_strategy (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKBCreateBadInput: every bad body is a 400 naming its fields, and nothing is stored or
// queued.
func TestKBCreateBadInput(t *testing.T) {
	k := newKBService(t, func(_ *knowledge.Deps, l *knowledge.Limits) { l.MaxDatasources = 3 })
	f := k.addFile(t, alice, "a.txt", returnsText)
	c := k.addCollection(t, alice, "Support", f)
	big := k.addCollection(t, alice, "Big", f, k.addFile(t, alice, "b.txt", "b"), k.addFile(t, alice, "c.txt", "c"), k.addFile(t, alice, "d.txt", "d"))
	foreignFile := k.addFile(t, eve, "secret.txt", "globex notes")
	foreignColl := k.addCollection(t, eve, "Globex", foreignFile)
	const unknown = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	ok := func(extra map[string]any) map[string]any {
		b := map[string]any{"name": "KB", "processing_engine": "opensearch", "selected_collections": idList(c)}
		for key, v := range extra {
			if v == nil {
				delete(b, key)
			} else {
				b[key] = v
			}
		}
		return b
	}
	tests := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"no name", ok(map[string]any{"name": nil}), []string{"name"}},
		{"blank name", ok(map[string]any{"name": " \u200b "}), []string{"name"}},
		{"no sources", ok(map[string]any{"selected_collections": nil}), []string{"selected_collections"}},
		{"empty sources", ok(map[string]any{"selected_collections": []any{}, "selected_datasources": []any{}}), []string{"selected_collections"}},
		{"foreign collection", ok(map[string]any{"selected_collections": idList(foreignColl)}), []string{"selected_collections.0"}},
		{"unknown collection by alias", ok(map[string]any{"selected_collections": nil, "collection_ids": []any{c.ID, unknown}}), []string{"collection_ids.1"}},
		{"both names of the collections", ok(map[string]any{"collection_ids": idList(c)}), []string{"collection_ids"}},
		{"files valid, foreign, unknown, malformed, null", ok(map[string]any{"selected_collections": nil,
			"selected_datasources": []any{f.ID, foreignFile.ID, unknown, "x", nil}}),
			[]string{"selected_datasources.4", "selected_datasources.1", "selected_datasources.2", "selected_datasources.3"}},
		{"more files than allowed", ok(map[string]any{"selected_collections": idList(big)}), []string{"selected_collections"}},
		{"another engine", ok(map[string]any{"processing_engine": "milvus"}), []string{"processing_engine"}},
		{"unknown provider", ok(map[string]any{"embedding_config": map[string]any{"provider": "mistral"}}), []string{"embedding_config.provider"}},
		{"dimension not offered", ok(map[string]any{"embedding_config": map[string]any{"dimensions": json.Number("100")}}), []string{"embedding_config.dimensions"}},
		{"overlap not below size", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_size": json.Number("50"), "chunk_overlap": json.Number("50")}}), []string{"chunking_strategy.chunk_overlap"}},
		{"size zero", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_size": json.Number("0")}}), []string{"chunking_strategy.chunk_size"}},
		{"one character a chunk", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_size": json.Number("1"), "split_by": "char"}}), []string{"chunking_strategy.chunk_size"}},
		{"characters below the floor", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_size": json.Number("99"), "chunk_overlap": json.Number("0"), "split_by": "character"}}), []string{"chunking_strategy.chunk_size"}},
		{"words below the floor", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_size": json.Number("14")}}), []string{"chunking_strategy.chunk_size"}},
		{"tokens below the floor", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_size": json.Number("24"), "split_by": "token"}}), []string{"chunking_strategy.chunk_size"}},
		{"overlap over half the size", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_size": json.Number("100"), "chunk_overlap": json.Number("51")}}), []string{"chunking_strategy.chunk_overlap"}},
		{"size fractional", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_size": json.Number("1.5")}}), []string{"chunking_strategy.chunk_size"}},
		{"negative overlap", ok(map[string]any{"chunking_strategy": map[string]any{"chunk_overlap": json.Number("-1")}}), []string{"chunking_strategy.chunk_overlap"}},
		{"unknown split", ok(map[string]any{"chunking_strategy": map[string]any{"split_by": "sentence"}}), []string{"chunking_strategy.split_by"}},
		{"unknown strategy", ok(map[string]any{"chunking_strategy": map[string]any{"strategy": "semantic"}}), []string{"chunking_strategy.strategy"}},
		{"no separators", ok(map[string]any{"chunking_strategy": map[string]any{"recursive_separators": []any{}}}), []string{"chunking_strategy.recursive_separators"}},
		{"save as collection", ok(map[string]any{"save_as_collection": true}), []string{"save_as_collection"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Svc.CreateKB(kbCtx(t), alice, decoded[knowledge.KBInput](tt.body))
			kbWantErr(t, err, domain.KindInvalid, tt.fields...)
		})
	}
	if n := k.Store.Get("PutKB"); n != 0 {
		t.Errorf("%d knowledge bases stored by bad input", n)
	}
	if n := k.Queue.Len(); n != 0 {
		t.Errorf("%d jobs queued by bad input", n)
	}
	// Atthene's own fields are accepted.
	k.createKB(t, alice, "Atthene", map[string]any{"collection_ids": idList(c), "save_as_collection": false, "new_collection_name": "", "llm_config": map[string]any{}})
}

// TestKBCreateWithoutQueue: a deployment without an ingestion queue refuses to create or sync
// (an internal error for the log, not a knowledge base pending for ever) and stores nothing.
// TestKBCreateTyped: an input built in Go (no JSON) is validated on its values alone, and
// trimmed, deduplicated and defaulted as a body's is.
func TestKBCreateTyped(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	c := k.addCollection(t, alice, "c", f)
	size, name := 200.0, "KB"
	for _, tt := range []struct {
		name   string
		in     knowledge.KBInput
		fields []string
	}{
		{"empty", knowledge.KBInput{}, []string{"name", "selected_collections"}},
		{"blank id", knowledge.KBInput{Name: &name, Datasources: ptrs(f.ID, " ")}, []string{"selected_datasources.1"}},
		{"unknown collection", knowledge.KBInput{Name: &name, Collections: ptrs(unknownID)}, []string{"selected_collections.0"}},
		{"chunk too small", knowledge.KBInput{Name: &name, Datasources: ptrs(f.ID), Chunking: &knowledge.ChunkingInput{ChunkSize: new(float64)}}, []string{"chunking_strategy.chunk_size"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Svc.CreateKB(kbCtx(t), alice, tt.in)
			kbWantErr(t, err, domain.KindInvalid, tt.fields...)
		})
	}
	spaced := " KB "
	kb, err := k.Svc.CreateKB(kbCtx(t), alice, knowledge.KBInput{Name: &spaced, Collections: ptrs(c.ID), Datasources: ptrs(f.ID, f.ID),
		Chunking: &knowledge.ChunkingInput{SplitBy: domain.Some("character"), ChunkSize: &size}})
	if err != nil {
		t.Fatal(err)
	}
	if kb.Name != "KB" || len(kb.Files) != 1 || len(kb.LiveSources()) != 1 || kb.Chunking.SplitBy != "char" || kb.Chunking.ChunkSize != int(size) {
		t.Errorf("knowledge base = %+v", kb)
	}
}

func TestKBCreateWithoutQueue(t *testing.T) {
	k := newKBService(t, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Queue = nil })
	f := k.addFile(t, alice, "a.txt", returnsText)
	_, err := k.Svc.CreateKB(kbCtx(t), alice, decoded[knowledge.KBInput](map[string]any{"name": "KB", "selected_datasources": idList(f)}))
	kbWantErr(t, err, domain.KindInternal)
	if !strings.Contains(err.Error(), "no ingestion queue") {
		t.Errorf("error %v does not say why", err)
	}
	if n := k.Store.Get("PutKB"); n != 0 {
		t.Errorf("%d knowledge bases stored", n)
	}
}

// TestKBCreateSendFails: when the start job cannot be queued, the knowledge base is taken back
// and the queue's error returned.
func TestKBCreateSendFails(t *testing.T) {
	k := newKBService(t)
	k.Queue.SendErr = errBusy
	f := k.addFile(t, alice, "a.txt", returnsText)
	_, err := k.Svc.CreateKB(kbCtx(t), alice, decoded[knowledge.KBInput](map[string]any{"name": "KB", "selected_datasources": idList(f)}))
	kbWantErr(t, err, domain.KindOverloaded)
	if list, _, err := k.Svc.ListKBs(kbCtx(t), alice, knowledge.KBFilter{}); err != nil || len(list) != 0 {
		t.Errorf("knowledge bases after the failed create: %v %v", list, err)
	}
}

// TestKBTenancy: another company's knowledge bases are not found, whatever the operation, and
// its collections and files cannot be put into one's own.
func TestKBTenancy(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
	k.drain(t)
	ctx := kbCtx(t)
	for _, id := range []string{kb.ID, "not-an-id", "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"} {
		_, err := k.Svc.GetKB(ctx, eve, id)
		kbWantErr(t, err, domain.KindNotFound)
		_, err = k.Svc.CheckStatus(ctx, eve, id)
		kbWantErr(t, err, domain.KindNotFound)
		_, err = k.Svc.SyncKB(ctx, eve, id)
		kbWantErr(t, err, domain.KindNotFound)
		_, err = k.Svc.Search(ctx, eve, id, decoded[knowledge.SearchInput](map[string]any{"query": "refund"}))
		kbWantErr(t, err, domain.KindNotFound)
		kbWantErr(t, k.Svc.DeleteKB(ctx, eve, id), domain.KindNotFound)
	}
	if list, _, err := k.Svc.ListKBs(ctx, eve, knowledge.KBFilter{}); err != nil || len(list) != 0 {
		t.Errorf("eve lists %v %v", list, err)
	}
	_, err := k.Svc.CreateKB(ctx, eve, decoded[knowledge.KBInput](map[string]any{"name": "Mine", "selected_datasources": idList(f)}))
	kbWantErr(t, err, domain.KindInvalid, "selected_datasources.0")
	// Bob, of alice's company, shares it.
	if got := k.get(t, bob, kb.ID); got.Status != domain.KBCompleted {
		t.Errorf("bob reads status %s", got.Status)
	}
	if res, err := k.Svc.SearchKnowledge(ctx, "globex", "refund", []domain.KnowledgeBaseRef{{Name: "theirs", ID: kb.ID}}, 0); err != nil ||
		len(res.Hits) != 0 || len(res.Problems) != 1 || res.Problems[0].KnowledgeBaseID != kb.ID {
		t.Errorf("an agent of another company searches it: %+v %v", res, err)
	}
}

// TestKBList: newest first, filtered by status, a page at a time; bad filters are 400s naming
// the parameter.
func TestKBList(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	first := k.createKB(t, alice, "First", map[string]any{"selected_datasources": idList(f)})
	k.drain(t)
	second := k.createKB(t, alice, "Second", map[string]any{"selected_datasources": idList(f)})
	ctx := kbCtx(t)
	list, more, err := k.Svc.ListKBs(ctx, alice, knowledge.KBFilter{})
	if err != nil || more || len(list) != 2 || list[0].ID != second.ID || list[1].ID != first.ID {
		t.Fatalf("list = %v %v %v", list, more, err)
	}
	for status, want := range map[string][]string{"completed": {first.ID}, "pending": {second.ID}, "failed": nil} {
		list, _, err := k.Svc.ListKBs(ctx, alice, knowledge.KBFilter{Status: status, Engine: "opensearch"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range list {
			got = append(got, v.ID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("status %s (-want +got):\n%s", status, diff)
		}
	}
	if list, more, _ := k.Svc.ListKBs(ctx, alice, knowledge.KBFilter{Limit: 1}); len(list) != 1 || !more {
		t.Errorf("first page of 1: %d items, more %v", len(list), more)
	}
	_, _, err = k.Svc.ListKBs(ctx, alice, knowledge.KBFilter{Status: "done"})
	kbWantErr(t, err, domain.KindInvalid, "status")
	_, _, err = k.Svc.ListKBs(ctx, alice, knowledge.KBFilter{Engine: "milvus"})
	kbWantErr(t, err, domain.KindInvalid, "processing_engine")
}

// TestKBCheckStatus: the contract's wrapper; status_updated is true for StatusWindow after the
// status changed and false after.
func TestKBCheckStatus(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "Docs", map[string]any{"selected_datasources": idList(f)})
	ctx := kbCtx(t)
	st, err := k.Svc.CheckStatus(ctx, alice, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.KB.Name != "Docs" || st.KB.Status != domain.KBPending || !st.Updated {
		t.Errorf("status after create = %+v", st)
	}
	k.Clock.Advance(2 * time.Minute)
	if st, _ = k.Svc.CheckStatus(ctx, alice, kb.ID); st.Updated {
		t.Errorf("status_updated two minutes after the last change")
	}
	k.drain(t)
	st, _ = k.Svc.CheckStatus(ctx, alice, kb.ID)
	if !st.Updated || st.KB.Status != domain.KBCompleted || st.KB.Progress() != 100 || st.KB.SuccessRate() != 100 {
		t.Errorf("status after the run = %+v", st.KB)
	}
	if st.KB.Metadata.Phase != "done" || st.KB.Metadata.Message != "Ingested 1 of 1 files" {
		t.Errorf("processing_metadata = %+v", st.KB.Metadata)
	}
	k.Clock.Advance(61 * time.Second)
	if st, _ = k.Svc.CheckStatus(ctx, alice, kb.ID); st.Updated {
		t.Errorf("status_updated 61 s after the last change")
	}
}

// TestKBRunDeadline: a run whose jobs never ran is settled as failed by the first read past
// RunDeadline, with the reason; a late job then changes nothing.
func TestKBRunDeadline(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
	k.Clock.Advance(59 * time.Minute)
	if got := k.get(t, alice, kb.ID); got.Status != domain.KBPending {
		t.Fatalf("status before the deadline = %s", got.Status)
	}
	k.Clock.Advance(2 * time.Minute)
	got := k.get(t, alice, kb.ID)
	const msg = "ingestion did not finish within 1 hour; run sync to retry"
	if got.Status != domain.KBFailed || got.Error != msg || sourceErrors(got)[f.ID] != msg {
		t.Fatalf("after the deadline: status %s, error %q, datasource errors %v", got.Status, got.Error, sourceErrors(got))
	}
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("late jobs: %v", errs)
	}
	if got := k.get(t, alice, kb.ID); got.Status != domain.KBFailed {
		t.Errorf("a late job changed the settled run: %s", got.Status)
	}
	if n := k.Index.Get("Put"); n != 0 {
		t.Errorf("a late job indexed %d times", n)
	}
	// Sync starts again.
	if _, err := k.Svc.SyncKB(kbCtx(t), alice, kb.ID); err != nil {
		t.Fatal(err)
	}
	k.drain(t)
	if got := k.get(t, alice, kb.ID); got.Status != domain.KBCompleted {
		t.Errorf("after sync: %s %q", got.Status, got.Error)
	}
}

// conflictingStore loses every whole-record write of a knowledge base to a concurrent one.
type conflictingStore struct{ knowledge.Store }

func (conflictingStore) UpdateKB(context.Context, *domain.KnowledgeBase, string) error {
	return &domain.Error{Kind: domain.KindConflict, Message: "The knowledge base's run was superseded"}
}

// TestKBSettleConflict: a read that cannot settle an overdue run because the record keeps
// changing answers 409 asking to retry, not 500.
func TestKBSettleConflict(t *testing.T) {
	var on bool
	k := newKBService(t, func(d *knowledge.Deps, _ *knowledge.Limits) {
		st := d.Store
		d.Store = switchStore{Store: st, alt: conflictingStore{st}, on: &on}
	})
	f := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
	k.Clock.Advance(2 * time.Hour)
	on = true
	_, err := k.Svc.GetKB(kbCtx(t), alice, kb.ID)
	kbWantErr(t, err, domain.KindConflict)
	if !strings.Contains(err.Error(), "kept changing") {
		t.Errorf("409 message: %v", err)
	}
	_, err = k.Svc.SyncKB(kbCtx(t), alice, kb.ID)
	kbWantErr(t, err, domain.KindConflict)
}

// switchStore sends UpdateKB to alt while *on.
type switchStore struct {
	knowledge.Store
	alt knowledge.Store
	on  *bool
}

func (s switchStore) UpdateKB(ctx context.Context, kb *domain.KnowledgeBase, runID string) error {
	if *s.on {
		return s.alt.UpdateKB(ctx, kb, runID)
	}
	return s.Store.UpdateKB(ctx, kb, runID)
}

// TestKBDelete: the knowledge base and its chunks go; its collections and files remain.
func TestKBDelete(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	c := k.addCollection(t, alice, "C", f)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_collections": idList(c)})
	k.drain(t)
	if got := k.indexed(t, "acme", kb.ID, ""); len(got[f.ID]) == 0 {
		t.Fatalf("nothing indexed: %v", got)
	}
	if err := k.Svc.DeleteKB(kbCtx(t), alice, kb.ID); err != nil {
		t.Fatal(err)
	}
	if got := k.indexed(t, "acme", kb.ID, ""); len(got) != 0 {
		t.Errorf("chunks left after delete: %v", got)
	}
	_, err := k.Svc.GetKB(kbCtx(t), alice, kb.ID)
	kbWantErr(t, err, domain.KindNotFound)
	if _, err := k.Store.GetFile(kbCtx(t), f.ID); err != nil {
		t.Errorf("file gone with the knowledge base: %v", err)
	}
	if _, err := k.Store.GetCollection(kbCtx(t), c.ID); err != nil {
		t.Errorf("collection gone with the knowledge base: %v", err)
	}
}

// slowDelete holds a knowledge base's record deletion until released: a worker then runs
// between the delete of the chunks and the delete of the record.
type slowDelete struct {
	knowledge.Store
	reached, release chan struct{}
}

func (s *slowDelete) DeleteKB(ctx context.Context, id string) error {
	close(s.reached)
	<-s.release
	return s.Store.DeleteKB(ctx, id)
}

// TestKBDeleteMidRun: deleting a knowledge base while its files are being ingested leaves
// nothing in the index — also when a worker's Put lands after the delete's own, and when the
// worker writes while the record still exists (the delete marked its run).
func TestKBDeleteMidRun(t *testing.T) {
	for _, when := range []string{"after start", "inside a worker", "before the record goes"} {
		t.Run(when, func(t *testing.T) {
			gate := &slowDelete{reached: make(chan struct{}), release: make(chan struct{})}
			k := newKBService(t, func(d *knowledge.Deps, _ *knowledge.Limits) {
				if when == "before the record goes" {
					gate.Store, d.Store = d.Store, gate
				}
			})
			a := k.addFile(t, alice, "a.txt", returnsText)
			b := k.addFile(t, alice, "b.txt", shippingText)
			kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(a, b)})
			k.step(t) // the start job: two file jobs queued
			deleted := make(chan error, 1)
			switch when {
			case "after start":
				deleted <- k.Svc.DeleteKB(kbCtx(t), alice, kb.ID)
			case "inside a worker":
				var once bool
				k.Index.BeforePut(func([]domain.Chunk) {
					if !once {
						once = true
						deleted <- k.Svc.DeleteKB(kbCtx(t), alice, kb.ID)
					}
				})
			default:
				var once bool
				k.Index.BeforePut(func([]domain.Chunk) {
					if !once {
						once = true
						go func() { deleted <- k.Svc.DeleteKB(kbCtx(t), alice, kb.ID) }()
						<-gate.reached // chunks deleted, record not yet
					}
				})
			}
			if errs := k.drain(t); len(errs) != 0 {
				t.Fatalf("jobs failed: %v", errs)
			}
			if when == "before the record goes" {
				close(gate.release)
			}
			if err := <-deleted; err != nil {
				t.Fatal(err)
			}
			if got := k.indexed(t, "acme", kb.ID, ""); len(got) != 0 {
				t.Errorf("chunks left after deleting mid-run: %v", got)
			}
			if _, err := k.Store.GetKB(kbCtx(t), kb.ID); domain.KindOf(err) != domain.KindNotFound {
				t.Errorf("record after delete: %v", err)
			}
		})
	}
}
