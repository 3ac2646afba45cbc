package semantic

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// dotsInt8 is in dot_amd64.s.
//
//go:noescape
func dotsInt8(q *int16, v *int8, dim int, n int, out *int32)

// dots sets out[i] to the dot product of q and the i-th vector of vecs
// (dim each), with AVX2 when dim is a multiple of 32.
func dots(q []int16, vecs []int8, dim int, out []int32) {
	if hasAVX2 && dim%32 == 0 && dim > 0 && len(out) > 0 {
		_ = vecs[len(out)*dim-1]
		_ = q[dim-1]
		dotsInt8(&q[0], &vecs[0], dim, len(out), &out[0])
		return
	}
	dotsGo(q, vecs, dim, out)
}
