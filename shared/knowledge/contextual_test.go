package knowledge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// returnsGuide has sections whose chunks (100 characters, no overlap) mostly do not name them.
const returnsGuide = "# Returns policy\n\nWe sell shoes and boots to customers in every country of the union.\n\n" +
	"## Refunds\n\nMoney comes back within fourteen days of the parcel arriving at our store.\n\n" +
	"It goes to the card that paid, never to another one, whatever the customer asks.\n\n" +
	"## Exchanges\n\nAn item may be swapped for another size while stock lasts, once per order.\n"

// smallChunks cuts returnsGuide into a chunk a paragraph.
var smallChunks = map[string]any{"chunk_size": 100, "chunk_overlap": 0, "split_by": "char"}

// withHeaders is smallChunks with contextual headers.
func withHeaders(on bool) map[string]any {
	c := map[string]any{"contextual_headers": on}
	for k, v := range smallChunks {
		c[k] = v
	}
	return c
}

// putOf is what Put was given for a knowledge base, from the n-th chunk put on.
func putOf(k *kbHarness, kbID string, n int) []domain.Chunk {
	var out []domain.Chunk
	for _, c := range k.Index.Stored()[n:] {
		if c.KBID == kbID {
			out = append(out, c)
		}
	}
	return out
}

// TestContextualHeadersEmbedHeaderKeepText: through ingestion into the OpenSearch stand-in, a
// knowledge base with contextual_headers embeds each chunk after "<file> — <section>" and
// stores (and returns in hits) the chunk's own text, the same chunks as without the option; the
// vectors differ; a chunk that never names its section is found by the section's name.
func TestContextualHeadersEmbedHeaderKeepText(t *testing.T) {
	k := newKBService(t)
	f := k.addFile(t, alice, "returns-guide.md", returnsGuide)
	plain := k.createKB(t, alice, "plain", map[string]any{"selected_datasources": []any{f.ID}, "chunking_strategy": smallChunks})
	headed := k.createKB(t, alice, "headed", map[string]any{"selected_datasources": []any{f.ID}, "chunking_strategy": withHeaders(true)})
	if errs := k.drain(t); len(errs) > 0 {
		t.Fatalf("ingestion errors: %v", errs)
	}
	if kb := k.get(t, alice, headed.ID); !kb.Chunking.ContextualHeaders || !snapshot(kb, f.ID).ContextualHeaders {
		t.Errorf("the detail says contextual_headers %v, its file %v; want both true", kb.Chunking.ContextualHeaders, snapshot(kb, f.ID).ContextualHeaders)
	}
	if kb := k.get(t, alice, plain.ID); kb.Chunking.ContextualHeaders || snapshot(kb, f.ID).ContextualHeaders {
		t.Error("a knowledge base that did not ask for contextual headers has them")
	}

	a, b := putOf(k, plain.ID, 0), putOf(k, headed.ID, 0)
	if len(a) < 4 || len(a) != len(b) {
		t.Fatalf("%d chunks without headers, %d with: want the same, at least 4", len(a), len(b))
	}
	embedded := strings.Join(k.Emb.Embedded(), "\x00")
	for i := range a {
		if a[i].Text != b[i].Text || a[i].ChunkIndex != b[i].ChunkIndex {
			t.Errorf("chunk %d: %q without headers, %q with", i, a[i].Text, b[i].Text)
		}
		if dot32(a[i].Vector, b[i].Vector) > 0.9999 {
			t.Errorf("chunk %d %q: the same vector with and without its header", i, a[i].Text)
		}
		if strings.Contains(b[i].Text, "Money comes back") && !strings.Contains(embedded, "returns-guide — Refunds\n\n"+b[i].Text) {
			t.Errorf("chunk %q was not embedded after its header %q", b[i].Text, "returns-guide — Refunds")
		}
	}

	texts := map[string]bool{}
	for _, c := range a {
		texts[c.Text] = true
	}
	// The stored vector is the header's: a query of the chunk's text alone is a perfect match
	// without headers and less than one with them; the hit's text is the chunk's own either way.
	money := ""
	for _, c := range a {
		if strings.Contains(c.Text, "Money comes back") {
			money = c.Text
		}
	}
	for _, tc := range []struct {
		kb       string
		perfect  bool
		moneyTop bool // the Refunds chunk that never says "refund" ranks first for "refunds"
	}{{plain.ID, true, false}, {headed.ID, false, true}} {
		hits := k.search(t, alice, tc.kb, map[string]any{"query": money, "top_k": 1, "strategy": "dense"})
		if len(hits) != 1 || hits[0].Text != money {
			t.Fatalf("searching %q: hits %+v, want the chunk itself", money, hits)
		}
		if got := hits[0].Score > 0.9999; got != tc.perfect {
			t.Errorf("knowledge base %s: the chunk's own text scores %.5f against its stored vector", tc.kb, hits[0].Score)
		}
		hits = k.search(t, alice, tc.kb, map[string]any{"query": "refunds money", "top_k": 3, "strategy": "dense"})
		for _, h := range hits {
			if !texts[h.Text] {
				t.Errorf("hit text %q is not a chunk's own text", h.Text)
			}
		}
		if len(hits) == 0 {
			t.Fatal("no hits")
		}
		if tc.moneyTop && hits[0].Text != money {
			t.Errorf("with headers, %q ranks first for \"refunds money\", want %q", hits[0].Text, money)
		}
	}
}

