package index

import (
	"math/rand/v2"
	"testing"
)

// keptSums returns the number of lists of the current epoch whose field
// sums a shard keeps, and of those the number denser than one posting in
// xDensity slots.
func keptSums(ix *Index) (n, dense int) {
	for _, sh := range ix.shards {
		if xs := sh.xs.Load(); xs != nil {
			for i := range xs.l {
				if e := xs.l[i].Load(); e != nil && e.epoch == ix.epoch && e.x != nil {
					n++
					if len(e.x)*xDensity > len(sh.docs) {
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
