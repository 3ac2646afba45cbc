package index

import (
	"math/rand/v2"
	"testing"
)

// kept reports whether any shard keeps BM25F field sums.
func kept(ix *Index) bool {
	for _, sh := range ix.shards {
		if xs := sh.xs.Load(); xs != nil {
			for i := range xs.l {
				if xs.l[i].Load() != nil {
					return true
				}
			}
		}
	}
	return false
}

// The exhaustive search keeps field sums, and answers with them as it
// does without; the pruned search keeps none, and drops those kept.
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
	if !kept(ix) {
		t.Fatal("no field sums kept after exhaustive searches")
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
	pruned := 0
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
	if pruned == 0 {
		t.Fatal("no query ran pruned")
	}
	if kept(ix) {
		t.Error("field sums kept once searches run pruned")
	}
}
