package vectors_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/vectors"
)

// found is every chunk of kbID that any strategy finds for a query that matches every chunk of
// fileChunks ("part", a vector near all of them).
func (s *stand) found(t *testing.T, index, company, kbID string) map[string]int {
	t.Helper()
	files := map[string]int{}
	for _, st := range vectors.Strategies {
		q := vectors.Query{KBIDs: []string{kbID}, Company: company, TopK: 100, Strategy: st, Vector: unit(1, 1, 1, 1), Text: "part"}
		for _, h := range s.search(t, index, q) {
			files[h.FileID+"/"+string(st)]++
		}
	}
	return files
}

func TestDeleteFile(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	s.put(t, ix, fileChunks("acme", "kb1", "fa", 5, 4))
	s.put(t, ix, fileChunks("acme", "kb1", "fb", 3, 4))
	s.put(t, ix, fileChunks("acme", "kb2", "fa", 2, 4)) // the same file in another knowledge base
	s.refresh(t, ix)

	s.count.take()
	n, err := s.store.DeleteFile(ctx(t), ix, "acme", "kb1", "fa")
	if err != nil || n != 5 {
		t.Fatalf("DeleteFile = %d, %v; want 5", n, err)
	}
	if got := s.count.take(); !cmp.Equal(got, []string{"POST /" + ix + "/_refresh", "POST /" + ix + "/_delete_by_query"}) {
		t.Errorf("DeleteFile sent %v", got)
	}
	// Found by no strategy, at once (the delete refreshed), and the rest untouched.
	want := map[string]int{}
	for _, st := range vectors.Strategies {
		want["fb/"+string(st)] = 3
	}
	if got := s.found(t, ix, "acme", "kb1"); !cmp.Equal(got, want) {
		t.Errorf("kb1 after deleting fa (-want +got):\n%s", cmp.Diff(want, got))
	}
	if n := s.countKB(t, ix, "kb2"); n != 2 {
		t.Errorf("kb2 holds %d chunks, want its 2", n)
	}

	// Re-indexing the file with fewer chunks after deleting it leaves none of the old ones.
	if _, err := s.store.DeleteFile(ctx(t), ix, "acme", "kb1", "fb"); err != nil {
		t.Fatal(err)
	}
	fewer := fileChunks("acme", "kb1", "fb", 2, 4)
	for i := range fewer {
		fewer[i].Text = "new version " + fewer[i].Text
	}
	s.put(t, ix, fewer)
	s.refresh(t, ix)
	q := vectors.Query{KBIDs: []string{"kb1"}, Company: "acme", TopK: 100, Vector: unit(1, 1, 1, 1)}
	hits := s.search(t, ix, q)
	if len(hits) != 2 {
		t.Errorf("after re-indexing fb with 2 chunks: %v", ids(hits))
	}
	for _, h := range hits {
		if h.FileID != "fb" || h.ChunkIndex > 1 || h.Text != fewer[h.ChunkIndex].Text {
			t.Errorf("residue: %+v", h)
		}
	}
}

// Chunks put a moment ago, not refreshed yet, are deleted too and do not come back with the
// next refresh: what ingestion in flight leaves behind.
func TestDeleteFileJustPut(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	s.put(t, ix, fileChunks("acme", "kb1", "fa", 4, 4))
	n, err := s.store.DeleteFile(ctx(t), ix, "acme", "kb1", "fa")
	if err != nil || n != 4 {
		t.Fatalf("DeleteFile of unrefreshed chunks = %d, %v; want 4", n, err)
	}
	s.refresh(t, ix)
	if got := s.found(t, ix, "acme", "kb1"); len(got) != 0 {
		t.Errorf("found after delete and refresh: %v", got)
	}
}

// A chunk re-put between the delete's refresh and its delete-by-query is a version conflict:
// the delete refreshes and deletes again, and the chunk is gone too.
func TestDeleteFileRetriesVersionConflicts(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	chunks := fileChunks("acme", "kb1", "fa", 3, 4)
	s.put(t, ix, chunks)
	s.refresh(t, ix)

	var once sync.Once
	s.count.hook(func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_delete_by_query") {
			once.Do(func() {
				// Another writer, straight to the stand-in: chunk 1 again, after the refresh.
				line, _ := json.Marshal(map[string]any{"index": map[string]any{"_index": ix, "_id": vectors.ChunkID("kb1", "fa", 1)}})
				doc, _ := json.Marshal(map[string]any{"kb_id": "kb1", "company": "acme", "file_id": "fa", "chunk_index": 1,
					"text": "written concurrently", "embedding": chunks[1].Vector})
				res, err := http.Post(s.url+"/_bulk", "application/x-ndjson", strings.NewReader(string(line)+"\n"+string(doc)+"\n"))
				if err != nil {
					t.Error(err)
					return
				}
				_ = res.Body.Close()
			})
		}
	})
	s.count.take()
	n, err := s.store.DeleteFile(ctx(t), ix, "acme", "kb1", "fa")
	s.count.hook(nil)
	if err != nil || n != 3 {
		t.Fatalf("DeleteFile = %d, %v; want 3", n, err)
	}
	want := []string{"POST /" + ix + "/_refresh", "POST /" + ix + "/_delete_by_query", "POST /" + ix + "/_refresh", "POST /" + ix + "/_delete_by_query"}
	if got := s.count.take(); !cmp.Equal(got, want) {
		t.Errorf("DeleteFile with a conflict sent %v, want %v", got, want)
	}
	s.refresh(t, ix)
	if got := s.found(t, ix, "acme", "kb1"); len(got) != 0 {
		t.Errorf("found after delete: %v", got)
	}
}

