package opensearchlocal

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTopKKeepsWhatASortPutsFirst offers hits with many tied scores, across indices, and
// compares the bounded selection with a full sort cut at k.
func TestTopKKeepsWhatASortPutsFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var all []scoredHit
	for i := 0; i < 2000; i++ {
		all = append(all, scoredHit{ixPos: r.IntN(3), d: &doc{order: int64(r.IntN(400))}, score: float32(r.IntN(20)) / 4})
	}
	type key struct {
		Pos   int
		Order int64
		Score float32
	}
	keys := func(hs []scoredHit) []key {
		out := make([]key, len(hs))
		for i, h := range hs {
			out[i] = key{h.ixPos, h.d.order, h.score}
		}
		return out
	}
	for _, k := range []int{0, 1, 7, 100, 1999, 2000, 5000} {
		top := newTopK(k)
		for _, h := range all {
			top.offer(h)
		}
		want := append([]scoredHit(nil), all...)
		sortHits(want)
		want = want[:min(k, len(want))]
		if diff := cmp.Diff(keys(want), keys(top.result())); diff != "" {
			t.Errorf("k=%d (-sort +topK):\n%s", k, diff)
		}
	}
	every := newTopK(-1)
	for _, h := range all[:50] {
		every.offer(h)
	}
	if diff := cmp.Diff(keys(all[:50]), keys(every.result())); diff != "" {
		t.Errorf("k<0 keeps every hit in the order offered (-want +got):\n%s", diff)
	}
}
