package index

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestRemoveLeavesNothing checks that what a document does not keep (its
// exact-name keys, name phrases and parts, recomputed from its name and
// aliases on removal) leaves the index with it: after random upserts,
// alias changes, core flips and removals of every document, every map
// and vocabulary is empty.
func TestRemoveLeavesNothing(t *testing.T) {
	for _, cfg := range []Config{{Shards: 2}, {Shards: 3, Scorer: ScorerCosine}, {Shards: 50}} {
		t.Run(fmt.Sprintf("%v/%d", cfg.Scorer, cfg.Shards), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			ix := New(cfg)
			live := map[string]Doc{}
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
					live[name] = d
					if r.IntN(5) == 0 {
						gone := names[r.IntN(len(names))]
						ix.Remove(gone)
						delete(live, gone)
					}
				}
				checkShards(t, ix)
				if round%2 == 1 {
					compareReference(t, fmt.Sprintf("round %d", round), ix, live, invariantQueries, invariantOptions)
				}
			}
			for _, name := range names {
				ix.Remove(name)
			}
			checkShards(t, ix)
			if ix.Len() != 0 || ix.unnamed != nil || len(ix.core) != 0 || ix.keys.len() != 0 || ix.nDeferred != 0 {
				t.Fatalf("docs %d, core %d, keys %d, deferred %d left", ix.Len(), len(ix.core), ix.keys.len(), ix.nDeferred)
			}
			if len(ix.boost.docs) != 0 || len(ix.boost.first) != 0 || len(ix.coreBoost.docs) != 0 || len(ix.coreBoost.first) != 0 {
				t.Fatalf("phrases left: boost %v, core %v", ix.boost.docs, ix.coreBoost.docs)
			}
			if len(ix.parts.count) != 0 || len(ix.parts.grams) != 0 || len(ix.coreParts) != 0 {
				t.Fatalf("name parts left: %v, core %v", ix.parts.count, ix.coreParts)
			}
			for _, ls := range [][]int{listCounts(ix.tfl), listCounts(ix.kwl)} {
				for id, n := range ls {
					if n != 0 {
						t.Fatalf("id %d: %d shard lists left", id, n)
					}
				}
			}
			if ix.tf.Len() != 0 || ix.kw.Len() != 0 {
				t.Fatalf("vocabulary left: %d terms, %d words", ix.tf.Len(), ix.kw.Len())
			}
			for _, f := range ix.flen {
				if f != 0 {
					t.Fatalf("field lengths left: %v", ix.flen)
				}
			}
		})
	}
}

