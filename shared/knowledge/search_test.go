package knowledge_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// searchFixture is a completed knowledge base of three files: returns (tagged policy),
// shipping, and a note about refunds (tagged policy, internal).
type searchFixture struct {
	*kbHarness
	kb                       *knowledge.KB
	returns, shipping, notes *domain.File
}

func newSearchFixture(t *testing.T) *searchFixture {
	t.Helper()
	k := newKBService(t)
	f := &searchFixture{kbHarness: k}
	f.returns = k.addFile(t, alice, "returns.txt", returnsText, "policy")
	f.shipping = k.addFile(t, alice, "shipping.txt", shippingText)
	f.notes = k.addFile(t, alice, "notes.txt", "Internal note: refund requests after thirty days go to the manager.", "policy", "internal")
	c := k.addCollection(t, alice, "C", f.returns, f.shipping, f.notes)
	f.kb = k.createKB(t, alice, "KB", map[string]any{"selected_collections": idList(c)})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	return f
}

func hitFiles(hits []domain.Hit) []string {
	var out []string
	for _, h := range hits {
		if !slices.Contains(out, h.FileID) {
			out = append(out, h.FileID)
		}
	}
	return out
}

// TestSearchBeforeCompletion: a knowledge base that never completed an ingestion answers 409,
// not empty results; once completed, it answers.
func TestSearchBeforeCompletion(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "Docs", map[string]any{"selected_datasources": idList(f)})
	_, err := k.Svc.Search(kbCtx(t), alice, kb.ID, decoded[knowledge.SearchInput](map[string]any{"query": "refund"}))
	kbWantErr(t, err, domain.KindConflict)
	if !strings.Contains(err.Error(), "Knowledge base 'Docs' has not completed an ingestion yet (status pending)") {
		t.Errorf("409 message: %v", err)
	}
	k.drain(t)
	if hits := k.search(t, alice, kb.ID, map[string]any{"query": "refund"}); len(hits) == 0 {
		t.Error("no hits after the run")
	}
}

// TestSearchBadInput: each bad value is a 400 naming its field, before the knowledge base is
// even read (the bodies of the wrong shape are the edge's decoder's: api TestDecodeGolden).
func TestSearchBadInput(t *testing.T) {
	k := newKBService(t)
	tests := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no query", map[string]any{"top_k": json.Number("3")}, "query"},
		{"blank query", map[string]any{"query": "  \n"}, "query"},
		{"query too long", map[string]any{"query": strings.Repeat("a", knowledge.MaxQueryLength+1)}, "query"},
		{"top_k 0", map[string]any{"query": "x", "top_k": json.Number("0")}, "top_k"},
		{"top_k over the maximum", map[string]any{"query": "x", "top_k": json.Number("51")}, "top_k"},
		{"top_k fractional", map[string]any{"query": "x", "top_k": json.Number("2.5")}, "top_k"},
		{"threshold over 1", map[string]any{"query": "x", "score_threshold": json.Number("1.5")}, "score_threshold"},
		{"unknown strategy", map[string]any{"query": "x", "strategy": "semantic"}, "strategy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Svc.Search(kbCtx(t), alice, "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f", decoded[knowledge.SearchInput](tt.body))
			kbWantErr(t, err, domain.KindInvalid, tt.field)
		})
	}
}

