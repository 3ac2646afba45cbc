package semantic

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomStore fills a store with n random unit vectors of dim dimensions,
// bypassing the embedder.
func randomStore(b *testing.B, n, dim int) (*Store, Query) {
	b.Helper()
	s := NewStore(StoreConfig{})
	r := rand.New(rand.NewPCG(1, 2))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	const batch = 1000
	for i := 0; i < n; i += batch {
		var names, texts []string
		var vecs [][]float32
		for j := i; j < min(i+batch, n); j++ {
			name := fmt.Sprint("tool_", j)
			names, texts, vecs = append(names, name), append(texts, name), append(vecs, vec())
			s.pending[name] = name
		}
		if err := s.store(names, texts, vecs); err != nil {
			b.Fatal(err)
		}
	}
	v := make([]int8, dim)
	quantize(v, vec())
	return s, newQuery(v)
}

// BenchmarkNearest is the dense half of a fused search: the 100 nearest of
// every tool's vector (384 dimensions, as all-MiniLM-L6-v2 and
// bge-small-en give).
func BenchmarkNearest(b *testing.B) {
	for _, c := range []struct{ n, dim int }{{1000, 384}, {10000, 384}, {100000, 384}, {10000, 256}, {100000, 256}, {10000, 512}} {
		n, dim := c.n, c.dim
		b.Run(fmt.Sprintf("tools=%d/dim=%d", n, dim), func(b *testing.B) {
			s, q := randomStore(b, n, dim)
			b.ReportAllocs()
			for b.Loop() {
				if hits := s.Nearest(q, 100, nil); len(hits) != 100 {
					b.Fatalf("%d hits", len(hits))
				}
			}
		})
	}
}
