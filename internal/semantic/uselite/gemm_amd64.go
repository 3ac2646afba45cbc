package uselite

import "golang.org/x/sys/cpu"

// halfWeights is whether the AVX2/FMA kernels run (every x86-64 CPU since
// 2013): the products' (their weights stay fp16 in memory, widened by
// F16C: half the bytes read per product) and attention's (dots, mix).
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
// dst (row stride ldd) from 4 rows of x (stride ldx), one packed fp16
// strip of w (row stride ldw, the strip's width) over k, and the strip's
// 16 biases b.
//
//go:noescape
func gemm4x16h(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, k int, b *float32)

// gemm4x32h is gemm4x16h for 32 columns, with AVX-512.
//
//go:noescape
func gemm4x32h(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, k int, b *float32)

// gemm8x32h is gemm4x32h for 8 rows (16 accumulators).
//
//go:noescape
func gemm8x32h(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, k int, b *float32)

// gemm9x32h is gemm8x32h for 9 rows.
//
//go:noescape
func gemm9x32h(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, k int, b *float32)

// gemm2x32h is gemm4x32h for 2 rows.
//
//go:noescape
func gemm2x32h(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, k int, b *float32)

// gemm1x32h is gemm4x32h for one row.
//
//go:noescape
func gemm1x32h(dst *float32, x *float32, w *uint16, ldw int, k int, b *float32)

// matmul sets dst (n×out) to x (n×in) · w + b, w packed in strips (see
// pack): for each strip (kept in cache), every block of rows. With AVX-512
// the blocks are of 8 rows (a last one of 9: 33 tokens are 3·8+9), then 4,
// 2 and 1 for the rest, the kernels prefetching the next strip; with AVX2
// they are of 4, a last block of fewer rows going through pad (4·in + 4·32
// floats).
func matmul(dst, x []float32, w *matrix, n int, pad []float32) {
	in, out := w.in, w.out
	if w.h == nil || in == 0 || n == 0 {
		matmulGo(dst, x, w.w, w.b, n, in, out)
		return
	}
	b := w.b
	if b == nil {
		b = zeros[:out]
	}
	if halfStrip == 32 {
		matmul32(dst, x, w, b, n)
		return
	}
	full := n &^ 3
	rest := n - full
	width := halfStrip
	var px, pd []float32
	if rest > 0 {
		px, pd = pad[:4*in], pad[4*in:4*in+4*width]
		clear(px)
		copy(px, x[full*in:n*in])
	}
	for s := 0; s < out/width; s++ {
		ws := w.h[s*in*width : (s+1)*in*width]
		for r := 0; r < full; r += 4 {
			gemm4x16h(&dst[r*out+s*width], out, &x[r*in], in, &ws[0], width, in, &b[s*width])
		}
		if rest > 0 {
			gemm4x16h(&pd[0], width, &px[0], in, &ws[0], width, in, &b[s*width])
			for r := range rest {
				copy(dst[(full+r)*out+s*width:(full+r)*out+(s+1)*width], pd[r*width:(r+1)*width])
			}
		}
	}
}

// matmul32 is matmul with the AVX-512 kernels, w in strips of 32.
func matmul32(dst, x []float32, w *matrix, b []float32, n int) {
	in, out := w.in, w.out
	_, _, _ = dst[n*out-1], x[n*in-1], b[out-1]
	for s := 0; s < out/32; s++ {
		ws := &w.h[s*in*32]
		c := s * 32
		r := 0
		for ; r+8 <= n; r += 8 {
			if n-r == 9 {
				gemm9x32h(&dst[r*out+c], out, &x[r*in], in, ws, 32, in, &b[c])
				r++
				continue
			}
			gemm8x32h(&dst[r*out+c], out, &x[r*in], in, ws, 32, in, &b[c])
		}
		if r+4 <= n {
			gemm4x32h(&dst[r*out+c], out, &x[r*in], in, ws, 32, in, &b[c])
			r += 4
		}
		if r+2 <= n {
			gemm2x32h(&dst[r*out+c], out, &x[r*in], in, ws, 32, in, &b[c])
			r += 2
		}
		if r < n {
			gemm1x32h(&dst[r*out+c], &x[r*in], ws, 32, in, &b[c])
		}
	}
}

// dotsAVX2 is dotsGo with AVX2 (len(q) a multiple of 32), in gemm_amd64.s.
//
//go:noescape
func dotsAVX2(dst *float32, q *float32, k *float32, ldk int, d int, n int)

// mixAVX2 is mixGo with AVX2 (len(o) a multiple of 64), in gemm_amd64.s.
//
//go:noescape
func mixAVX2(o *float32, p *float32, v *float32, ldv int, d int, n int)

// dots sets dst[u] to q · k[u·ldk:], for u < len(dst).
func dots(dst, q, k []float32, ldk int) {
	n, d := len(dst), len(q)
	if !halfWeights || d%32 != 0 || n == 0 {
		dotsGo(dst, q, k, ldk)
		return
	}
	_ = k[(n-1)*ldk+d-1]
	dotsAVX2(&dst[0], &q[0], &k[0], ldk, d, n)
}

// mix sets o to Σ_u p[u]·v[u·ldv:], for u < len(p).
func mix(o, p, v []float32, ldv int) {
	n, d := len(p), len(o)
	if !halfWeights || d%64 != 0 || n == 0 {
		mixGo(o, p, v, ldv)
		return
	}
	_ = v[(n-1)*ldv+d-1]
	mixAVX2(&o[0], &p[0], &v[0], ldv, d, n)
}
