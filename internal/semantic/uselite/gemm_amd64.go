package uselite

import "golang.org/x/sys/cpu"

// halfWeights is whether the AVX2/FMA kernels run (every x86-64 CPU since
// 2013); their weights stay fp16 in memory, widened by F16C: half the
// bytes read per product.
var halfWeights = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// halfStrip is the strip width of fp16 weights: 32 columns for the
// AVX-512 kernel, else 16.
var halfStrip = func() int {
	if cpu.X86.HasAVX512F {
		return 32
	}
	return 16
}()

// gemm4x16h is the kernel of matmul, in gemm_amd64.s: a 4×16 block of
// dst (row stride ldd) from 4 rows of x (stride ldx) and one packed fp16
// strip of w (row stride ldw, the strip's width) over k.
//
//go:noescape
func gemm4x16h(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, k int)

// gemm4x32h is gemm4x16h for 32 columns, with AVX-512.
//
//go:noescape
func gemm4x32h(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, k int)

// matmul sets dst (n×out) to x (n×in) · w, w packed in strips (see pack):
// for each strip (kept in cache), every block of 4 rows; a last block of
// fewer than 4 rows goes through pad (4·in + 4·32 floats).
func matmul(dst, x []float32, w *matrix, n int, pad []float32) {
	in, out := w.in, w.out
	if w.h == nil || in == 0 || n == 0 {
		matmulGo(dst, x, w.w, n, in, out)
		return
	}
	full := n &^ 3
	rest := n - full
	width, kernel := halfStrip, gemm4x16h
	if width == 32 {
		kernel = gemm4x32h
	}
	var px, pd []float32
	if rest > 0 {
		px, pd = pad[:4*in], pad[4*in:4*in+4*width]
		clear(px)
		copy(px, x[full*in:n*in])
	}
	for s := 0; s < out/width; s++ {
		ws := w.h[s*in*width : (s+1)*in*width]
		for r := 0; r < full; r += 4 {
			kernel(&dst[r*out+s*width], out, &x[r*in], in, &ws[0], width, in)
		}
		if rest > 0 {
			kernel(&pd[0], width, &px[0], in, &ws[0], width, in)
			for r := range rest {
				copy(dst[(full+r)*out+s*width:(full+r)*out+(s+1)*width], pd[r*width:(r+1)*width])
			}
		}
	}
}
