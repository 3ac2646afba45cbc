package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/internal/benchcorpus"
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
				if !found || l[i].mask() != mask {
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

// comparePruned runs every query pruned and exhaustively on ix and
// reports any difference; it returns how many ran pruned to the end.
func comparePruned(t *testing.T, label string, ix *Index, queries []string, opts []Options) (pruned int) {
	t.Helper()
	ix.pruneStats = &pruneStats{}
	defer func() { ix.pruneStats = nil }()
	for _, q := range queries {
		for _, opt := range opts {
			ix.exhaustive = false
			got, gerr := ix.Search(q, opt)
			ix.exhaustive = true
			want, werr := ix.Search(q, opt)
			ix.exhaustive = false
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%s: Search(%q) error %v, exhaustive %v", label, q, gerr, werr)
			}
			if msg := diffResults(got, want); msg != "" {
				t.Fatalf("%s: Search(%q, Max %d, Mode %d): %s", label, q, opt.Max, opt.Mode, msg)
			}
			for i := range got.Hits {
				if got.Hits[i] != want.Hits[i] {
					t.Fatalf("%s: Search(%q): hit %d = %+v, exhaustive %+v", label, q, i, got.Hits[i], want.Hits[i])
				}
			}
		}
	}
	return int(ix.pruneStats.pruned.Load())
}

var pruneOptions = []Options{
	{}, {Max: 1}, {Max: 3}, {Max: 10}, {Max: MaxResults},
	{Max: 5, Mode: ModeTFIDF}, {Max: 5, Mode: ModeKeyword},
	{Max: 5, Allow: func(name string) bool { return len(name)%3 != 0 }},
}

// randomQueries are word-salad queries of 1 to 30 words.
func randomQueries(r *rand.Rand, n int) []string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = salad(r, 1, 1+r.IntN(30))
		if r.IntN(8) == 0 {
			qs[i] = "discover:" + qs[i]
		}
	}
	return qs
}

func TestPrunedEqualsExhaustive(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	pruned := 0
	for _, shards := range []int{1, 2, 3, 32} {
		for seed := range uint64(seeds) {
			r := rand.New(rand.NewPCG(seed, 77))
			ix := New(Config{Shards: shards})
			// A larger catalog than the pool: distinct names, then churn.
			for i := range 300 + r.IntN(700) {
				d := randomDoc(r, fmt.Sprintf("%s_%d", poolNames[i%len(poolNames)], i))
				ix.Upsert(d)
			}
			mutate(r, ix, 200)
			queries := append(slices.Clone(invariantQueries), randomQueries(r, 40)...)
			pruned += comparePruned(t, fmt.Sprintf("shards=%d seed=%d", shards, seed), ix, queries, pruneOptions)
		}
	}
	if pruned == 0 {
		t.Error("no query ran pruned")
	}
}

// The datasets' tools and queries, with churn: the benchmarks' workload.
func TestPrunedEqualsExhaustiveDatasets(t *testing.T) {
	dir := benchcorpus.Dir(filepath.Join("..", "..", "shared", "datasets"))
	set, err := benchcorpus.Load(dir, ParamText, MaxQueryBytes)
	if err != nil {
		t.Skip(err)
	}
	n := 6000
	if testing.Short() {
		n = 1500
	}
	r := rand.New(rand.NewPCG(3, 4))
	ix := New(Config{Shards: 2})
	doc := func(i int) Doc {
		tl := set.Tool(i)
		return Doc{Name: tl.Name, Description: tl.Description, Params: tl.Params}
	}
	for i := range n {
		ix.Upsert(doc(i))
	}
	for range n / 4 { // replace with changed text, remove, re-add
		i := r.IntN(n)
		switch r.IntN(3) {
		case 0:
			d := doc(i)
			d.Description += " " + set.Tool(r.IntN(len(set.Tools))).Description
			ix.Upsert(d)
		case 1:
			ix.Remove(doc(i).Name)
		default:
			ix.Upsert(doc(i))
		}
	}
	checkShards(t, ix)
	queries := append(slices.Clone(set.Tasks), set.Keywords...)
	for _, q := range set.Tasks[:20] {
		queries = append(queries, "discover:"+q)
	}
	queries = append(queries, doc(5).Name, strings.ReplaceAll(doc(7).Name, "_", " ")+" "+set.Keywords[3])
	opts := []Options{{}, {Max: 1}, {Max: 10}, {Max: MaxResults}, {Max: 5, Mode: ModeTFIDF},
		{Max: 5, Allow: func(name string) bool { return len(name)%2 == 0 }}}
	pruned := comparePruned(t, "datasets", ix, queries, opts)
	if total := len(queries) * len(opts); pruned < total/2 {
		t.Errorf("%d of %d searches ran pruned, want most", pruned, total)
	}
}

// The limiter prunes a text sum only when the bound does.
func TestLimiterWithinBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200_000 {
		p := &plan{wk: r.Float64(), wt: 0.01 + r.Float64(), minTF: r.Float64() * 0.3,
			ideal: math.Exp(r.Float64()*10 - 3), known: r.IntN(5)}
		th := r.Float64() * (p.wk + p.wt)
		m := float64(r.IntN(p.known+2)) * r.Float64()
		l := p.limiter(th)
		lim := l.lim(m)
		for range 4 {
			x := r.Float64() * 1.2 * p.ideal
			switch r.IntN(3) {
			case 0:
				x = math.Nextafter(lim, math.Inf(-1))
			case 1:
				x = lim * (1 - 1e-12)
			}
			if x < 0 || math.IsInf(x, 0) {
				continue
			}
			if x < lim && p.bound(x, m) >= th {
				t.Fatalf("%+v th %v m %v: lim %v, bound(%v) = %v >= th", p, th, m, lim, x, p.bound(x, m))
			}
		}
	}
}
