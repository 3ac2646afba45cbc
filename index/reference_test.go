package index

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/internal/benchcorpus"
)

// refRank is a straightforward reference of rank: document at a time, each
// live document analysed again from its text (live, by name), its text
// score summed over the plan's terms in their order, its keyword fields
// found by comparing words, and the scores combined as the definition says.
// It shares with the index only the plan and the formulas (bm25,
// cosWeight, keywordPoints). The caller holds the read lock.
func refRank(ix *Index, p *plan, live map[string]*refDoc) []Hit {
	if p.n <= 0 || p.noMatch || (len(p.tf) == 0 && len(p.kw) == 0 && p.boost == nil) {
		return nil
	}
	var hits []Hit
	for si, sh := range ix.shards {
		for slot, d := range sh.docs {
			if d == nil {
				continue
			}
			rd, ok := live[d.name]
			if !ok {
				panic("reference: " + d.name + " is not live")
			}
			terms, words, st := rd.terms, rd.words, rd.stat

			var acc float64
			cjk, ascii := 0, false
			for _, q := range p.tf {
				tf, ok := terms[ix.tf.strs[q.id]]
				if !ok {
					continue
				}
				if p.scorer == ScorerBM25F {
					acc += p.bm25(tf, &st, q.qw)
				} else {
					acc += q.qw * cosWeight(tf, &st, &p.fw)
				}
				if q.cjk {
					cjk++
				} else {
					ascii = true
				}
			}
			var kwsum float64
			pts := 0
			var req uint64
			for _, t := range p.kw {
				var b uint8
				switch {
				case len(t.words) == 1:
					b |= words[ix.kw.strs[t.words[0]]]
				case len(t.words) > 1:
					and := uint8(0xff)
					if t.identifier {
						and = fieldName
					}
					for _, id := range t.words {
						and &= words[ix.kw.strs[id]]
					}
					b |= and
				}
				if t.whole >= 0 {
					b |= words[ix.kw.strs[t.whole]] & (fieldHint | fieldDesc)
				}
				for _, id := range t.partial {
					if words[ix.kw.strs[id]]&fieldName != 0 {
						b |= fieldPartial
					}
				}
				n := keywordPoints(b, d.mcp)
				if n == 0 {
					continue
				}
				pts += n
				kwsum += math.Sqrt(float64(min(n, keywordFull))/keywordFull) * t.w
				req |= t.bit
			}
			boosted := p.boost != nil && slices.Contains(p.boost[si], int32(slot))
			if acc == 0 && pts == 0 && !boosted || req&p.reqAll != p.reqAll || p.exclude[d] {
				continue
			}
			var cos float64
			if acc > 0 {
				if p.scorer == ScorerBM25F {
					cos = math.Sqrt(min(acc/p.ideal, 1))
				} else if dn := ix.norm(sh, int32(slot)); dn > 0 && p.qnorm > 0 {
					cos = acc / (p.qnorm * dn)
				}
				if p.cjkTerms > 0 && !ascii && cjk < min(2, p.cjkTerms) {
					cos = 0
				}
			}
			if boosted && p.boostMin > 0 {
				cos = max(cos, p.boostMin)
			}
			if cos < p.minTF {
				cos = 0
			}
			var kw float64
			if p.kwTotal > 0 {
				kw = kwsum / p.kwTotal
			}
			score := p.wk*kw + p.wt*cos
			if score <= 0 || p.allow != nil && !p.allow(d.name) {
				continue
			}
			hits = append(hits, Hit{Name: d.name, Score: score, Keyword: kw, TFIDF: cos, Points: pts})
		}
	}
	slices.SortFunc(hits, compareHits)
	return hits[:min(p.n, len(hits))]
}

// refDoc is a document analysed again from its text: its terms' counts,
// its words' fields and its field statistics.
type refDoc struct {
	terms map[string]tfs
	words map[string]uint8
	stat  docStat
}

func analyseAgain(ix *Index, live map[string]Doc) map[string]*refDoc {
	out := make(map[string]*refDoc, len(live))
	for name, doc := range live {
		pr := ix.prepare(doc)
		rd := &refDoc{terms: make(map[string]tfs, len(pr.terms)), words: make(map[string]uint8, len(pr.words)), stat: pr.stat}
		for i, t := range pr.terms {
			rd.terms[t] = pr.tfs[i]
		}
		for i, w := range pr.words {
			rd.words[w] = pr.fields[i]
		}
		ix.release(pr)
		out[name] = rd
	}
	return out
}