// TestNameKeyCollision checks that a document found under a hash its own
// spellings do not have (a collision, simulated) is never returned.
func TestNameKeyCollision(t *testing.T) {
	ix := New(Config{Shards: 1})
	ix.Upsert(Doc{Name: "mcp__serena__find_symbol", Description: "find a symbol"})
	ix.Upsert(Doc{Name: "ReadFile", Description: "read a file"})
	ix.Upsert(Doc{Name: "Task", Description: "run a task", Aliases: []string{"Agent"}})
	readFile := ix.byName("ReadFile")
	// ReadFile now also sits under "find symbol" and "agent", as if its
	// spellings collided with those.
	ix.keys.add("find symbol", readFile)
	ix.keys.add("agent", readFile)
	for _, q := range []string{"find symbol", "find_symbol", "Agent", "agent", "readfile", "read file"} {
		res, err := ix.Search(q, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var exact []string
		for _, h := range res.Hits {
			if h.Match == MatchExact {
				exact = append(exact, h.Name)
			}
		}
		want := map[string]string{"find symbol": "mcp__serena__find_symbol", "find_symbol": "mcp__serena__find_symbol",
			"Agent": "Task", "agent": "Task", "readfile": "ReadFile", "read file": "ReadFile"}[q]
		if len(exact) != 1 || exact[0] != want {
			t.Errorf("Search(%q): exact hits %v, want [%s]", q, exact, want)
		}
	}
	res, _ := ix.Search("select:agent,find symbol", Options{})
	if names := hitNames(res.Hits); len(names) != 2 || names[0] != "Task" || names[1] != "mcp__serena__find_symbol" {
		t.Errorf("select: hits %v, want [Task mcp__serena__find_symbol]", names)
	}
	ix.keys.remove("find symbol", readFile)
	ix.keys.remove("agent", readFile)
	for _, name := range []string{"mcp__serena__find_symbol", "ReadFile", "Task"} {
		ix.Remove(name)
	}
	if n := ix.keys.len(); n != 0 {
		t.Errorf("%d name hashes left", n)
	}
}

// TestFwdRoundTrip checks the forward-list encoding on ids that take one
// to five varint bytes, starting at id 0, in both term layouts.
func TestFwdRoundTrip(t *testing.T) {
	words := []docWord{{0, fieldName}, {1, fieldHint | fieldDesc}, {127, fieldDesc}, {128, fieldName | fieldDesc}, {1 << 20, fieldHint}, {1<<32 - 1, fieldName | fieldHint | fieldDesc}}
	terms := []docTerm{{0, tfs{1, 0, 0, 0}}, {5, tfs{0, 255, 3, 0}}, {300, tfs{0, 0, 0, 7}}, {1 << 21, tfs{2, 2, 2, 2}}, {1<<32 - 1, tfs{9, 0, 0, 1}}}
	for _, withTF := range []bool{false, true} {
		ts := terms
		if withTF {
			// The cosine keeps its terms in text order, not by id.
			ts = []docTerm{terms[3], terms[0], terms[4], terms[1], terms[2]}
		}
		f, _, _ := encodeFwd(nil, nil, words, ts, withTF)
		w, tr := fwdSplit(f)
		wr, trr := wordReader{s: w}, termReader{s: tr, withTF: withTF}
		for _, want := range words {
			id, mask, ok := wr.next()
			if !ok || id != want.id || mask != want.mask {
				t.Fatalf("word = %d %03b %v, want %d %03b", id, mask, ok, want.id, want.mask)
			}
		}
		if _, _, ok := wr.next(); ok {
			t.Fatal("extra word")
		}
		for _, want := range ts {
			id, tf, ok := trr.next()
			if !withTF {
				want.tf = tfs{}
			}
			if !ok || id != want.id || tf != want.tf {
				t.Fatalf("withTF %v: term = %d %v %v, want %d %v", withTF, id, tf, ok, want.id, want.tf)
			}
		}
		if _, _, ok := trr.next(); ok {
			t.Fatal("extra term")
		}
	}
}

func listCounts[P posting[P]](ls lists[P]) []int {
	n := make([]int, len(ls))
	for id, l := range ls {
		n[id] = len(l)
	}
	return n
}

// TestShardListsFollowPostings checks that a shard holds posting lists
// only for the terms and words it has postings of: a word every document
// has is listed by the shards holding documents, a word of one document
// by its shard alone, and a shard whose last document with a word leaves
// drops its list while the other shards keep theirs.
func TestShardListsFollowPostings(t *testing.T) {
	const shards = 64
	ix := New(Config{Shards: shards})
	var live []string
	for i := range 40 {
		name := fmt.Sprintf("tool_%d", i)
		ix.Upsert(Doc{Name: name, Description: fmt.Sprintf("common words zq%dx", i)})
		live = append(live, name)
	}
	checkShards(t, ix)
	held := func() map[uint16]bool {
		m := make(map[uint16]bool)
		for _, d := range allDocs(ix) {
			m[d.shard] = true
		}
		return m
	}
	check := func(label string) {
		t.Helper()
		checkShards(t, ix)
		want := len(held())
		for _, v := range []struct {
			v  *vocab
			ls []int
		}{{&ix.tf, listCounts(ix.tfl)}, {&ix.kw, listCounts(ix.kwl)}} {
			id, ok := v.v.lookup("common")
			if !ok || v.ls[id] != want {
				t.Fatalf("%s: common: %v, %d shard lists, want %d", label, ok, v.ls[id], want)
			}
			for i := range 40 {
				id, ok := v.v.lookup(fmt.Sprintf("zq%dx", i))
				if ok && v.ls[id] != 1 {
					t.Fatalf("%s: zq%dx: %d shard lists, want 1", label, i, v.ls[id])
				}
			}
		}
	}
	check("built")
	// Empty shards one document at a time, re-adding some: lists leave
	// with a shard's last document and come back with a new one.
	for i, name := range live {
		ix.Remove(name)
		check(fmt.Sprintf("removed %s", name))
		if i%3 == 0 {
			ix.Upsert(Doc{Name: name + "_again", Description: "common again"})
			check(fmt.Sprintf("added %s_again", name))
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	live2 := make(map[string]Doc)
	for _, d := range allDocs(ix) {
		name := d.name
		live2[name] = Doc{Name: name, Description: "common again", Core: d.core}
	}
	checkSameAsFresh(t, "after removals", ix, freshIndex(r, live2), live2)
}

// allDocs returns the documents of ix.
func allDocs(ix *Index) []*doc {
	var out []*doc
	for _, sh := range ix.shards {
		for _, d := range sh.docs {
			if d != nil {
				out = append(out, d)
			}
		}
	}
	for d := range ix.core {
		out = append(out, d)
	}
	return out
}

// TestByName checks that documents are found by their exact name through
// the exact-name index: names equal but for case, names whose spellings
// collide (simulated), an empty name, and every kind of update.
func TestByName(t *testing.T) {
	for _, shards := range []int{1, 5} {
		ix := New(Config{Shards: shards})
		names := []string{"ReadFile", "readfile", "READFILE", "read_file", "Read File", "", "mcp__fs__read_file", "read"}
		want := make(map[string]bool)
		check := func(label string) {
			t.Helper()
			if ix.Len() != len(want) {
				t.Fatalf("%s: Len %d, want %d", label, ix.Len(), len(want))
			}
			for _, n := range append(names, "Readfile", "x") {
				d := ix.byName(n)
				if (d != nil) != want[n] || d != nil && d.name != n {
					t.Fatalf("%s: byName(%q) = %v, want %v", label, n, d, want[n])
				}
			}
			checkShards(t, ix)
		}
		r := rand.New(rand.NewPCG(5, uint64(shards)))
		for round := range 200 {
			n := names[r.IntN(len(names))]
			switch r.IntN(4) {
			case 0:
				if got := ix.Remove(n); got != want[n] {
					t.Fatalf("round %d: Remove(%q) = %v", round, n, got)
				}
				delete(want, n)
			case 1:
				ix.Upsert(Doc{Name: n, Core: true})
				want[n] = true
			case 2:
				ix.Upsert(Doc{Name: n, Aliases: []string{"readFile", "other"}, Description: "reads a file"})
				want[n] = true
			default:
				ix.Upsert(Doc{Name: n, Description: "reads a file"})
				want[n] = true
			}
			if d := ix.byName("ReadFile"); d != nil && round%7 == 0 {
				// ReadFile also under the hashes of other names' spellings.
				ix.keys.add("read", d)
				check(fmt.Sprintf("round %d", round))
				ix.keys.remove("read", d)
			}
			check(fmt.Sprintf("round %d", round))
		}
	}
}

// TestShardListSize checks that a shard list takes 24 bytes and a slot's
// statistics 12.
func TestShardListSize(t *testing.T) {
	if n := unsafe.Sizeof(shardList[tfPost]{}); n != 24 {
		t.Fatalf("shard list: %d bytes", n)
	}
	if n := unsafe.Sizeof(docStat{}); n != 12 {
		t.Fatalf("slot statistics: %d bytes, want 12", n)
	}
}
