//go:build !amd64

package semantic

func dots(q []int16, vecs []int8, dim int, out []int32) { dotsGo(q, vecs, dim, out) }