func TestDeleteKB(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	s.put(t, ix, fileChunks("acme", "kb1", "fa", 3, 4))
	s.refresh(t, ix)
	s.put(t, ix, fileChunks("acme", "kb1", "fb", 3, 4)) // ingestion in flight
	s.put(t, ix, fileChunks("acme", "kb2", "fc", 2, 4))
	s.put(t, ix, fileChunks("globex", "kb1", "fd", 2, 4)) // another company's, same id

	n, err := s.store.DeleteKB(ctx(t), ix, "acme", "kb1")
	if err != nil || n != 6 {
		t.Fatalf("DeleteKB = %d, %v; want 6", n, err)
	}
	s.refresh(t, ix)
	if got := s.found(t, ix, "acme", "kb1"); len(got) != 0 {
		t.Errorf("kb1 after DeleteKB: %v", got)
	}
	if n := s.countKB(t, ix, "kb2"); n != 2 {
		t.Errorf("kb2: %d chunks, want 2", n)
	}
	if got := s.found(t, ix, "globex", "kb1"); got["fd/dense"] != 2 {
		t.Errorf("globex's kb1 after acme's delete: %v", got)
	}

	// Over every index of the store, and on indices that do not exist.
	if _, err := s.store.DeleteKB(ctx(t), s.store.AllIndices(), "acme", "kb2"); err != nil {
		t.Fatal(err)
	}
	if n := s.countKB(t, ix, "kb2"); n != 0 {
		t.Errorf("kb2 after DeleteKB on all indices: %d", n)
	}
	if n, err := s.store.DeleteKB(ctx(t), "test-kb-missing-4", "acme", "kb1"); err != nil || n != 0 {
		t.Errorf("DeleteKB on a missing index = %d, %v", n, err)
	}
	if n, err := s.store.Count(ctx(t), "test-kb-missing-4", "kb1"); err != nil || n != 0 {
		t.Errorf("Count on a missing index = %d, %v", n, err)
	}
}

func TestDeleteFileEverywhere(t *testing.T) {
	s := newStand(t)
	small := s.ensure(t, "small-model", 4)
	large := s.ensure(t, "large-model", 8)
	s.put(t, small, fileChunks("acme", "kb1", "f1", 3, 4))
	s.put(t, small, fileChunks("acme", "kb2", "f1", 3, 4))
	s.put(t, large, fileChunks("acme", "kb3", "f1", 3, 8))
	s.put(t, large, fileChunks("acme", "kb3", "f2", 3, 8))
	s.put(t, large, fileChunks("globex", "kb4", "f1", 3, 8))

	n, err := s.store.DeleteFileEverywhere(ctx(t), "acme", "f1")
	if err != nil || n != 9 {
		t.Fatalf("DeleteFileEverywhere = %d, %v; want 9", n, err)
	}
	s.refresh(t, s.store.AllIndices())
	for _, tc := range []struct {
		index, kb string
		want      int
	}{{small, "kb1", 0}, {small, "kb2", 0}, {large, "kb3", 3}, {large, "kb4", 3}} {
		if n := s.countKB(t, tc.index, tc.kb); n != tc.want {
			t.Errorf("%s in %s: %d chunks, want %d", tc.kb, tc.index, n, tc.want)
		}
	}
}

func TestDeleteNeedsTenant(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	for name, del := range map[string]func() error{
		"file without company": func() error { _, err := s.store.DeleteFile(ctx(t), ix, "", "kb1", "f1"); return err },
		"file without kb":      func() error { _, err := s.store.DeleteFile(ctx(t), ix, "acme", "", "f1"); return err },
		"file without id":      func() error { _, err := s.store.DeleteFile(ctx(t), ix, "acme", "kb1", ""); return err },
		"kb without company":   func() error { _, err := s.store.DeleteKB(ctx(t), ix, "", "kb1"); return err },
		"kb without id":        func() error { _, err := s.store.DeleteKB(ctx(t), ix, "acme", ""); return err },
		"everywhere no file":   func() error { _, err := s.store.DeleteFileEverywhere(ctx(t), "acme", ""); return err },
	} {
		s.count.take()
		if del() == nil {
			t.Errorf("%s: accepted", name)
		}
		if got := s.count.take(); len(got) != 0 {
			t.Errorf("%s: sent %v", name, got)
		}
	}
}
