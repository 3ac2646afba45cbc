package index

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The exhaustive search keeps each word's partial name matches in its
// shard's scratch until the index changes (namePartials), and each term
// list's BM25F field sums in its shard for the epoch (postx.go): searches
// made between updates answer after each update as a fresh index does.
func TestPartialMatchesFollowUpdates(t *testing.T) {
	for _, shards := range []int{1, 3} {
		r := rand.New(rand.NewPCG(uint64(shards), 11))
		ix := New(Config{Shards: shards})
		live := map[string]Doc{}
		for step := range 150 {
			name := poolNames[r.IntN(len(poolNames))]
			if r.IntN(4) == 0 {
				ix.Remove(name)
				delete(live, name)
			} else {
				d := randomDoc(r, name)
				ix.Upsert(d)
				live[name] = d
			}
			if step%10 != 9 {
				for _, q := range invariantQueries {
					if _, err := ix.Search(q, Options{}); err != nil {
						t.Fatal(err)
					}
				}
				continue
			}
			checkSameAsFresh(t, fmt.Sprintf("shards=%d step=%d", shards, step), ix, freshIndex(r, live), live)
			if t.Failed() {
				return
			}
		}
	}
}
