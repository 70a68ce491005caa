package localembed

import "math"

// linear is a dense layer y = x·W + b. Its weights are laid out for the kernel that runs it:
//   - wp, for the SIMD kernel: panels of simdCols output columns, [out/simdCols][in][simdCols];
//   - wt, for the pure-Go kernel: transposed, [out][in], so that each output is a dot product
//     of two contiguous rows;
//   - wk, for a layer whose input is mostly zeros (after a ReLU): as stored, [in][out], so that
//     each non-zero input adds one contiguous weight row.
type linear struct {
	in, out int
	b       []float32
	wp      []float32
	wt      []float32
	wk      []float32
}

// simdCols is the width of an output tile of the SIMD kernel (two 8-float AVX registers), and
// simdRows its height.
const (
	simdCols = 16
	simdRows = 6
)

// newLinear lays out w, given as [in][out] row-major like the TF.js weights, for the SIMD kernel
// when simd is set and for the pure-Go one otherwise. Missing weights (already reported by the
// weightSet) give an empty layer.
func newLinear(w []float32, b []float32, in, out int, simd bool) linear {
	if len(w) != in*out || len(b) != out {
		return linear{}
	}
	l := linear{in: in, out: out, b: b}
	if simd && out%simdCols == 0 {
		l.wp = make([]float32, in*out)
		for p := 0; p < out/simdCols; p++ {
			panel := l.wp[p*in*simdCols : (p+1)*in*simdCols]
			for k := 0; k < in; k++ {
				copy(panel[k*simdCols:(k+1)*simdCols], w[k*out+p*simdCols:])
			}
		}
		return l
	}
	l.wt = make([]float32, in*out)
	for k := 0; k < in; k++ {
		for j, v := range w[k*out : k*out+out] {
			l.wt[j*in+k] = v
		}
	}
	return l
}

// newSparseLinear keeps w as stored, for applySparse.
func newSparseLinear(w []float32, b []float32, in, out int) linear {
	if len(w) != in*out || len(b) != out {
		return linear{}
	}
	return linear{in: in, out: out, b: b, wk: w}
}

// scratch is the per-goroutine memory of the kernels.
type scratch struct {
	zeros []float32 // a bias of zeros for products without one
	tail  []float32 // simdRows rows of the widest input, for a last row block without slack behind it
	idx   []int32   // non-zero positions of one input row
	vals  []float32 // and their values
	acc   []float32 // one output row of the sparse kernel
}

func newScratch() *scratch {
	return &scratch{
		zeros: make([]float32, maxTokens),
		tail:  make([]float32, simdRows*ffnDim),
		idx:   make([]int32, ffnDim),
		vals:  make([]float32, ffnDim),
		acc:   make([]float32, hidden),
	}
}

// Modes of the SIMD kernel's epilogue.
const (
	tileSet  = 0 // y = x·W + b
	tileAdd  = 1 // y += x·W + b
	tileReLU = 2 // y = max(x·W + b, 0)
)

// apply computes y[i] = x[i]·W + b for the n rows of x. With add it adds to y instead
// (y[i] += x[i]·W + b, the residual connections); with relu it clamps at zero.
func (l *linear) apply(x []float32, n int, y []float32, add, relu bool, s *scratch) {
	if l.wp == nil {
		l.applyGo(x, n, y, add, relu)
		return
	}
	mode := tileSet
	switch {
	case add && relu:
		panic("localembed: apply with both add and relu")
	case add:
		mode = tileAdd
	case relu:
		mode = tileReLU
	}
	tiles(x, l.in, n, l.in, l.wp, l.out, y, l.out, l.b, mode, s)
}