// TestSearchOptions: top_k, filters by file and tag, the score threshold and the BM25 strategy.
func TestSearchOptions(t *testing.T) {
	f := newSearchFixture(t)
	q := "refund thirty days"
	all := f.search(t, alice, f.kb.ID, map[string]any{"query": q, "top_k": 50})
	if len(all) < 3 || hitFiles(all)[0] != f.returns.ID && hitFiles(all)[0] != f.notes.ID {
		t.Fatalf("all hits: %+v", all)
	}
	if got := f.search(t, alice, f.kb.ID, map[string]any{"query": q, "top_k": 1}); len(got) != 1 || !cmp.Equal(got[0], all[0]) {
		t.Errorf("top_k 1 = %+v, want %+v", got, all[0])
	}
	if got := f.search(t, alice, f.kb.ID, map[string]any{"query": q}); len(got) != min(len(all), knowledge.DefaultTopK) {
		t.Errorf("default top_k: %d hits", len(got))
	}
	got := f.search(t, alice, f.kb.ID, map[string]any{"query": q, "filter": map[string]any{"file_ids": []any{f.shipping.ID}}})
	if diff := cmp.Diff([]string{f.shipping.ID}, hitFiles(got)); diff != "" {
		t.Errorf("file filter (-want +got):\n%s", diff)
	}
	got = f.search(t, alice, f.kb.ID, map[string]any{"query": q, "top_k": 50, "filter": map[string]any{"tags": []any{"internal"}}})
	if diff := cmp.Diff([]string{f.notes.ID}, hitFiles(got)); diff != "" {
		t.Errorf("tag filter (-want +got):\n%s", diff)
	}
	threshold := (all[0].Score + all[len(all)-1].Score) / 2
	got = f.search(t, alice, f.kb.ID, map[string]any{"query": q, "top_k": 50, "score_threshold": threshold})
	if len(got) == 0 || len(got) >= len(all) {
		t.Errorf("threshold %.3f kept %d of %d hits", threshold, len(got), len(all))
	}
	for _, h := range got {
		if h.Score < threshold {
			t.Errorf("hit below the threshold: %+v", h)
		}
	}
	got = f.search(t, alice, f.kb.ID, map[string]any{"query": "warehouse customs", "strategy": "bm25"})
	if len(got) == 0 || got[0].FileID != f.shipping.ID {
		t.Errorf("bm25 hits: %+v", got)
	}
}

// TestSearchArchived: an archived file is never found, without a sync; made active again it is
// found again, as its chunks stayed indexed.
func TestSearchArchived(t *testing.T) {
	f := newSearchFixture(t)
	body := map[string]any{"query": "refund thirty days", "top_k": 50}
	f.setStatus(t, f.returns, domain.FileArchived)
	if got := hitFiles(f.search(t, alice, f.kb.ID, body)); slices.Contains(got, f.returns.ID) || len(got) == 0 {
		t.Errorf("hits with returns.txt archived: %v", got)
	}
	f.setStatus(t, f.returns, domain.FileActive)
	if got := hitFiles(f.search(t, alice, f.kb.ID, body)); !slices.Contains(got, f.returns.ID) {
		t.Errorf("hits with returns.txt active again: %v", got)
	}
}

// TestSearchCalls: one search is one GetKB, one GetFiles (of the knowledge base's own files,
// never a list of the company's), one embedding and one index search.
func TestSearchCalls(t *testing.T) {
	f := newSearchFixture(t)
	f.Store.Reset()
	f.Index.Reset()
	embeds := f.Emb.Calls()
	f.search(t, alice, f.kb.ID, map[string]any{"query": "refund"})
	if f.Store.Get("GetKB") != 1 || f.Store.Get("GetFiles") != 1 || f.Store.Total() != 2 {
		t.Errorf("store calls: GetKB %d, GetFiles %d, total %d; want 1, 1, 2", f.Store.Get("GetKB"), f.Store.Get("GetFiles"), f.Store.Total())
	}
	if f.Index.Get("Search") != 1 || f.Index.Total() != 1 {
		t.Errorf("index calls: %d searches, %d in all; want 1, 1", f.Index.Get("Search"), f.Index.Total())
	}
	if n := f.Emb.Calls() - embeds; n != 1 {
		t.Errorf("%d embedding calls, want 1", n)
	}
}

// TestSearchLongQuery: a query longer than the model reads is embedded in pieces, none of it
// ignored.
func TestSearchLongQuery(t *testing.T) {
	f := newSearchFixture(t)
	f.Emb.max = 4
	before := len(f.Emb.Embedded())
	query := "please tell me about the refund for purchases sent back within thirty days"
	hits := f.search(t, alice, f.kb.ID, map[string]any{"query": query})
	texts := f.Emb.Embedded()[before:]
	if len(texts) != 4 || strings.Join(texts, " ") != query {
		t.Errorf("embedded %q, want the query in 4 pieces", texts)
	}
	if len(hits) == 0 || hits[0].FileID != f.returns.ID && hits[0].FileID != f.notes.ID {
		t.Errorf("hits %+v", hits)
	}
}

