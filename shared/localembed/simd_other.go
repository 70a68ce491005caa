//go:build !amd64 || purego

package localembed

// Without the assembly kernels every product runs the pure-Go code; these are never called.

func haveSIMD() bool { return false }

func gemm6x16(x *float32, ldx uintptr, w *float32, k int, y *float32, ldy uintptr, bias *float32, rows int, mode int) {
	panic("localembed: SIMD kernel called without SIMD support")
}

func sparse64(acc *float32, w *float32, ldw uintptr, idx *int32, vals *float32, nnz int) {
	panic("localembed: SIMD kernel called without SIMD support")
}
