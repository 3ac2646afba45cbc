package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// What the pruned search keeps of its lists (textLists) follows the
// index: between updates every query runs pruned twice (the second time
// with the field sums kept) and ranks as the exhaustive search does, to
// the bit.
func TestPrunedListCacheFollowsUpdates(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ix := New(Config{Shards: 2})
	ix.pruneFrom, ix.pruneStats = 0, &pruneStats{}
	var names []string
	for i := range 600 {
		d := randomDoc(r, fmt.Sprintf("%s_%d", poolNames[i%len(poolNames)], i))
		ix.Upsert(d)
		names = append(names, d.Name)
	}
	queries := append(slices.Clone(invariantQueries), randomQueries(r, 30)...)
	opts := []Options{{}, {Max: MaxResults}, {Max: 1}}
	kept := 0
	for round := range 8 {
		for pass := range 2 {
			for _, q := range queries {
				for _, opt := range opts {
					ix.exhaustive = false
					got, gerr := ix.Search(q, opt)
					ix.exhaustive = true
					want, werr := ix.Search(q, opt)
					ix.exhaustive = false
					if (gerr == nil) != (werr == nil) || !slices.Equal(got.Hits, want.Hits) {
						t.Fatalf("round %d pass %d: Search(%q, Max %d) pruned %+v (%v), exhaustive %+v (%v)",
							round, pass, q, opt.Max, got.Hits, gerr, want.Hits, werr)
					}
				}
			}
		}
		for _, sh := range ix.shards {
			if xs := sh.xs.Load(); xs != nil {
				for i := range xs.l {
					if e := xs.l[i].Load(); e != nil && e.epoch == ix.epoch && e.sat != nil {
						kept++
					}
				}
			}
		}
		// Replace, remove and add documents: every update changes the
		// statistics the cache was computed from.
		for range 40 {
			i := r.IntN(len(names))
			switch r.IntN(3) {
			case 0:
				ix.Remove(names[i])
			default:
				ix.Upsert(randomDoc(r, names[i]))
			}
		}
	}
	if kept == 0 {
		t.Error("no list kept its field sums")
	}
	if ix.pruneStats.pruned.Load() == 0 {
		t.Error("no search ran pruned")
	}
}
