package vectors_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/vectors"
)

// positions are the chunk indices of chunks, in the order given.
func positions(chunks []vectors.Chunk) []int {
	out := make([]int, len(chunks))
	for i, c := range chunks {
		out[i] = c.ChunkIndex
	}
	return out
}

// TestChunks: a file's chunks read back a window at a time in document order, with their text
// and no vector, in one request each; only that file of that knowledge base of that company (the
// same file id in another knowledge base, another file, another company's chunks stay out, and
// another company reads none of it); past
// the end and in a missing index, nothing.
func TestChunks(t *testing.T) {
	s := newStand(t)
	ix := s.ensure(t, "m", 4)
	// Put in shuffled batches: the order read back must come from chunk_index, not insertion.
	all := fileChunks("acme", "kb1", "fa", 7, 4)
	s.put(t, ix, []vectors.Chunk{all[5], all[1], all[6]})
	s.put(t, ix, []vectors.Chunk{all[3], all[0], all[4], all[2]})
	s.put(t, ix, fileChunks("acme", "kb1", "fb", 3, 4))
	s.put(t, ix, fileChunks("acme", "kb2", "fa", 3, 4))
	s.put(t, ix, fileChunks("other", "kb3", "fa", 9, 4))
	s.refresh(t, ix)

	for _, tc := range []struct {
		from, limit int
		want        []int
	}{
		{0, 3, []int{0, 1, 2}},
		{3, 3, []int{3, 4, 5}},
		{6, 3, []int{6}},
		{7, 3, []int{}},
		{0, 100, []int{0, 1, 2, 3, 4, 5, 6}},
	} {
		s.count.take()
		got, err := s.store.Chunks(ctx(t), ix, "acme", "kb1", "fa", tc.from, tc.limit)
		if err != nil {
			t.Fatalf("Chunks(%d, %d): %v", tc.from, tc.limit, err)
		}
		if p := positions(got); !cmp.Equal(p, tc.want) {
			t.Errorf("Chunks(%d, %d) at %v; want %v", tc.from, tc.limit, p, tc.want)
		}
		for _, c := range got {
			want := all[c.ChunkIndex]
			want.Vector = nil
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("chunk %d (-want +got):\n%s", c.ChunkIndex, diff)
			}
		}
		if reqs := s.count.take(); !cmp.Equal(reqs, []string{"POST /" + ix + "/_search"}) {
			t.Errorf("Chunks(%d, %d) sent %v; want one search", tc.from, tc.limit, reqs)
		}
	}

	// Asked as another company, the knowledge base has no chunks (chunk ids do not name the
	// company: knowledge-base ids, UUIDs, are never shared, so the other company's are in kb3).
	if got, err := s.store.Chunks(ctx(t), ix, "other", "kb1", "fa", 0, 10); err != nil || len(got) != 0 {
		t.Errorf("kb1's chunks asked as another company = %v, %v; want none", positions(got), err)
	}
	if got, err := s.store.Chunks(ctx(t), "test-kb-missing-v2", "acme", "kb1", "fa", 0, 10); err != nil || len(got) != 0 {
		t.Errorf("Chunks of a missing index = %v, %v; want none, no error", got, err)
	}
	for _, bad := range []struct {
		company, kb, file string
		from, limit       int
	}{
		{"", "kb1", "fa", 0, 1}, {"acme", "", "fa", 0, 1}, {"acme", "kb1", "", 0, 1},
		{"acme", "kb1", "fa", -1, 1}, {"acme", "kb1", "fa", 0, 0}, {"acme", "kb1", "fa", 0, vectors.MaxChunksPage + 1},
	} {
		if _, err := s.store.Chunks(ctx(t), ix, bad.company, bad.kb, bad.file, bad.from, bad.limit); err == nil {
			t.Errorf("Chunks(%s) succeeded", fmt.Sprint(bad))
		}
	}
}
