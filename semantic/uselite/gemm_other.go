//go:build !amd64

package uselite

func matmul(dst, x, p []float32, n, in, out int, pad []float32) {
	matmulGo(dst, x, p, n, in, out)
}
