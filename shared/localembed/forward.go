package localembed

import "math"

// layer is one KonaTransformer layer: pre-LayerNorm multi-head self-attention and a pre-LayerNorm
// ReLU feed-forward block, each with a residual connection.
type layer struct {
	dim, heads, headDim int
	qScale              float32 // applied to the queries before the dot products, as the graph does
	ln1Scale, ln1Bias   []float32
	qkv                 linear  // dim → 3·dim
	proj                linear  // dim → hidden
	adjust              *linear // dim → hidden on the residual path when dim ≠ hidden (Layer_0)
	ln2Scale, ln2Bias   []float32
	ffn1, ffn2          linear // hidden → 1536 → hidden
}

// workspace holds every intermediate of one group of sentences, so that a forward pass
// allocates nothing. Each buffer has maxGroupTokens rows plus simdRows of slack, so that the
// SIMD kernel may read whole row blocks past the last token.
type workspace struct {
	x      []float32 // layer-0 input: embedding plus timing signal, [T][embedDim]
	norm   []float32 // layer-norm output, [T][hidden]
	qkv    []float32 // [T][3·hidden]; shares its memory with ffn, which is used only later
	att    []float32 // attention output before its projection, [T][hidden]
	h      []float32 // residual stream, [T][hidden]
	ffn    []float32 // feed-forward hidden layer, [T][ffnDim]
	scores []float32 // attention weights of one sentence and head, [maxTokens+slack][maxTokens]
	keys   []float32 // one head's keys as SIMD panels, [maxTokens/16][headDim][16]
	values []float32 // one head's values as SIMD panels, [headDim/16][maxTokens][16]
	pooled []float32 // per sentence mean of the last layer, [S][hidden]
	*scratch
}

// Sizes of the network, checked against the weights when loading.
const (
	maxTokens      = 128
	embedDim       = 256
	hidden         = 512
	ffnDim         = 1536
	vocabRows      = 8002
	numHeads       = 4
	maxGroupTokens = 256 // tokens per forward pass: large enough to amortise weight loads, small enough for the caches
	maxGroupSents  = 64
)

func newWorkspace() *workspace {
	t := maxGroupTokens + simdRows
	wide := make([]float32, t*max(3*hidden, ffnDim))
	return &workspace{
		x:       make([]float32, t*embedDim),
		norm:    make([]float32, t*hidden),
		qkv:     wide,
		att:     make([]float32, t*hidden),
		h:       make([]float32, t*hidden),
		ffn:     wide,
		scores:  make([]float32, (maxTokens+simdRows)*maxTokens),
		keys:    make([]float32, maxTokens*hidden/numHeads),
		values:  make([]float32, maxTokens*hidden/numHeads),
		pooled:  make([]float32, (maxGroupSents+simdRows)*hidden),
		scratch: newScratch(),
	}
}

// forward embeds a group of tokenized sentences (each at most maxTokens ids, together at most
// maxGroupTokens) into out, one unit vector of hidden floats per sentence.
//
// The graph works on a padded [batch, length] tensor and masks padding with a −1e9 attention
// bias, which contributes exactly zero after the softmax; here the sentences are packed without
// padding and attention runs over each sentence's own tokens, which is the same computation.
//
// The layer-0 input is the token embedding plus (embedding plus timing signal): the graph adds
// the scattered embeddings to the scattered output of AddTimingSignal, which already holds them.
func (m *Model) forward(ws *workspace, sents [][]int, out [][]float32) {
	rows := 0
	for _, ids := range sents {
		for pos, id := range ids {
			e := m.embedding[id*embedDim : id*embedDim+embedDim]
			t := m.timing[pos*embedDim : pos*embedDim+embedDim]
			x := ws.x[rows*embedDim : rows*embedDim+embedDim]
			for c := range x {
				x[c] = e[c] + (e[c] + t[c])
			}
			rows++
		}
	}
	in, inDim := ws.x, embedDim
	for li := range m.layers {
		l := &m.layers[li]
		layerNorm(in, rows, inDim, l.ln1Scale, l.ln1Bias, m.lnEps, ws.norm)
		l.qkv.apply(ws.norm, rows, ws.qkv, false, false, ws.scratch)
		if m.simd {
			m.attentionSIMD(ws, l, sents)
		} else {
			m.attention(ws, l, sents)
		}
		if l.adjust != nil {
			l.adjust.apply(in, rows, ws.h, false, false, ws.scratch)
		}
		l.proj.apply(ws.att, rows, ws.h, true, false, ws.scratch)
		layerNorm(ws.h, rows, hidden, l.ln2Scale, l.ln2Bias, m.lnEps, ws.norm)
		l.ffn1.apply(ws.norm, rows, ws.ffn, false, true, ws.scratch)
		l.ffn2.applySparse(ws.ffn, rows, ws.h, m.simd, ws.scratch)
		in, inDim = ws.h, hidden
	}

	// Mean over each sentence's tokens (an empty sentence pools to zeros, as the graph's
	// division by max(count, 1) does), then dense + tanh and L2 normalisation.
	start := 0
	for s, ids := range sents {
		p := ws.pooled[s*hidden : s*hidden+hidden]
		clear(p)
		for r := start; r < start+len(ids); r++ {
			for c, v := range ws.h[r*hidden : r*hidden+hidden] {
				p[c] += v
			}
		}
		if n := len(ids); n > 0 {
			inv := float32(n)
			for c := range p {
				p[c] /= inv
			}
		}
		start += len(ids)
	}
	m.final.apply(ws.pooled, len(sents), ws.norm, false, false, ws.scratch)
	for s := range sents {
		o := out[s][:hidden]
		var sq float64
		for c, v := range ws.norm[s*hidden : (s+1)*hidden] {
			v = float32(math.Tanh(float64(v)))
			o[c] = v
			sq += float64(v * v)
		}
		r := float32(1 / math.Sqrt(math.Max(sq, float64(m.l2Eps))))
		for c := range o {
			o[c] *= r
		}
	}
}

