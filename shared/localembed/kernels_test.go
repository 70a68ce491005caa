package localembed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveLinear is the definition the kernels must agree with, in float64.
func naiveLinear(x []float32, n int, w, b []float32, in, out int, y []float32, add, relu bool) {
	for i := 0; i < n; i++ {
		for j := 0; j < out; j++ {
			s := float64(b[j])
			for k := 0; k < in; k++ {
				s += float64(x[i*in+k]) * float64(w[k*out+j])
			}
			if relu && s < 0 {
				s = 0
			}
			if add {
				y[i*out+j] += float32(s)
			} else {
				y[i*out+j] = float32(s)
			}
		}
	}
}

func randomFloats(r *rand.Rand, n int, zeros float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		if r.Float64() >= zeros {
			v[i] = float32(r.NormFloat64())
		}
	}
	return v
}

// TestKernelsAgree checks every kernel against the naive product, for row counts around the
// tile sizes, with and without slack behind the input (the SIMD kernel then copies the tail).
func TestKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const in, out = 96, 64
	w := randomFloats(r, in*out, 0)
	b := randomFloats(r, out, 0)
	layers := map[string]linear{"purego": newLinear(w, b, in, out, false)}
	if haveSIMD() {
		layers["simd"] = newLinear(w, b, in, out, true)
	} else {
		t.Log("no AVX2/FMA here (or -tags purego): the SIMD kernel is not tested")
	}
	s := newScratch()
	for _, n := range []int{1, 3, 4, 5, 6, 7, 11, 12, 13} {
		for _, slack := range []int{0, simdRows} {
			for _, mode := range []struct{ add, relu bool }{{false, false}, {true, false}, {false, true}} {
				x := randomFloats(r, (n+slack)*in, 0)
				init := randomFloats(r, n*out, 0)
				want := append([]float32(nil), init...)
				naiveLinear(x, n, w, b, in, out, want, mode.add, mode.relu)
				for name, l := range layers {
					got := append([]float32(nil), init...)
					l.apply(x[:(n+slack)*in], n, got, mode.add, mode.relu, s)
					assertClose(t, name, n, got, want)
				}
			}
		}
		// The sparse kernels (always adding) on a mostly-zero input, as after the ReLU.
		x := randomFloats(r, n*in, 0.9)
		init := randomFloats(r, n*out, 0)
		want := append([]float32(nil), init...)
		naiveLinear(x, n, w, b, in, out, want, true, false)
		sl := newSparseLinear(w, b, in, out)
		for _, simd := range []bool{false, haveSIMD()} {
			got := append([]float32(nil), init...)
			sl.applySparse(x, n, got, simd, s)
			assertClose(t, "sparse", n, got, want)
		}
	}
}

func assertClose(t *testing.T, name string, n int, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s, %d rows: element %d = %v, want %v", name, n, i, got[i], want[i])
		}
	}
}

// TestExpf: the softmax's exponential stays within a few float32 ulps of math.Exp.
func TestExpf(t *testing.T) {
	worst := 0.0
	for x := float32(0); x > -87; x -= 0.000731 {
		want := math.Exp(float64(x))
		got := float64(expf(x))
		if rel := math.Abs(got-want) / want; rel > worst {
			worst = rel
		}
	}
	if worst > 3e-7 {
		t.Errorf("expf relative error up to %.3g, want ≤ 3e-7", worst)
	}
	if expf(-100) != 0 || expf(0) != 1 {
		t.Errorf("expf(-100) = %v, expf(0) = %v; want 0 and 1", expf(-100), expf(0))
	}
	t.Logf("largest relative error %.3g", worst)
}
