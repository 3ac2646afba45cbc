package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkShards verifies the posting lists against the documents: every list
// sorted by slot, its dead count exact and at most half of it, every live
// document's terms and words listed once with their counts, and the
// vocabularies' frequencies equal to the live documents having each entry.
func checkShards(t *testing.T, ix *Index) {
	t.Helper()
	df := make(map[uint32]int32)
	kdf := make(map[uint32]int32)
	for si, sh := range ix.shards {
		live := 0
		for slot, d := range sh.docs {
			if (d == nil) != sh.isDead(uint32(slot)) {
				t.Fatalf("shard %d slot %d: doc %v, dead bit %v", si, slot, d != nil, sh.isDead(uint32(slot)))
			}
			if d == nil {
				continue
			}
			live++
			if int(d.slot) != slot || int(d.shard) != si {
				t.Fatalf("%s: slot %d shard %d, found at %d/%d", d.name, d.slot, d.shard, slot, si)
			}
			words, terms := ix.readers(d)
			prev := -1
			for id, tf, ok := terms.next(); ok; id, tf, ok = terms.next() {
				df[id]++
				if !terms.withTF && int(id) <= prev {
					t.Fatalf("%s: terms not sorted by id", d.name)
				}
				prev = int(id)
				l := ix.tfl.get(id, sh.idx)
				i, found := slices.BinarySearchFunc(l, uint32(slot), func(p tfPost, s uint32) int { return int(p.slot) - int(s) })
				if !found || terms.withTF && l[i].tf != tf {
					t.Fatalf("%s: term %q posting missing or wrong", d.name, ix.tf.strs[id])
				}
			}
			prev = -1
			for id, mask, ok := words.next(); ok; id, mask, ok = words.next() {
				kdf[id]++
				if int(id) <= prev {
					t.Fatalf("%s: words not sorted by id", d.name)
				}
				prev = int(id)
				l := ix.kwl.get(id, sh.idx)
				i, found := slices.BinarySearchFunc(l, uint32(slot), func(p kwPost, s uint32) int { return int(p.docSlot()) - int(s) })
				if !found || l[i].mask() != mask || (l[i].low()&fieldMCP != 0) != d.mcp {
					t.Fatalf("%s: word %q posting missing or wrong", d.name, ix.kw.strs[id])
				}
			}
		}
		if sh.nDead != len(sh.docs)-live {
			t.Fatalf("shard %d: nDead %d, want %d", si, sh.nDead, len(sh.docs)-live)
		}
		if sh.nDead > live+renumberSlack {
			t.Fatalf("shard %d: %d dead slots, %d live: not renumbered", si, sh.nDead, live)
		}
		checkLists(t, sh, ix.tfl)
		checkLists(t, sh, ix.kwl)
	}
	checkListShards(t, ix.tfl, ix.tf.df, len(ix.shards))
	checkListShards(t, ix.kwl, ix.kw.df, len(ix.shards))
	for id, n := range df {
		if ix.tf.df[id] != n {
			t.Fatalf("term %q: df %d, want %d", ix.tf.strs[id], ix.tf.df[id], n)
		}
	}
	for id, n := range kdf {
		if ix.kw.df[id] != n {
			t.Fatalf("word %q: df %d, want %d", ix.kw.strs[id], ix.kw.df[id], n)
		}
	}
	for id, n := range ix.tf.df {
		if n != df[uint32(id)] {
			t.Fatalf("term id %d: df %d, want %d", id, n, df[uint32(id)])
		}
	}
}

func checkLists[P posting[P]](t *testing.T, sh *shard, lists lists[P]) {
	t.Helper()
	for id := range lists {
		l := lists.get(uint32(id), sh.idx)
		i, ok := find(lists[id], sh.idx)
		if !ok {
			continue
		}
		n := int32(0)
		for i, p := range l {
			if i > 0 && l[i-1].docSlot() >= p.docSlot() {
				t.Fatalf("list %d: not sorted by slot", id)
			}
			if sh.isDead(p.docSlot()) {
				n++
			}
		}
		if dead := lists[id][i].dead; n != dead || 2*int(n) > len(l) {
			t.Fatalf("list %d: %d dead of %d, counted %d", id, n, len(l), dead)
		}
	}
}

// checkListShards verifies that the shard lists of every id are ordered
// by shard, none empty, and that an id no document has has none.
func checkListShards[P posting[P]](t *testing.T, lists lists[P], df []int32, shards int) {
	t.Helper()
	if len(lists) > len(df) {
		t.Fatalf("%d ids with lists, vocabulary of %d", len(lists), len(df))
	}
	for id, ls := range lists {
		if df[id] == 0 && ls != nil {
			t.Fatalf("id %d: no document, %d shard lists", id, len(ls))
		}
		for i, l := range ls {
			if len(l.list()) == 0 || int(l.shard) >= shards || i > 0 && ls[i-1].shard >= l.shard {
				t.Fatalf("id %d: shard lists %d: shard %d, %d postings", id, i, l.shard, len(l.list()))
			}
		}
	}
}

func TestTombstonesCompactAndRenumber(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ix := New(Config{Shards: 2})
	live := make(map[string]Doc)
	name := func(i int) string { return fmt.Sprintf("%s_%d", poolNames[i%len(poolNames)], i) }
	for i := range 400 {
		d := randomDoc(r, name(i))
		d.Core = false
		ix.Upsert(d)
		live[d.Name] = d
	}
	checkShards(t, ix)
	for round := range 5 {
		for i := range 400 {
			switch {
			case r.IntN(4) == 0:
				ix.Remove(name(i))
				delete(live, name(i))
			default:
				d := randomDoc(r, name(i))
				d.Core = r.IntN(10) == 0
				ix.Upsert(d)
				live[d.Name] = d
			}
		}
		checkShards(t, ix)
		checkSameAsFresh(t, fmt.Sprintf("round %d", round), ix, freshIndex(r, live), live)
	}
	// Remove almost everything: the shards shrink.
	for i := range 400 {
		if i%50 != 0 {
			ix.Remove(name(i))
			delete(live, name(i))
		}
	}
	checkShards(t, ix)
	for _, sh := range ix.shards {
		if len(sh.docs) > 2*len(live)+renumberSlack+1 {
			t.Errorf("shard holds %d slots for %d live documents", len(sh.docs), len(live))
		}
	}
	checkSameAsFresh(t, "after removals", ix, freshIndex(r, live), live)
}
