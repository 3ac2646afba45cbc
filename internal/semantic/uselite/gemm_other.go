//go:build !amd64

package uselite

// halfWeights is false: no kernels here (a variable, as on amd64, for the
// tests).
var halfWeights = false

var halfStrip = 16

func matmul(dst, x []float32, w *matrix, n int, pad []float32) {
	matmulGo(dst, x, w.w, w.b, n, w.in, w.out)
}

func dots(dst, q, k []float32, ldk int) { dotsGo(dst, q, k, ldk) }

func mix(o, p, v []float32, ldv int) { mixGo(o, p, v, ldv) }
