//go:build amd64 && !purego

package localembed

// The SIMD kernels are Go assembly (simd_amd64.s) for AVX2 with FMA: they build with the Go
// toolchain alone (no cgo). Build with -tags purego to leave them out.

// gemm6x16 multiplies six rows of x (ldx bytes apart, k floats used) by one 16-column weight
// panel w ([k][16]) and finishes the first rows (1…6) of the tile into y (ldy bytes apart):
// t = Σ_i x[r][i]·w[i][c] + bias[c], then y[r][c] = t (mode tileSet), y[r][c] += t (tileAdd) or
// y[r][c] = max(t, 0) (tileReLU).
//
//go:noescape
func gemm6x16(x *float32, ldx uintptr, w *float32, k int, y *float32, ldy uintptr, bias *float32, rows int, mode int)

// sparse64 sets acc[c] = Σ_{t<nnz} vals[t] · w[idx[t]*ldw/4 + c] for c < 64.
//
//go:noescape
func sparse64(acc *float32, w *float32, ldw uintptr, idx *int32, vals *float32, nnz int)

// cpuid and xgetbv report the processor's features.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// haveSIMD reports whether this processor and OS run the AVX2/FMA kernels.
func haveSIMD() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 { // the OS saves XMM and YMM state
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}
