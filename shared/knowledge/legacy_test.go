package knowledge_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

// TestSyncMovesLegacyIndex: a knowledge base living in an index made before the english
// sub-field keeps answering (BM25 on exact word forms only), and a sync moves it into the
// current index: every file indexed again (not skipped as unchanged), its chunks gone from the
// legacy index, and BM25 then finds other forms of a word. A second sync skips the files again.
func TestSyncMovesLegacyIndex(t *testing.T) {
	k := newKBService(t)
	ctx := kbCtx(t)
	f := k.addFile(t, alice, "terms.txt", "The licensee terminates this agreement by written notice to the licensor.")
	kb := k.createKB(t, alice, "legacy", map[string]any{"selected_datasources": []any{f.ID}})
	if errs := k.drain(t); len(errs) > 0 {
		t.Fatal(errs)
	}
	rec := k.record(t, kb.ID)
	current := rec.Index
	legacy := strings.TrimSuffix(current, "-v2")
	if legacy == current || !k.Vectors.Legacy(legacy) {
		t.Fatalf("index %q: want a current name ending -v2", current)
	}

	// The knowledge base as an earlier release left it: its chunks in an index of the old
	// mapping, its record naming that index.
	old := `{"settings":{"index":{"knn":true,"number_of_shards":1,"number_of_replicas":0}},"mappings":{"dynamic":"strict","properties":{
		"kb_id":{"type":"keyword"},"company":{"type":"keyword"},"file_id":{"type":"keyword"},"file_name":{"type":"keyword"},
		"chunk_index":{"type":"integer"},"text":{"type":"text","analyzer":"standard"},"tags":{"type":"keyword"},"content_hash":{"type":"keyword"},
		"embedding":{"type":"knn_vector","dimension":` + strconv.Itoa(bowDims) + `,"method":{"name":"hnsw","engine":"faiss","space_type":"cosinesimil"}}}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, k.osURL+"/"+legacy, strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("create the legacy index: %v %v", res, err)
	}
	_ = res.Body.Close()
	k.Index.mu.Lock()
	chunks := append([]domain.Chunk(nil), k.Index.put...)
	k.Index.mu.Unlock()
	if err := k.Vectors.Put(ctx, legacy, chunks); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Vectors.DeleteKB(ctx, current, alice.Company, kb.ID); err != nil {
		t.Fatal(err)
	}
	for _, ix := range []string{legacy, current} {
		if err := k.Vectors.Refresh(ctx, ix); err != nil {
			t.Fatal(err)
		}
	}
	rec.Index = legacy
	if err := k.Store.UpdateKB(ctx, rec, rec.RunID); err != nil {
		t.Fatal(err)
	}

	bm25 := func(q string) int {
		return len(k.search(t, alice, kb.ID, map[string]any{"query": q, "strategy": "bm25"}))
	}
	if n, m := bm25("terminates"), bm25("termination"); n != 1 || m != 0 {
		t.Fatalf("bm25 in the legacy index: %d hits for the exact form, %d for another; want 1, 0", n, m)
	}

	if _, err := k.Svc.SyncKB(ctx, alice, kb.ID); err != nil {
		t.Fatal(err)
	}
	if errs := k.drain(t); len(errs) > 0 {
		t.Fatal(errs)
	}
	got := k.record(t, kb.ID)
	if got.Index != current || got.Status != domain.KBCompleted || got.Sources[f.ID].Status != domain.IngestIngested {
		t.Fatalf("after the sync: index %q, status %s, file %s; want %q, completed, ingested", got.Index, got.Status, got.Sources[f.ID].Status, current)
	}
	if err := k.Vectors.Refresh(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if n, err := k.Vectors.Count(ctx, legacy, kb.ID); err != nil || n != 0 {
		t.Errorf("the legacy index still holds %d chunks of the knowledge base (%v)", n, err)
	}
	if n := bm25("termination"); n != 1 {
		t.Errorf("bm25 after the move: %d hits for another form of the word, want 1", n)
	}

	if _, err := k.Svc.SyncKB(ctx, alice, kb.ID); err != nil {
		t.Fatal(err)
	}
	if errs := k.drain(t); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := k.record(t, kb.ID); got.Index != current || got.Sources[f.ID].Status != domain.IngestUnchanged {
		t.Errorf("a second sync: index %q, file %s; want %q, unchanged", got.Index, got.Sources[f.ID].Status, current)
	}
}