// TestContextualHeadersSyncReembeds: turning contextual_headers on or off for a knowledge base
// makes its next sync embed its files again (same chunks, new vectors); a sync with the setting
// unchanged leaves them unchanged.
func TestContextualHeadersSyncReembeds(t *testing.T) {
	k := newKBService(t)
	ctx := context.Background()
	f := k.addFile(t, alice, "returns-guide.md", returnsGuide)
	kb := k.createKB(t, alice, "kb", map[string]any{"selected_datasources": []any{f.ID}, "chunking_strategy": smallChunks})
	if errs := k.drain(t); len(errs) > 0 {
		t.Fatalf("ingestion errors: %v", errs)
	}
	first := putOf(k, kb.ID, 0)

	sync := func(on bool) (*knowledge.KB, []domain.Chunk) {
		t.Helper()
		rec := k.record(t, kb.ID)
		if rec.Chunking.ContextualHeaders != on {
			rec.Chunking.ContextualHeaders = on
			if err := k.Store.UpdateKB(ctx, rec, rec.RunID); err != nil {
				t.Fatal(err)
			}
		}
		n := len(k.Index.Stored())
		if _, err := k.Svc.SyncKB(ctx, alice, kb.ID); err != nil {
			t.Fatal(err)
		}
		if errs := k.drain(t); len(errs) > 0 {
			t.Fatalf("ingestion errors: %v", errs)
		}
		return k.get(t, alice, kb.ID), putOf(k, kb.ID, n)
	}
	for i, step := range []struct {
		on     bool
		status string
	}{
		{true, domain.IngestIngested},
		{true, domain.IngestUnchanged},
		{false, domain.IngestIngested},
		{false, domain.IngestUnchanged},
	} {
		got, put := sync(step.on)
		d := snapshot(got, f.ID)
		if d.Status != step.status || d.ContextualHeaders != step.on {
			t.Fatalf("sync %d (contextual_headers %v): the file is %s (headers %v), want %s", i+1, step.on, d.Status, d.ContextualHeaders, step.status)
		}
		if step.status == domain.IngestUnchanged {
			if len(put) != 0 {
				t.Errorf("sync %d: %d chunks embedded again for an unchanged file", i+1, len(put))
			}
			continue
		}
		if len(put) != len(first) {
			t.Fatalf("sync %d: %d chunks, first ingestion %d", i+1, len(put), len(first))
		}
		for j := range put {
			same := dot32(put[j].Vector, first[j].Vector) > 0.9999
			if put[j].Text != first[j].Text || same == step.on {
				t.Errorf("sync %d, chunk %d: text %q (first %q), the first's vector: %v", i+1, j, put[j].Text, first[j].Text, same)
			}
		}
		if n := len(k.indexed(t, alice.Company, kb.ID, f.ID)[f.ID]); n != len(first) {
			t.Errorf("sync %d: the index holds %d chunks of the file, want %d (old ones replaced)", i+1, n, len(first))
		}
	}
}