// attention computes multi-head scaled dot-product attention of each sentence over its own
// tokens, from ws.qkv (queries ‖ keys ‖ values per row) into ws.att.
func (m *Model) attention(ws *workspace, l *layer, sents [][]int) {
	d, dh := l.dim, l.headDim
	stride := 3 * d
	start := 0
	for _, ids := range sents {
		n := len(ids)
		for r := start; r < start+n; r++ {
			q := ws.qkv[r*stride : r*stride+d]
			for c := range q {
				q[c] *= l.qScale
			}
			clear(ws.att[r*d : r*d+d])
		}
		for h := 0; h < l.heads; h++ {
			off := h * dh
			for i := 0; i < n; i++ {
				qi := ws.qkv[(start+i)*stride+off : (start+i)*stride+off+dh]
				sc := ws.scores[:n]
				for j := range sc {
					kj := ws.qkv[(start+j)*stride+d+off : (start+j)*stride+d+off+dh]
					sc[j] = dot(qi, kj)
				}
				softmax(sc)
				oi := ws.att[(start+i)*d+off : (start+i)*d+off+dh]
				for j, p := range sc {
					vj := ws.qkv[(start+j)*stride+2*d+off : (start+j)*stride+2*d+off+dh]
					axpy(p, vj, oi)
				}
			}
		}
		start += n
	}
}

// attentionSIMD is attention with the SIMD kernel: per sentence and head, the keys are packed
// as the panels of a product scores = Q·Kᵀ, the values as those of output = softmax(scores)·V.
func (m *Model) attentionSIMD(ws *workspace, l *layer, sents [][]int) {
	d, dh := l.dim, l.headDim
	stride := 3 * d
	start := 0
	for _, ids := range sents {
		n := len(ids)
		if n == 0 {
			continue
		}
		padded := (n + simdCols - 1) / simdCols * simdCols
		for r := start; r < start+n; r++ {
			q := ws.qkv[r*stride : r*stride+d]
			for c := range q {
				q[c] *= l.qScale
			}
		}
		for h := 0; h < l.heads; h++ {
			off := h * dh
			// Keys: panel p holds keys 16p…16p+15, one row of 16 per feature; missing keys are 0.
			for p := 0; p < padded/simdCols; p++ {
				panel := ws.keys[p*dh*simdCols : (p+1)*dh*simdCols]
				for c := 0; c < simdCols; c++ {
					j := p*simdCols + c
					if j >= n {
						for f := 0; f < dh; f++ {
							panel[f*simdCols+c] = 0
						}
						continue
					}
					kj := ws.qkv[(start+j)*stride+d+off : (start+j)*stride+d+off+dh]
					for f, v := range kj {
						panel[f*simdCols+c] = v
					}
				}
			}
			q := ws.qkv[start*stride+off:]
			tiles(q, stride, n, dh, ws.keys, padded, ws.scores, padded, ws.zeros, tileSet, ws.scratch)
			for i := 0; i < n; i++ {
				softmax(ws.scores[i*padded : i*padded+n])
			}
			// Values: panel p holds features 16p…16p+15 of every key.
			for p := 0; p < dh/simdCols; p++ {
				panel := ws.values[p*n*simdCols : (p+1)*n*simdCols]
				for j := 0; j < n; j++ {
					vj := ws.qkv[(start+j)*stride+2*d+off+p*simdCols:]
					copy(panel[j*simdCols:(j+1)*simdCols], vj[:simdCols])
				}
			}
			tiles(ws.scores, padded, n, n, ws.values, dh, ws.att[start*d+off:], d, ws.zeros, tileSet, ws.scratch)
		}
		start += n
	}
}

// softmax turns row into exp(row − max) / Σ, in place.
func softmax(row []float32) {
	mx := float32(math.Inf(-1))
	for _, v := range row {
		mx = max(mx, v)
	}
	var sum float32
	for j, v := range row {
		e := expf(v - mx)
		row[j] = e
		sum += e
	}
	inv := 1 / sum
	for j := range row {
		row[j] *= inv
	}
}

// expf is e^x for x ≤ 0 in float32, within about one unit in the last place (the Cephes expf
// polynomial): math.Exp in float64 costs several times more, and the softmax calls it for
// every pair of tokens in every head.
func expf(x float32) float32 {
	if x < -87.33 {
		return 0 // e^x is below the smallest normal float32
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	n := float32(int32(x*log2e - 0.5)) // round to nearest for x ≤ 0
	r := x - n*ln2hi - n*ln2lo
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	p = p*r*r + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
