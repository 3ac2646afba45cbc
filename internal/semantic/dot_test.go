package semantic

import (
	"math/rand/v2"
	"testing"
)

// TestDots checks dots (SIMD where the CPU has it) against plain Go, for
// dimensions that the kernel takes (multiples of 32) and others.
func TestDots(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ dim, n int }{{32, 1}, {64, 7}, {256, 100}, {384, 33}, {512, 5}, {30, 4}, {1, 3}} {
		q := make([]int16, tc.dim)
		v := make([]int8, tc.dim*tc.n)
		for i := range q {
			q[i] = int16(r.IntN(255) - 127)
		}
		for i := range v {
			v[i] = int8(r.IntN(256) - 128)
		}
		got, want := make([]int32, tc.n), make([]int32, tc.n)
		dots(q, v, tc.dim, got)
		for i := range want {
			for j := range tc.dim {
				want[i] += int32(q[j]) * int32(v[i*tc.dim+j])
			}
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("dim %d: dot %d = %d, want %d", tc.dim, i, got[i], want[i])
			}
		}
	}
}