// TestSearchKnowledge: an agent's retrieval searches several knowledge bases with one query
// and merges the hits best first; knowledge bases that never completed or do not exist are
// problems, not errors; entries with the same options share one embedding and one search.
func TestSearchKnowledge(t *testing.T) {
	f := newSearchFixture(t)
	other := f.addFile(t, alice, "faq.txt", "Refund questions: a refund takes five business days.")
	second := f.createKB(t, alice, "FAQ", map[string]any{"selected_datasources": idList(other)})
	f.drain(t)
	pending := f.createKB(t, alice, "Pending", map[string]any{"selected_datasources": idList(other)})
	ctx := kbCtx(t)
	gone := "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	refs := []domain.KnowledgeBaseRef{{Name: "policies", ID: f.kb.ID}, {Name: "faq", ID: second.ID},
		{Name: "pending", ID: pending.ID}, {Name: "gone", ID: gone}}
	calls := f.Emb.Calls()
	res, err := f.Svc.SearchKnowledge(ctx, "acme", "refund", refs, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Emb.Calls() - calls; n != 1 {
		t.Errorf("%d embedding calls for one query, want 1", n)
	}
	kbs := map[string]bool{}
	for i, h := range res.Hits {
		kbs[h.KBID] = true
		if i > 0 && h.Score > res.Hits[i-1].Score {
			t.Errorf("hits not best first: %+v", res.Hits)
		}
	}
	if !kbs[f.kb.ID] || !kbs[second.ID] || len(kbs) != 2 {
		t.Errorf("hits from %v", kbs)
	}
	var problems []string
	for _, p := range res.Problems {
		problems = append(problems, p.KnowledgeBaseID)
	}
	if !slices.Equal(problems, []string{pending.ID, gone}) {
		t.Errorf("problems %+v, want the pending and the unknown knowledge base", res.Problems)
	}

	// Mixed strategies merge by rank: the best of each, then the second best.
	refs = []domain.KnowledgeBaseRef{{Name: "policies", ID: f.kb.ID, Retrieval: domain.RetrievalConfig{Strategy: domain.StrategyBM25, TopK: 2}},
		{Name: "faq", ID: second.ID, Retrieval: domain.RetrievalConfig{TopK: 2}}}
	res, err = f.Svc.SearchKnowledge(ctx, "acme", "refund", refs, 0)
	if err != nil || len(res.Hits) < 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if res.Hits[0].KBID != f.kb.ID || res.Hits[1].KBID != second.ID {
		t.Errorf("mixed strategies: %+v, want the bm25 best then the dense best", res.Hits)
	}
	// Nothing searchable: no search at all.
	res, err = f.Svc.SearchKnowledge(ctx, "acme", "refund", []domain.KnowledgeBaseRef{{Name: "gone", ID: gone}}, 0)
	if err != nil || len(res.Hits) != 0 || len(res.Problems) != 1 {
		t.Errorf("only a missing knowledge base: %+v %v", res, err)
	}
}

