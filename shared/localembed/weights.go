package localembed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// tensor is one entry of the TF.js weights manifest.
type tensor struct {
	shape []int
	f32   []float32
	i32   []int32
}

// graphManifest is the part of model.json the loader reads: where the weights are and what they are.
type graphManifest struct {
	Format          string `json:"format"`
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name         string          `json:"name"`
			Shape        []int           `json:"shape"`
			DType        string          `json:"dtype"`
			Quantization json.RawMessage `json:"quantization"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// readWeights reads model.json in dir and decodes every tensor of its weight shards. Shards are
// concatenated per group in manifest order and tensors lie back to back in them, little endian;
// they are decoded as they stream in, so that loading never holds the raw bytes and the floats
// at once.
func readWeights(dir string) (map[string]tensor, error) {
	b, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, err
	}
	var m graphManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("model.json: %w", err)
	}
	if len(m.WeightsManifest) == 0 {
		return nil, fmt.Errorf("model.json: no weightsManifest")
	}
	out := make(map[string]tensor)
	chunk := make([]byte, 1<<16)
	for _, g := range m.WeightsManifest {
		var files []io.Reader
		for _, p := range g.Paths {
			if p != filepath.Base(p) || strings.HasPrefix(p, ".") {
				return nil, fmt.Errorf("model.json: weight shard path %q is not a plain file name", p)
			}
			f, err := os.Open(filepath.Join(dir, p))
			if err != nil {
				return nil, err
			}
			defer func() { _ = f.Close() }() // opened for reading: nothing to lose
			files = append(files, f)
		}
		r := io.MultiReader(files...)
		for _, w := range g.Weights {
			if len(w.Quantization) > 0 && string(w.Quantization) != "null" {
				return nil, fmt.Errorf("model.json: weight %s is quantized, which is not supported", w.Name)
			}
			n := 1
			for _, d := range w.Shape {
				if d < 0 || d > 1<<28 {
					return nil, fmt.Errorf("model.json: weight %s has shape %v", w.Name, w.Shape)
				}
				n *= d
			}
			if n > 1<<28 {
				return nil, fmt.Errorf("model.json: weight %s has shape %v", w.Name, w.Shape)
			}
			t := tensor{shape: slices.Clone(w.Shape)}
			var put func(i int, bits uint32)
			switch w.DType {
			case "float32":
				t.f32 = make([]float32, n)
				put = func(i int, bits uint32) { t.f32[i] = math.Float32frombits(bits) }
			case "int32":
				t.i32 = make([]int32, n)
				put = func(i int, bits uint32) { t.i32[i] = int32(bits) }
			default:
				return nil, fmt.Errorf("model.json: weight %s has dtype %q, want float32 or int32", w.Name, w.DType)
			}
			for i := 0; i < n; {
				c := chunk[:4*min(n-i, len(chunk)/4)]
				if _, err := io.ReadFull(r, c); err != nil {
					return nil, fmt.Errorf("model.json: weight %s runs past the end of its shards: %w", w.Name, err)
				}
				for j := 0; j < len(c); j += 4 {
					put(i, binary.LittleEndian.Uint32(c[j:]))
					i++
				}
			}
			out[w.Name] = t
		}
		if extra, _ := io.Copy(io.Discard, r); extra != 0 {
			return nil, fmt.Errorf("model.json: shards %v hold %d bytes more than the manifest describes", g.Paths, extra)
		}
	}
	return out, nil
}

// weightSet looks tensors up by the suffix of their graph name and checks shapes, so that a
// model with a different layout fails to load instead of computing nonsense.
type weightSet struct {
	all map[string]tensor
	err error
}

func (ws *weightSet) find(suffix string) (tensor, string) {
	var name string
	var found tensor
	for n, t := range ws.all {
		if n == suffix || strings.HasSuffix(n, "/"+suffix) {
			if name != "" {
				ws.fail(fmt.Errorf("weight %q is ambiguous: %s and %s", suffix, name, n))
				return tensor{}, ""
			}
			name, found = n, t
		}
	}
	if name == "" {
		ws.fail(fmt.Errorf("weight %q is missing", suffix))
	}
	return found, name
}

func (ws *weightSet) fail(err error) {
	if ws.err == nil {
		ws.err = err
	}
}

// floats returns the float32 tensor named by suffix, which must have shape want.
func (ws *weightSet) floats(suffix string, want ...int) []float32 {
	t, name := ws.find(suffix)
	if name == "" {
		return nil
	}
	if t.f32 == nil || !slices.Equal(t.shape, want) {
		ws.fail(fmt.Errorf("weight %s: shape %v, want float32 %v", name, t.shape, want))
		return nil
	}
	return t.f32
}

// scalar returns the single float32 of a scalar constant.
func (ws *weightSet) scalar(suffix string) float32 {
	if v := ws.floats(suffix); len(v) == 1 {
		return v[0]
	}
	return float32(math.NaN())
}

// ints returns the int32 constant named by suffix.
func (ws *weightSet) ints(suffix string) []int32 {
	t, name := ws.find(suffix)
	if name == "" {
		return nil
	}
	if t.i32 == nil {
		ws.fail(fmt.Errorf("weight %s: dtype float32, want int32", name))
	}
	return t.i32
}

// expect records an error unless the constant named by suffix holds want: the forward pass
// hard-codes these values.
func (ws *weightSet) expectInts(suffix string, want ...int32) {
	if got := ws.ints(suffix); got != nil && !slices.Equal(got, want) {
		ws.fail(fmt.Errorf("constant %s = %v, this implementation assumes %v", suffix, got, want))
	}
}

func (ws *weightSet) expectScalar(suffix string, want float32) {
	if got := ws.scalar(suffix); got != want {
		ws.fail(fmt.Errorf("constant %s = %v, this implementation assumes %v", suffix, got, want))
	}
}