// tiles computes y = x·W + bias with the SIMD kernel, finishing by mode: x has n rows of k
// floats at stride ldx, W is given as the panels wp (out columns), y has rows at stride ldy.
// Columns go in blocks whose panels stay in the L2 cache while every row block passes.
func tiles(x []float32, ldx, n, k int, wp []float32, out int, y []float32, ldy int, bias []float32, mode int, s *scratch) {
	const panelsPerBlock = 8
	if n == 0 {
		return
	}
	panels := out / simdCols
	_ = wp[panels*k*simdCols-1]
	_ = bias[out-1]
	_ = y[(n-1)*ldy+out-1]
	for pb := 0; pb < panels; pb += panelsPerBlock {
		for i := 0; i < n; i += simdRows {
			rows := min(simdRows, n-i)
			xs, stride := x[i*ldx:], ldx
			if len(xs) < (simdRows-1)*ldx+k {
				// The kernel reads simdRows rows; without slack behind the last ones, copy them.
				for r := 0; r < simdRows; r++ {
					dst := s.tail[r*k : (r+1)*k]
					if r < rows {
						copy(dst, x[(i+r)*ldx:(i+r)*ldx+k])
					} else {
						clear(dst)
					}
				}
				xs, stride = s.tail, k
			}
			for p := pb; p < min(pb+panelsPerBlock, panels); p++ {
				col := p * simdCols
				gemm6x16(&xs[0], uintptr(stride)*4, &wp[p*k*simdCols], k,
					&y[i*ldy+col], uintptr(ldy)*4, &bias[col], rows, mode)
			}
		}
	}
}

// applySparse is apply for a layer whose input rows are mostly zeros (the ReLU of the
// feed-forward block leaves about 90% of them): it always adds (y[i] += x[i]·W + b) and skips
// the zeros, which is exact.
func (l *linear) applySparse(x []float32, n int, y []float32, simd bool, s *scratch) {
	k, m := l.in, l.out
	for i := 0; i < n; i++ {
		nnz := 0
		for j, v := range x[i*k : (i+1)*k] {
			if v != 0 {
				s.idx[nnz] = int32(j)
				s.vals[nnz] = v
				nnz++
			}
		}
		acc := s.acc[:m]
		if simd && m%sparseCols == 0 && nnz > 0 {
			for c := 0; c < m; c += sparseCols {
				sparse64(&acc[c], &l.wk[c], uintptr(m)*4, &s.idx[0], &s.vals[0], nnz)
			}
		} else {
			sparseRowGo(acc, l.wk, m, s.idx[:nnz], s.vals[:nnz])
		}
		row := y[i*m : (i+1)*m]
		for c, v := range acc {
			row[c] += v + l.b[c]
		}
	}
}

// sparseCols is the number of output columns the SIMD sparse kernel handles per call.
const sparseCols = 64

// sparseRowGo sets acc[c] = Σ_t vals[t]·wk[idx[t]·m + c], eight columns at a time so that the
// sums stay in registers.
func sparseRowGo(acc, wk []float32, m int, idx []int32, vals []float32) {
	vals = vals[:len(idx)]
	c := 0
	for ; c+8 <= m; c += 8 {
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for t, k := range idx {
			a := vals[t]
			w := wk[int(k)*m+c : int(k)*m+c+8]
			s0 += a * w[0]
			s1 += a * w[1]
			s2 += a * w[2]
			s3 += a * w[3]
			s4 += a * w[4]
			s5 += a * w[5]
			s6 += a * w[6]
			s7 += a * w[7]
		}
		acc[c], acc[c+1], acc[c+2], acc[c+3] = s0, s1, s2, s3
		acc[c+4], acc[c+5], acc[c+6], acc[c+7] = s4, s5, s6, s7
	}
	for ; c < m; c++ {
		var s0 float32
		for t, k := range idx {
			s0 += vals[t] * wk[int(k)*m+c]
		}
		acc[c] = s0
	}
}

// How the pure-Go product walks memory: columns in blocks whose weights stay in the L2 cache,
// rows three at a time so that each weight loaded serves three outputs. (Three rows by two
// columns is the largest tile whose sums and operands the compiler keeps in the amd64
// registers; four by two spills and runs a third slower.)
const (
	colBlock = 64
	rowTile  = 3
)

