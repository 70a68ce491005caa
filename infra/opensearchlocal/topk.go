package opensearchlocal

import (
	"container/heap"
	"sort"
)

// better is the order of hits in an answer: higher score first, then the earlier index of the
// request, then Lucene's doc order. It is total, so a bounded selection keeps exactly what a
// full sort would put first.
func better(a, b scoredHit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.ixPos != b.ixPos {
		return a.ixPos < b.ixPos
	}
	return a.d.order < b.d.order
}

// sortHits puts hits in answer order.
func sortHits(hits []scoredHit) {
	sort.Slice(hits, func(i, j int) bool { return better(hits[i], hits[j]) })
}

// topK keeps the k best hits offered (all of them when k < 0) in O(log k) per offer, instead of
// collecting every match and sorting it: the scan of a large index stays linear.
type topK struct {
	k    int
	hits worstFirst
}

func newTopK(k int) *topK { return &topK{k: k} }

// offer considers one hit.
func (t *topK) offer(h scoredHit) {
	switch {
	case t.k < 0:
		t.hits = append(t.hits, h)
	case t.k == 0:
	case len(t.hits) < t.k:
		heap.Push(&t.hits, h)
	case better(h, t.hits[0]):
		t.hits[0] = h
		heap.Fix(&t.hits, 0)
	}
}

// result returns the kept hits: in answer order, or in the order offered when every hit was
// kept (delete-by-query deletes in doc order). The topK is spent.
func (t *topK) result() []scoredHit {
	out := []scoredHit(t.hits)
	if t.k >= 0 {
		sortHits(out)
	}
	t.hits = nil
	return out
}

// worstFirst is a heap whose root is the worst kept hit.
type worstFirst []scoredHit

func (w worstFirst) Len() int           { return len(w) }
func (w worstFirst) Less(i, j int) bool { return better(w[j], w[i]) }
func (w worstFirst) Swap(i, j int)      { w[i], w[j] = w[j], w[i] }
func (w *worstFirst) Push(x any)        { *w = append(*w, x.(scoredHit)) }
func (w *worstFirst) Pop() any {
	old := *w
	h := old[len(old)-1]
	*w = old[:len(old)-1]
	return h
}