// TestSyncChangedFile: after a file changed, one was added and one left the collection, a sync
// replaces every old chunk of the changed file, skips the unchanged one (not embedded again),
// ingests the new one and deletes the removed one's chunks.
func TestSyncChangedFile(t *testing.T) {
	k := newKBService(t)
	var long strings.Builder
	for i := range 40 {
		fmt.Fprintf(&long, "Alpha clause %d of the old terms. ", i)
	}
	changed := k.addFile(t, alice, "terms.txt", long.String())
	same := k.addFile(t, alice, "returns.txt", returnsText)
	gone := k.addFile(t, alice, "shipping.txt", shippingText)
	c := k.addCollection(t, alice, "C", changed, same, gone)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_collections": idList(c),
		"chunking_strategy": map[string]any{"chunk_size": 20, "chunk_overlap": 0}})
	k.drain(t)
	before := k.indexed(t, "acme", kb.ID, "")
	if len(before[changed.ID]) < 5 || len(before[gone.ID]) == 0 {
		t.Fatalf("first run indexed %v", before)
	}

	k.rewrite(t, changed, "Omega terms: the new version is short.")
	added := k.addFile(t, alice, "faq.txt", "Questions and answers about deliveries.")
	k.setFiles(t, c, changed, same, added)
	embedded := len(k.Emb.Embedded())
	got, err := k.Svc.SyncKB(kbCtx(t), alice, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.KBRunning {
		t.Errorf("status after sync = %s, want running", got.Status)
	}
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	after := k.indexed(t, "acme", kb.ID, "")
	if diff := cmp.Diff(map[string][]int{changed.ID: {0}, same.ID: before[same.ID], added.ID: {0}}, after); diff != "" {
		t.Errorf("index after sync (-want +got):\n%s", diff)
	}
	for _, text := range k.Emb.Embedded()[embedded:] {
		if strings.Contains(text, "refund") {
			t.Errorf("unchanged file embedded again: %q", text)
		}
	}
	for _, h := range k.search(t, alice, kb.ID, map[string]any{"query": "alpha clause old terms", "top_k": 50}) {
		if strings.Contains(h.Text, "Alpha") {
			t.Errorf("old chunk found after sync: %+v", h)
		}
	}
	view := k.get(t, alice, kb.ID)
	for id, want := range map[string]string{changed.ID: "ingested", same.ID: "unchanged", added.ID: "ingested"} {
		if s := snapshot(view, id).Status; s != want {
			t.Errorf("snapshot of %s: %s, want %s", id, s, want)
		}
	}
	if slices.Contains(view.LiveSources(), gone.ID) || view.Status != domain.KBCompleted || view.SuccessRate() != 100 || len(view.LiveSources()) != 3 {
		t.Errorf("after sync: status %s, success %d, count %d, snapshots %v", view.Status, view.SuccessRate(), len(view.LiveSources()), snapshots(view))
	}
	if rec := k.record(t, kb.ID); rec.Sources[gone.ID] == nil || rec.Sources[gone.ID].Status != domain.IngestRemoved {
		t.Errorf("removed file's datasource: %+v", rec.Sources[gone.ID])
	}
}

// TestSyncSupersedes: a sync while a run is in progress supersedes it: the old run's jobs stop
// (before or after indexing), the new run ingests every file, each chunk is indexed once.
func TestSyncSupersedes(t *testing.T) {
	for _, when := range []string{"before the workers", "inside a worker"} {
		t.Run(when, func(t *testing.T) {
			k := newKBService(t)
			a := k.addFile(t, alice, "a.txt", returnsText)
			b := k.addFile(t, alice, "b.txt", shippingText)
			kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(a, b)})
			k.step(t) // start: two file jobs of the first run queued
			if when == "before the workers" {
				if _, err := k.Svc.SyncKB(kbCtx(t), alice, kb.ID); err != nil {
					t.Fatal(err)
				}
			} else {
				var once bool
				k.Index.BeforePut(func([]domain.Chunk) {
					if !once {
						once = true
						if _, err := k.Svc.SyncKB(kbCtx(t), alice, kb.ID); err != nil {
							t.Error(err)
						}
					}
				})
			}
			if errs := k.drain(t); len(errs) != 0 {
				t.Fatalf("jobs failed: %v", errs)
			}
			got := k.get(t, alice, kb.ID)
			if got.Status != domain.KBCompleted || got.SuccessRate() != 100 {
				t.Fatalf("status %s success %d errors %v", got.Status, got.SuccessRate(), sourceErrors(got))
			}
			idx := k.indexed(t, "acme", kb.ID, "")
			for _, f := range []*domain.File{a, b} {
				want := make([]int, snapshot(got, f.ID).Chunks)
				for i := range want {
					want[i] = i
				}
				if diff := cmp.Diff(want, idx[f.ID]); diff != "" || len(want) == 0 {
					t.Errorf("chunks of %s (-want +got):\n%s", f.Name, diff)
				}
			}
		})
	}
}
