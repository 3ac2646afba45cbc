package index

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRemoveLeavesNothing checks that what a document does not keep (its
// exact-name keys, name phrases and parts, recomputed from its name and
// aliases on removal) leaves the index with it: after random upserts,
// alias changes, core flips and removals of every document, every map
// and vocabulary is empty.
func TestRemoveLeavesNothing(t *testing.T) {
	for _, cfg := range []Config{{Shards: 2}, {Shards: 3, Scorer: ScorerCosine}} {
		t.Run(cfg.Scorer.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			ix := New(cfg)
			names := make([]string, 0, 300)
			for i := range 300 {
				names = append(names, fmt.Sprintf("%s_%d", poolNames[i%len(poolNames)], i%120))
			}
			for round := range 6 {
				for _, name := range names {
					d := randomDoc(r, name)
					switch r.IntN(4) {
					case 0:
						d.Aliases = []string{"Alias" + name, "find-symbol"}
					case 1:
						d.Aliases = nil
					}
					ix.Upsert(d)
					if r.IntN(5) == 0 {
						ix.Remove(names[r.IntN(len(names))])
					}
				}
				checkShards(t, ix)
				if round%2 == 1 {
					comparePruned(t, fmt.Sprintf("round %d", round), ix, invariantQueries, invariantOptions)
				}
			}
			for _, name := range names {
				ix.Remove(name)
			}
			checkShards(t, ix)
			if len(ix.docs) != 0 || len(ix.core) != 0 || len(ix.keys) != 0 || ix.nDeferred != 0 {
				t.Fatalf("docs %d, core %d, keys %d, deferred %d left", len(ix.docs), len(ix.core), len(ix.keys), ix.nDeferred)
			}
			if len(ix.boost.docs) != 0 || len(ix.boost.first) != 0 || len(ix.coreBoost.docs) != 0 || len(ix.coreBoost.first) != 0 {
				t.Fatalf("phrases left: boost %v, core %v", ix.boost.docs, ix.coreBoost.docs)
			}
			if len(ix.parts.count) != 0 || len(ix.parts.grams) != 0 {
				t.Fatalf("name parts left: %v", ix.parts.count)
			}
			if len(ix.tf.ids) != 0 || len(ix.kw.ids) != 0 {
				t.Fatalf("vocabulary left: %d terms, %d words", len(ix.tf.ids), len(ix.kw.ids))
			}
			for _, f := range ix.flen {
				if f != 0 {
					t.Fatalf("field lengths left: %v", ix.flen)
				}
			}
		})
	}
}
