package vectors_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/vectors"
)

func TestPutOverwritesByDeterministicID(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	chunks := fileChunks("acme", "kb1", "f1", 3, 4)
	s.put(t, ix, chunks)
	chunks[1].Text = "changed text of the second chunk"
	s.put(t, ix, chunks)
	s.refresh(t, ix)
	if n := s.countKB(t, ix, "kb1"); n != 3 {
		t.Errorf("after putting 3 chunks twice: %d documents, want 3", n)
	}
	q := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 3, Strategy: vectors.BM25, Text: "changed"}
	if hits := s.search(t, ix, q); len(hits) != 1 || hits[0].ChunkIndex != 1 || hits[0].Text != chunks[1].Text {
		t.Errorf("overwritten chunk: %v", hits)
	}
	// The same file in another knowledge base is another set of documents.
	if vectors.ChunkID("kb1", "f1", 0) == vectors.ChunkID("kb2", "f1", 0) || vectors.ChunkID("kb1", "f1", 0) == vectors.ChunkID("kb1", "f1", 1) {
		t.Error("chunk ids collide")
	}
}

func TestPutNotSearchableUntilRefresh(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	s.count.take()
	s.put(t, ix, fileChunks("acme", "kb1", "f1", 3, 4))
	if got := s.count.take(); !cmp.Equal(got, []string{"POST /_bulk"}) {
		t.Errorf("Put of 3 chunks sent %v, want one _bulk (and no refresh)", got)
	}
	s.refresh(t, ix)
	if n := s.countKB(t, ix, "kb1"); n != 3 {
		t.Errorf("after refresh: %d, want 3", n)
	}
}

func TestPutBatches(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)

	// By count: 1,200 small chunks are three requests of at most 500 (by bytes:
	// TestBulkBodyBytes).
	s.count.take()
	s.put(t, ix, fileChunks("acme", "kb1", "many", 1200, 4))
	if got := s.count.take(); len(got) != 3 {
		t.Errorf("1200 chunks: %d requests %v, want 3", len(got), got)
	}

	s.refresh(t, ix)
	if n := s.countKB(t, ix, "kb1"); n != 1200 {
		t.Errorf("%d chunks stored, want 1200", n)
	}
}

// Items OpenSearch rejects with 429 (a full write queue) are sent again, alone.
func TestPutRetriesRejectedItems(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	var bodies []string
	rejected := false
	s.count.hook(func(r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		bodies = append(bodies, string(b))
	})
	s.count.rewrite(func(r *http.Request, res *http.Response) *http.Response {
		if rejected {
			return res
		}
		rejected = true
		// The first answer: item 1 refused as OpenSearch refuses it when the write queue is full.
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		_ = res.Body.Close()
		item := body["items"].([]any)[1].(map[string]any)["index"].(map[string]any)
		item["status"] = 429
		item["error"] = map[string]any{"type": "es_rejected_execution_exception", "reason": "rejected execution of coordinating operation"}
		body["errors"] = true
		b, _ := json.Marshal(body)
		res.Body = io.NopCloser(bytes.NewReader(b))
		res.ContentLength = int64(len(b))
		return res
	})
	chunks := fileChunks("acme", "kb1", "f1", 3, 4)
	if err := s.store.Put(ctx(t), ix, chunks); err != nil {
		t.Fatal(err)
	}
	s.count.hook(nil)
	s.count.rewrite(nil)
	if len(bodies) != 2 || strings.Count(bodies[1], "\n") != 2 || !strings.Contains(bodies[1], vectors.ChunkID("kb1", "f1", 1)) {
		t.Errorf("bulk bodies %q, want a second one holding chunk 1 alone", bodies)
	}
}

func TestPutDimensionMismatch(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	bad := fileChunks("acme", "kb1", "f1", 2, 3)

	// This process ensured the index: the mismatch is caught before any request.
	s.count.take()
	err := s.store.Put(ctx(t), ix, bad)
	if !errors.Is(err, vectors.ErrDimensionMismatch) || !strings.Contains(err.Error(), "holds 4 dimensions, the vector has 3") {
		t.Errorf("Put of 3-d vectors into a 4-d index: %v", err)
	}
	if got := s.count.take(); len(got) != 0 {
		t.Errorf("sent %v", got)
	}

	// Another process that did not ensure it learns it from OpenSearch, per chunk; the good
	// chunks of the same request are stored.
	other := s.newStore(t)
	mixed := append(fileChunks("acme", "kb1", "good", 2, 4), bad...)
	err = other.Put(ctx(t), ix, mixed)
	var pe *vectors.PutError
	if !errors.As(err, &pe) || len(pe.Items) != 2 || !errors.Is(err, vectors.ErrDimensionMismatch) {
		t.Fatalf("Put with 2 bad chunks: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "Vector dimension mismatch. Expected: 4, Given: 3") || !strings.Contains(msg, "file f1") {
		t.Errorf("error does not say what is wrong: %s", msg)
	}
	s.refresh(t, ix)
	if n := s.countKB(t, ix, "kb1"); n != 2 {
		t.Errorf("%d chunks stored, want the 2 good ones", n)
	}

	// A query vector of the wrong length: caught at once where the index is known, reported by
	// OpenSearch elsewhere.
	q := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 3, Vector: unit(1, 0, 0)}
	s.count.take()
	_, err = s.store.Search(ctx(t), ix, q)
	if !errors.Is(err, vectors.ErrDimensionMismatch) || len(s.count.take()) != 0 {
		t.Errorf("search with a 3-d vector: %v", err)
	}
	_, err = other.Search(ctx(t), ix, q)
	if !errors.Is(err, vectors.ErrDimensionMismatch) || !strings.Contains(err.Error(), "invalid dimension: 3") {
		t.Errorf("search with a 3-d vector, index not ensured: %v", err)
	}
}

func TestPutRejectsBadChunks(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	for name, edit := range map[string]func(*vectors.Chunk){
		"no kb":          func(c *vectors.Chunk) { c.KBID = "" },
		"no company":     func(c *vectors.Chunk) { c.Company = "" },
		"no file":        func(c *vectors.Chunk) { c.FileID = "" },
		"negative index": func(c *vectors.Chunk) { c.ChunkIndex = -1 },
		"no vector":      func(c *vectors.Chunk) { c.Vector = nil },
		"zero vector":    func(c *vectors.Chunk) { c.Vector = make([]float32, 4) },
		"NaN":            func(c *vectors.Chunk) { c.Vector = []float32{1, float32(nan()), 0, 0} },
	} {
		c := fileChunks("acme", "kb1", "f1", 1, 4)
		edit(&c[0])
		s.count.take()
		if err := s.store.Put(ctx(t), ix, c); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if got := s.count.take(); len(got) != 0 {
			t.Errorf("%s: sent %v", name, got)
		}
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}
