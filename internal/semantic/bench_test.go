package semantic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// BenchmarkStoreCatchUp is the time a store takes from Run until every
// tool of a catalog has its vector: from the embedder (a first start) or
// from its vector file (a restart), for each embedded model. -benchtime 1x
// for the full model: a cold pass embeds every text.
func BenchmarkStoreCatchUp(b *testing.B) {
	const n = 1000
	texts := make([]string, n)
	words := []string{"read", "write", "file", "send", "email", "weather", "calendar", "forecast", "image", "resize", "search", "issue", "repository", "message", "channel"}
	for i := range texts {
		r := rand.New(rand.NewPCG(uint64(i), 1))
		var t []byte
		for range 40 {
			t = append(append(t, words[r.IntN(len(words))]...), ' ')
		}
		texts[i] = fmt.Sprintf("tool_%d: %s", i, t)
	}
	for _, mode := range []Mode{ModeStatic, ModeFull} {
		emb, err := Local(mode)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), CacheName(mode)+".vec")
		catchUp := func(b *testing.B) {
			s := NewStore(StoreConfig{Embedder: emb, File: path})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx) }()
			for i, t := range texts {
				s.Put(fmt.Sprint("tool_", i), t)
			}
			for s.Stats().Embedded < n {
				time.Sleep(100 * time.Microsecond)
			}
			cancel()
			<-done
		}
		b.Run(string(mode)+"/embed", func(b *testing.B) {
			for b.Loop() {
				os.Remove(path)
				catchUp(b)
			}
		})
		b.Run(string(mode)+"/file", func(b *testing.B) {
			for b.Loop() {
				catchUp(b)
			}
		})
	}
}
