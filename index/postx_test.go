package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// keptSums returns the number of lists of the current epoch whose field
// sums a shard keeps, and of those the number denser than one posting in
// xDensity slots.
func keptSums(ix *Index) (n, dense int) {
	for _, sh := range ix.shards {
		if xs := sh.xs.Load(); xs != nil {
			for i := range xs.l {
				if e := xs.l[i].Load(); e != nil && e.epoch == ix.epoch && e.sat != nil {
					n++
					if len(e.sat)*xDensity > len(sh.docs) {
						dense++
					}
				}
			}
		}
	}
	return n, dense
}

// The exhaustive search keeps field sums, and answers with them as it
// does without; the pruned search keeps those of sparse lists only.
func TestSumsKeptBelowPruning(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	ix := New(Config{Shards: 2})
	for _, name := range poolNames {
		ix.Upsert(randomDoc(r, name))
	}
	first := map[string]Result{}
	for _, q := range invariantQueries {
		res, err := ix.Search(q, Options{Max: 100})
		if err != nil {
			t.Fatal(err)
		}
		first[q] = res
	}
	if n, dense := keptSums(ix); n == 0 || dense == 0 {
		t.Fatalf("after exhaustive searches %d lists keep their sums, %d of them dense; want both > 0", n, dense)
	}
	for _, q := range invariantQueries { // now from the kept sums
		res, _ := ix.Search(q, Options{Max: 100})
		want := first[q]
		if len(res.Hits) != len(want.Hits) {
			t.Fatalf("%q: %d hits, first %d", q, len(res.Hits), len(want.Hits))
		}
		for i := range res.Hits {
			if res.Hits[i] != want.Hits[i] {
				t.Fatalf("%q: hit %d = %+v, first %+v", q, i, res.Hits[i], want.Hits[i])
			}
		}
	}
	ix.pruneFrom = 0
	ix.Upsert(randomDoc(r, poolNames[0])) // a new epoch
	pruned := 0
	for range 2 { // sums are kept from a list's second read
		for _, q := range invariantQueries {
			ix.mu.RLock()
			p := ix.compile(q, ModeHybrid, DefaultMax, nil, false)
			if ix.prunable(p) {
				pruned++
			}
			ix.putPlan(p)
			ix.mu.RUnlock()
			if _, err := ix.Search(q, Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if pruned == 0 {
		t.Fatal("no query ran pruned")
	}
	if n, dense := keptSums(ix); n == 0 || dense > 0 {
		t.Errorf("after pruned searches %d lists keep their sums, %d of them dense; want some, none dense", n, dense)
	}
}

// Searches that fill a new epoch's table side by side (claiming stale
// arrays, growing the table) answer as an index that keeps nothing does
// (exhaustive, from pruneFrom 0: its sums are never kept), to the bit,
// exhaustive and pruned.
func TestConcurrentSearchesKeepSums(t *testing.T) {
	for _, pruned := range []bool{false, true} {
		r := rand.New(rand.NewPCG(21, 22))
		a, b := New(Config{Shards: 2}), New(Config{Shards: 2})
		b.exhaustive, b.pruneFrom = true, 0
		if pruned {
			a.pruneFrom = 0
		}
		upsert := func(d Doc) { a.Upsert(d); b.Upsert(d) }
		for i := range 400 {
			upsert(randomDoc(r, fmt.Sprintf("%s_%d", poolNames[i%len(poolNames)], i)))
		}
		queries := append(slices.Clone(invariantQueries), randomQueries(r, 20)...)
		for round := range 6 {
			if n, _ := keptSums(b); n > 0 {
				t.Fatalf("the reference index keeps %d lists' sums", n)
			}
			got := make([][]Hit, len(queries))
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := g; i < len(queries); i += 4 {
						res, _ := a.Search(queries[i], Options{Max: 20})
						got[i] = res.Hits
					}
				})
			}
			wg.Wait()
			for i, q := range queries {
				want, _ := b.Search(q, Options{Max: 20})
				if !slices.Equal(got[i], want.Hits) {
					t.Fatalf("pruned %v, round %d: Search(%q) side by side %+v, keeping nothing %+v", pruned, round, q, got[i], want.Hits)
				}
			}
			for range 30 { // a new epoch, lists grown and shrunk
				upsert(randomDoc(r, fmt.Sprintf("%s_%d", poolNames[r.IntN(len(poolNames))], r.IntN(500))))
			}
		}
	}
}
