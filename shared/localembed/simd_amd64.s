//go:build amd64 && !purego

#include "textflag.h"

// Epilogues of gemm6x16 for one row held in (a, b): add the bias (Y12, Y13), then clamp at
// zero (Y14) or add the row already in y, and store 16 floats at DI.
#define STORE_SET(a, b) VADDPS Y12, a, a; VADDPS Y13, b, b; VMOVUPS a, (DI); VMOVUPS b, 32(DI)
#define STORE_ADD(a, b) VADDPS Y12, a, a; VADDPS Y13, b, b; VADDPS (DI), a, a; VADDPS 32(DI), b, b; VMOVUPS a, (DI); VMOVUPS b, 32(DI)
#define STORE_RELU(a, b) VADDPS Y12, a, a; VADDPS Y13, b, b; VMAXPS Y14, a, a; VMAXPS Y14, b, b; VMOVUPS a, (DI); VMOVUPS b, 32(DI)
#define NEXT_ROW DECQ CX; JZ gemmret; ADDQ DX, DI

// func gemm6x16(x *float32, ldx uintptr, w *float32, k int, y *float32, ldy uintptr, bias *float32, rows int, mode int)
//
// Twelve YMM accumulators hold a 6×16 tile; per step of k the two 8-float halves of the panel
// row are loaded once and each of the six x values is broadcast and fused-multiply-added. The
// first rows (1…6) of the tile are then finished and stored by mode.
TEXT ·gemm6x16(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), SI
	MOVQ ldx+8(FP), DX
	MOVQ w+16(FP), BX
	MOVQ k+24(FP), CX
	LEAQ (SI)(DX*1), R8
	LEAQ (SI)(DX*2), R9
	LEAQ (R8)(DX*2), R10
	LEAQ (SI)(DX*4), R11
	LEAQ (R8)(DX*4), R12
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ AX, AX
	TESTQ CX, CX
	JLE gemmstore

gemmloop:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	VBROADCASTSS (SI)(AX*1), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS (R8)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y3
	VBROADCASTSS (R9)(AX*1), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS (R10)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VBROADCASTSS (R11)(AX*1), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS (R12)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y10
	VFMADD231PS Y13, Y15, Y11
	ADDQ $64, BX
	ADDQ $4, AX
	DECQ CX
	JNZ gemmloop

gemmstore:
	MOVQ y+32(FP), DI
	MOVQ ldy+40(FP), DX
	MOVQ bias+48(FP), BX
	MOVQ rows+56(FP), CX
	MOVQ mode+64(FP), R13
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	VXORPS Y14, Y14, Y14
	TESTQ CX, CX
	JLE gemmret
	CMPQ R13, $1
	JEQ gemmadd
	CMPQ R13, $2
	JEQ gemmrelu
	STORE_SET(Y0, Y1)
	NEXT_ROW
	STORE_SET(Y2, Y3)
	NEXT_ROW
	STORE_SET(Y4, Y5)
	NEXT_ROW
	STORE_SET(Y6, Y7)
	NEXT_ROW
	STORE_SET(Y8, Y9)
	NEXT_ROW
	STORE_SET(Y10, Y11)
	JMP gemmret

gemmadd:
	STORE_ADD(Y0, Y1)
	NEXT_ROW
	STORE_ADD(Y2, Y3)
	NEXT_ROW
	STORE_ADD(Y4, Y5)
	NEXT_ROW
	STORE_ADD(Y6, Y7)
	NEXT_ROW
	STORE_ADD(Y8, Y9)
	NEXT_ROW
	STORE_ADD(Y10, Y11)
	JMP gemmret

gemmrelu:
	STORE_RELU(Y0, Y1)
	NEXT_ROW
	STORE_RELU(Y2, Y3)
	NEXT_ROW
	STORE_RELU(Y4, Y5)
	NEXT_ROW
	STORE_RELU(Y6, Y7)
	NEXT_ROW
	STORE_RELU(Y8, Y9)
	NEXT_ROW
	STORE_RELU(Y10, Y11)

gemmret:
	VZEROUPPER
	RET

// func sparse64(acc *float32, w *float32, ldw uintptr, idx *int32, vals *float32, nnz int)
//
// Eight YMM accumulators hold 64 outputs; each non-zero input broadcasts its value and adds
// that multiple of its 64-float weight segment.
TEXT ·sparse64(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), DX
	MOVQ idx+24(FP), R8
	MOVQ vals+32(FP), R9
	MOVQ nnz+40(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JLE sparsedone

sparseloop:
	MOVLQSX (R8), AX
	IMULQ DX, AX
	VBROADCASTSS (R9), Y8
	VFMADD231PS (SI)(AX*1), Y8, Y0
	VFMADD231PS 32(SI)(AX*1), Y8, Y1
	VFMADD231PS 64(SI)(AX*1), Y8, Y2
	VFMADD231PS 96(SI)(AX*1), Y8, Y3
	VFMADD231PS 128(SI)(AX*1), Y8, Y4
	VFMADD231PS 160(SI)(AX*1), Y8, Y5
	VFMADD231PS 192(SI)(AX*1), Y8, Y6
	VFMADD231PS 224(SI)(AX*1), Y8, Y7
	ADDQ $4, R8
	ADDQ $4, R9
	DECQ CX
	JNZ sparseloop

sparsedone:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET
