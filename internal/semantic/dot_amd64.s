#include "textflag.h"

// func dotsInt8(q *int16, v *int8, dim int, n int, out *int32)
// out[i] = Σ_j q[j]·v[i·dim+j] for i < n; dim a multiple of 32, n > 0.
TEXT ·dotsInt8(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ v+8(FP), DI
	MOVQ dim+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), R8

vec:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ  SI, R9
	MOVQ  DX, R10

inner:
	VPMOVSXBW (DI), Y2
	VPMOVSXBW 16(DI), Y3
	VPMADDWD  (R9), Y2, Y2
	VPMADDWD  32(R9), Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $32, DI
	ADDQ      $64, R9
	SUBQ      $32, R10
	JNZ       inner

	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	MOVQ         X0, AX
	MOVL         AX, (R8)
	ADDQ         $4, R8
	DECQ         CX
	JNZ          vec
	VZEROUPPER
	RET
