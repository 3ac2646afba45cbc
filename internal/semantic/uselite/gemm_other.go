//go:build !amd64

package uselite

const halfWeights = false

var halfStrip = 16

func matmul(dst, x []float32, w *matrix, n int, pad []float32) {
	matmulGo(dst, x, w.w, n, w.in, w.out)
}
