package knowledge

import "github.com/agentorch/agentorch/shared/chunk"

// fitTokens splits every chunk the embedder could not read whole (over MaxTokens) into pieces
// it can, at word boundaries, keeping their order: no part of a chunk goes unembedded. Each
// chunk is tokenized once to be checked; one over the limit is cut into as few near-equal
// pieces as fit (no tiny tail), in time linear in its length.
func fitTokens(emb Embedder, texts []string) []string {
	out, _ := fitCounted(emb, texts, nil)
	return out
}

// fitCounted is fitTokens that also says, when counted is not nil, what each text out holds:
// the index of the chunk in texts it is (or is a piece of) and its tokens (-1 each when the
// embedder has no limit, and nothing was counted), from the tokenization fitTokens does anyway.
func fitCounted(emb Embedder, texts []string, counted *[]fitted) ([]string, *fitter) {
	limit := emb.MaxTokens()
	f := &fitter{emb: emb, limit: limit, cache: map[string]int{}, counted: counted}
	if limit <= 0 {
		for i := range texts {
			f.record(i, -1)
		}
		return texts, f
	}
	var out []string
	for i, t := range texts {
		f.from = i
		n := emb.Tokens(t)
		if n <= limit {
			f.record(i, n)
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(texts)+4), texts[:i]...)
		}
		out = f.pieces(t, n, out)
	}
	if out == nil {
		return texts, f
	}
	return out, f
}

// fitted is what fitCounted says of a text it returns: the chunk it comes from and its tokens.
type fitted struct{ from, tokens int }

// fitter cuts texts over the limit into pieces within it.
type fitter struct {
	emb     Embedder
	limit   int
	cache   map[string]int // Tokens of the units chunk.Words costs, across the chunks cut
	counted *[]fitted      // nil: nothing recorded
	from    int            // the chunk being cut
}

// record notes a text given out, if fitCounted was asked to.
func (f *fitter) record(from, tokens int) {
	if f.counted != nil {
		*f.counted = append(*f.counted, fitted{from: from, tokens: tokens})
	}
}

// pieces appends to out the pieces of text, which has n tokens, more than the limit. Its words
// are costed as chunk.Words costs them (each with the whitespace before it, so that a newline
// the model reads as a token counts), cut into k = ⌈n/limit⌉ groups of near-equal cost, and each
// group is tokenized to be checked: one still over the limit (the costs are estimates) is cut
// again, into at least two. A single word over the limit is cut between characters.
func (f *fitter) pieces(text string, n int, out []string) []string {
	words := chunk.Words(text, f.tokens)
	if len(words) <= 1 {
		if len(words) == 1 {
			text = text[words[0].Start:words[0].End]
		}
		return f.runes(text, n, out)
	}
	costs := make([]int, len(words))
	total := 0
	for i, w := range words {
		costs[i] = w.Cost
		total += w.Cost
	}
	k := max(ceilDiv(n, f.limit), ceilDiv(total, f.limit), 2)
	cuts := balance(costs, total, k)
	for g := 0; g+1 < len(cuts); g++ {
		piece := text[words[cuts[g]].Start:words[cuts[g+1]-1].End]
		if m := f.emb.Tokens(piece); m > f.limit {
			out = f.pieces(piece, m, out)
		} else {
			f.record(f.from, m)
			out = append(out, piece)
		}
	}
	return out
}

// tokens is the embedder's Tokens, remembered: the same words recur across the chunks cut.
func (f *fitter) tokens(unit string) int {
	if c, ok := f.cache[unit]; ok {
		return c
	}
	c := f.emb.Tokens(unit)
	f.cache[unit] = c
	return c
}

// runes appends the pieces of a word of n tokens cut between characters into ⌈n/limit⌉ (at
// least two) parts of equal length, each checked and cut again if still over the limit.
func (f *fitter) runes(word string, n int, out []string) []string {
	var offs []int // byte offset of each rune
	for i := range word {
		offs = append(offs, i)
	}
	if len(offs) <= 1 {
		f.record(f.from, n)
		return append(out, word) // one character over the limit: nothing smaller to embed
	}
	k := min(max(ceilDiv(n, f.limit), 2), len(offs))
	for g := 0; g < k; g++ {
		a, b := offs[len(offs)*g/k], len(word)
		if g+1 < k {
			b = offs[len(offs)*(g+1)/k]
		}
		piece := word[a:b]
		if m := f.emb.Tokens(piece); m > f.limit {
			out = f.runes(piece, m, out)
		} else {
			f.record(f.from, m)
			out = append(out, piece)
		}
	}
	return out
}

// balance cuts costs into k groups of near-equal sum (k at most len(costs)): it returns the
// group boundaries, from 0 to len(costs), each boundary where the running sum comes nearest to
// its share of total.
func balance(costs []int, total, k int) []int {
	m := len(costs)
	k = min(k, m)
	cuts := make([]int, 1, k+1)
	sum, i := 0, 0 // sum of costs[:i]
	for j := 1; j < k; j++ {
		target := float64(total) * float64(j) / float64(k)
		// Advance while the next boundary is at least as near the target, leaving a unit for
		// each group still to come.
		for i < m-(k-j) && (i < cuts[j-1]+1 || abs(float64(sum+costs[i])-target) <= abs(float64(sum)-target)) {
			sum += costs[i]
			i++
		}
		cuts = append(cuts, i)
	}
	return append(cuts, m)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