// refSearch is Search with rank replaced by refRank.
func refSearch(ix *Index, query string, opt Options, live map[string]*refDoc) (Result, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return Result{}, err
	}
	ix.mu.RLock()
	prefixed := q.Kind == KindPrefix && ix.runPrefix(q.Prefix, MaxResults, func(string) bool { return true }, &Result{})
	ix.mu.RUnlock()
	if q.Kind == KindSelect || prefixed {
		return ix.Run(q, opt), nil
	}
	res := ix.Run(q, opt) // everything but the ranked hits
	var exact []*doc
	n := 0
	for _, h := range res.Hits {
		if h.Match == MatchExact {
			n++
		}
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mode := opt.Mode
	if q.Kind == KindDiscover {
		mode = ModeTFIDF
	} else {
		for _, h := range res.Hits[:n] {
			exact = append(exact, ix.byName(h.Name))
		}
		// Core documents the query names are excluded as well.
		for _, d := range ix.exact(q.Text) {
			if d.core && !slices.Contains(exact, d) {
				exact = append(exact, d)
			}
		}
	}
	max := opt.Max
	if max <= 0 {
		max = DefaultMax
	}
	max = min(max, MaxResults)
	p := ix.compile(q.Text, mode, max-n, exact, false)
	defer ix.putPlan(p)
	p.allow = opt.Allow
	if n >= max {
		return res, nil
	}
	res.Hits = append(res.Hits[:n], refRank(ix, p, live)...)
	return res, nil
}

// compareReference runs every query through Search and refSearch and
// fails on any difference, scores compared to the bit.
func compareReference(t *testing.T, label string, ix *Index, live map[string]Doc, queries []string, opts []Options) {
	t.Helper()
	ref := analyseAgain(ix, live)
	for _, q := range queries {
		for _, opt := range opts {
			got, gerr := ix.Search(q, opt)
			want, werr := refSearch(ix, q, opt, ref)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%s: Search(%q) error %v, reference %v", label, q, gerr, werr)
			}
			if msg := diffResults(got, want); msg != "" {
				t.Fatalf("%s: Search(%q, Max %d, Mode %d): %s", label, q, opt.Max, opt.Mode, msg)
			}
			for i := range got.Hits {
				if got.Hits[i] != want.Hits[i] {
					t.Fatalf("%s: Search(%q): hit %d = %+v, reference %+v", label, q, i, got.Hits[i], want.Hits[i])
				}
			}
		}
	}
}

var referenceOptions = []Options{
	{}, {Max: 1}, {Max: MaxResults},
	{Max: 5, Mode: ModeTFIDF}, {Max: 5, Mode: ModeKeyword},
	{Max: 5, Allow: func(name string) bool { return len(name)%3 != 0 }},
}

// randomQueries are word-salad queries of 1 to 30 words.
func randomQueries(r *rand.Rand, n int) []string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = salad(r, 1, 1+r.IntN(30))
		switch r.IntN(8) {
		case 0:
			qs[i] = "discover:" + qs[i]
		case 1:
			qs[i] = "+" + qs[i]
		}
	}
	return qs
}

// The index ranks exactly as the reference, over random catalogs with
// churn, for both scorers and any shard count.
func TestSearchEqualsReference(t *testing.T) {
	seeds := 2
	if testing.Short() {
		seeds = 1
	}
	var pruned int64
	defer func() {
		if pruned == 0 {
			t.Error("no query ran pruned")
		}
	}()
	for _, scorer := range []Scorer{ScorerBM25F, ScorerCosine} {
		for _, shards := range []int{1, 3} {
			for seed := range uint64(seeds) {
				r := rand.New(rand.NewPCG(seed, 77))
				ix := New(Config{Shards: shards, Scorer: scorer})
				live := map[string]Doc{}
				// A larger catalog than the pool: distinct names, then churn.
				for i := range 200 + r.IntN(200) {
					d := randomDoc(r, fmt.Sprintf("%s_%d", poolNames[i%len(poolNames)], i))
					ix.Upsert(d)
					live[d.Name] = d
				}
				maps.Copy(live, mutate(r, ix, 200))
				queries := append(slices.Clone(invariantQueries), randomQueries(r, 20)...)
				label := fmt.Sprintf("%v shards=%d seed=%d", scorer, shards, seed)
				compareReference(t, label, ix, live, queries, referenceOptions)
				if scorer != ScorerBM25F {
					continue // never pruned
				}
				// The same catalog pruned, as a large one is.
				ix.pruneFrom, ix.pruneStats = 0, &pruneStats{}
				compareReference(t, label+" pruned", ix, live, queries, referenceOptions)
				pruned += ix.pruneStats.pruned.Load()
			}
		}
	}
}