// applyGo is apply with the pure-Go kernel.
func (l *linear) applyGo(x []float32, n int, y []float32, add, relu bool) {
	k, m := l.in, l.out
	x = x[:n*k]
	y = y[:n*m]
	for j0 := 0; j0 < m; j0 += colBlock {
		j1 := min(j0+colBlock, m)
		i := 0
		for ; i+rowTile <= n; i += rowTile {
			x0 := x[i*k : i*k+k]
			x1 := x[(i+1)*k : (i+1)*k+k]
			x2 := x[(i+2)*k : (i+2)*k+k]
			j := j0
			for ; j+2 <= j1; j += 2 {
				s00, s01, s10, s11, s20, s21 := dot3x2(x0, x1, x2, l.wt[j*k:j*k+k], l.wt[(j+1)*k:(j+1)*k+k])
				l.store(y, i, j, m, s00, s10, s20, add, relu)
				l.store(y, i, j+1, m, s01, s11, s21, add, relu)
			}
			for ; j < j1; j++ {
				w := l.wt[j*k : j*k+k]
				l.store(y, i, j, m, dot(x0, w), dot(x1, w), dot(x2, w), add, relu)
			}
		}
		for ; i < n; i++ {
			xi := x[i*k : i*k+k]
			for j := j0; j < j1; j++ {
				v := dot(xi, l.wt[j*k:j*k+k]) + l.b[j]
				if relu && v < 0 {
					v = 0
				}
				if add {
					y[i*m+j] += v
				} else {
					y[i*m+j] = v
				}
			}
		}
	}
}

// store finishes column j of the three rows from i.
func (l *linear) store(y []float32, i, j, m int, s0, s1, s2 float32, add, relu bool) {
	b := l.b[j]
	s0, s1, s2 = s0+b, s1+b, s2+b
	if relu {
		s0, s1, s2 = max(s0, 0), max(s1, 0), max(s2, 0)
	}
	p := y[i*m+j : (i+2)*m+j+1]
	if add {
		p[0] += s0
		p[m] += s1
		p[2*m] += s2
		return
	}
	p[0], p[m], p[2*m] = s0, s1, s2
}

// dot3x2 returns the six dot products of three x rows with two weight rows, all of one length.
func dot3x2(x0, x1, x2, w0, w1 []float32) (s00, s01, s10, s11, s20, s21 float32) {
	x1 = x1[:len(x0)]
	x2 = x2[:len(x0)]
	w0 = w0[:len(x0)]
	w1 = w1[:len(x0)]
	for k, a0 := range x0 {
		b0, b1 := w0[k], w1[k]
		s00 += a0 * b0
		s01 += a0 * b1
		a1 := x1[k]
		s10 += a1 * b0
		s11 += a1 * b1
		a2 := x2[k]
		s20 += a2 * b0
		s21 += a2 * b1
	}
	return
}

// dot returns a·b over len(a), with four partial sums to shorten the dependency chain.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy adds a·x to y.
func axpy(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// layerNorm normalises each of the n rows of x (width d) into y: scale·(x−mean)/√(var+eps) + bias,
// in the graph's order of operations.
func layerNorm(x []float32, n, d int, scale, bias []float32, eps float32, y []float32) {
	scale = scale[:d]
	bias = bias[:d]
	for i := 0; i < n; i++ {
		xr := x[i*d : i*d+d]
		yr := y[i*d : i*d+d]
		var sum float64
		for _, v := range xr {
			sum += float64(v)
		}
		mean := float32(sum / float64(d))
		var sq float64
		for _, v := range xr {
			c := v - mean
			sq += float64(c * c)
		}
		r := float32(1 / math.Sqrt(float64(float32(sq/float64(d))+eps)))
		for j, v := range xr {
			yr[j] = scale[j]*r*(v-mean) + bias[j]
		}
	}
}
