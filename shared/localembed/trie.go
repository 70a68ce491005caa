package localembed

import "slices"

// denseEdges is the number of children from which a node's edges are a table by byte rather
// than a list searched in turn (the root, "▁" and a few more).
const denseEdges = 16

// trie holds the vocabulary's pieces by their UTF-8 bytes, so that the tokenizer finds every
// piece that starts at a position in one walk, with no string built or hashed. Node 0 is the
// root, which is no node's child: next returns 0 for "no such child".
type trie struct {
	id    []int32 // node → the id of the piece that ends there, or -1
	first []int32 // node → its edges are label[first[node]:first[node+1]], by ascending byte
	label []byte
	child []int32
	dense []int32 // node → its row of table, or -1
	table [][256]int32
}

// newTrie builds the trie of pieces (piece → id).
func newTrie(pieces map[string]int32) *trie {
	kids := []map[byte]int32{{}}
	ids := []int32{-1}
	for p, id := range pieces {
		n := int32(0)
		for i := 0; i < len(p); i++ {
			c, ok := kids[n][p[i]]
			if !ok {
				c = int32(len(kids))
				kids, ids = append(kids, map[byte]int32{}), append(ids, -1)
				kids[n][p[i]] = c
			}
			n = c
		}
		ids[n] = id
	}
	t := &trie{id: ids, first: make([]int32, len(kids)+1), dense: make([]int32, len(kids))}
	for n, k := range kids {
		t.first[n] = int32(len(t.label))
		t.dense[n] = -1
		labels := make([]byte, 0, len(k))
		for b := range k {
			labels = append(labels, b)
		}
		slices.Sort(labels)
		for _, b := range labels {
			t.label, t.child = append(t.label, b), append(t.child, k[b])
		}
		if len(k) >= denseEdges {
			var row [256]int32
			for b, c := range k {
				row[b] = c
			}
			t.dense[n] = int32(len(t.table))
			t.table = append(t.table, row)
		}
	}
	t.first[len(kids)] = int32(len(t.label))
	return t
}

// next is the child of node n by byte b, or 0 when there is none.
func (t *trie) next(n int32, b byte) int32 {
	if d := t.dense[n]; d >= 0 {
		return t.table[d][b]
	}
	for e, end := t.first[n], t.first[n+1]; e < end; e++ {
		if l := t.label[e]; l >= b {
			if l == b {
				return t.child[e]
			}
			return 0
		}
	}
	return 0
}

// lookup is the id of piece s, if the vocabulary holds it.
func (t *trie) lookup(s string) (int32, bool) {
	n := int32(0)
	for i := 0; i < len(s); i++ {
		if n = t.next(n, s[i]); n == 0 {
			return 0, false
		}
	}
	if t.id[n] < 0 {
		return 0, false
	}
	return t.id[n], true
}