// The datasets' tools and queries, with churn: the benchmarks' workload.
func TestSearchEqualsReferenceDatasets(t *testing.T) {
	dir := benchcorpus.Dir(filepath.Join("..", "..", "shared", "datasets"))
	set, err := benchcorpus.Load(dir, ParamText, MaxQueryBytes)
	if err != nil {
		t.Skip(err)
	}
	n := 1500
	if testing.Short() {
		n = 500
	}
	r := rand.New(rand.NewPCG(3, 4))
	ix := New(Config{Shards: 2})
	live := map[string]Doc{}
	doc := func(i int) Doc {
		tl := set.Tool(i)
		return Doc{Name: tl.Name, Description: tl.Description, Params: tl.Params}
	}
	for i := range n {
		d := doc(i)
		ix.Upsert(d)
		live[d.Name] = d
	}
	for range n / 4 { // replace with changed text, remove, re-add
		d := doc(r.IntN(n))
		switch r.IntN(3) {
		case 0:
			d.Description += " " + set.Tool(r.IntN(len(set.Tools))).Description
			ix.Upsert(d)
			live[d.Name] = d
		case 1:
			ix.Remove(d.Name)
			delete(live, d.Name)
		default:
			ix.Upsert(d)
			live[d.Name] = d
		}
	}
	checkShards(t, ix)
	// Every third task and keyword query of the datasets.
	var queries []string
	for i := 0; i < len(set.Tasks); i += 3 {
		queries = append(queries, set.Tasks[i], set.Keywords[i])
	}
	for _, q := range set.Tasks[:10] {
		queries = append(queries, "discover:"+q)
	}
	queries = append(queries, doc(5).Name, strings.ReplaceAll(doc(7).Name, "_", " ")+" "+set.Keywords[3])
	opts := []Options{{}, {Max: MaxResults}, {Max: 5, Mode: ModeTFIDF},
		{Max: 5, Allow: func(name string) bool { return len(name)%2 == 0 }}}
	compareReference(t, "datasets", ix, live, queries, opts)
	blended := checkBlend(t, "datasets", ix, queries)
	ix.pruneFrom, ix.pruneStats = 0, &pruneStats{}
	compareReference(t, "datasets pruned", ix, live, queries, opts)
	// The pruned search sums the word score apart (finish): the same.
	for i, got := range checkBlend(t, "datasets pruned", ix, queries) {
		if !slices.Equal(got, blended[i]) {
			t.Fatalf("%q blended: pruned %+v, exhaustive %+v", queries[i], got, blended[i])
		}
	}
	if n, total := ix.pruneStats.pruned.Load(), len(queries)*len(opts); n < int64(total/2) {
		t.Errorf("%d of %d searches ran pruned, want most", n, total)
	}
}

// The limiter prunes a text sum only when the bound does.
func TestLimiterWithinBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200_000 {
		p := &plan{wk: r.Float64(), wt: 0.01 + r.Float64(), minTF: r.Float64() * 0.3,
			ideal: math.Exp(r.Float64()*10 - 3), kwTotal: float64(r.IntN(5)) * r.Float64() * 3}
		th := r.Float64() * (p.wk + p.wt)
		m := (p.kwTotal + 2) * r.Float64()
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

// checkBlend checks Options.BlendWords on every query: the same hits as
// without it, sorted by their new scores, each within [(1 − s) x,
// (1 − s) x + s] of its score x. It returns the blended hits by query.
func checkBlend(t *testing.T, label string, ix *Index, queries []string) [][]Hit {
	t.Helper()
	out := make([][]Hit, len(queries))
	for qi, text := range queries {
		q, err := ParseQuery(text)
		if err != nil {
			continue
		}
		plain := ix.Run(q, Options{Max: 20}).Hits
		blended := ix.Run(q, Options{Max: 20, BlendWords: true}).Hits
		out[qi] = blended
		if !slices.Equal(slices.Sorted(slices.Values(hitNames(plain))), slices.Sorted(slices.Values(hitNames(blended)))) {
			t.Fatalf("%s: %q blended %v, want the hits of %v", label, text, hitNames(blended), hitNames(plain))
		}
		was := map[string]float64{}
		for _, h := range plain {
			was[h.Name] = h.Score
		}
		for i, h := range blended {
			if i > 0 && h.Match == MatchRanked && blended[i-1].Match == MatchRanked && compareHits(blended[i-1], h) > 0 {
				t.Fatalf("%s: %q blended out of order at %d: %+v", label, text, i, blended)
			}
			x := was[h.Name]
			if h.Match == MatchRanked && (h.Score < (1-WordShare)*x-1e-12 || h.Score > (1-WordShare)*x+WordShare+1e-12) && h.Score != x {
				t.Fatalf("%s: %q: %s scored %v from %v", label, text, h.Name, h.Score, x)
			}
		}
	}
	return out
}
