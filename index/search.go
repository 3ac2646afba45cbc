package index

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tooldex/tooldex/index/analysis"
)

// Mode picks the scorers a search uses.
type Mode int

// Modes.
const (
	ModeHybrid  Mode = iota // keyword and TF-IDF, weighted
	ModeKeyword             // keyword points only
	ModeTFIDF               // TF-IDF only (discover:)
)

// Match says which path found a hit.
type Match int

// Match kinds.
const (
	MatchRanked Match = iota
	MatchExact
	MatchSelect
	MatchPrefix
)

// Hit is one result.
type Hit struct {
	Name string
	// Score is the hybrid score (1 for exact, select: and prefix hits).
	Score float64
	// Keyword is the normalised keyword score, TFIDF the cosine.
	Keyword, TFIDF float64
	// Points are the raw keyword points.
	Points int
	Match  Match

	// words is the ranked hit's word score while Run works (see
	// blendWords; 0 in the results it returns).
	words float64
}

// Result is the outcome of a search.
type Result struct {
	Kind QueryKind
	Hits []Hit
	// AlreadyLoaded lists core tools the query named.
	AlreadyLoaded []string
	// NotFound lists select: names that matched nothing.
	NotFound []string
	// Deferred is the number of deferred tools searched.
	Deferred int
	// Required reports that the query's "+term" words were required:
	// every ranked hit matches them all (or none could, and nothing
	// ranked is listed).
	Required bool
}

// Options adjust one search.
type Options struct {
	// Max caps the ranked hits; 0 means DefaultMax, above MaxResults means
	// MaxResults.
	Max int
	// Mode picks the scorers; discover: queries always use ModeTFIDF.
	Mode Mode
	// Allow, when set, hides every tool it returns false for (a caller's
	// permissions): hidden tools are never returned nor named.
	Allow func(name string) bool
	// BlendWords re-scores the ranked hits of a keyword query with the
	// words as written (see blendWords): the server sets it for the
	// candidates it fuses with dense retrieval.
	BlendWords bool
}

// parallelMin is the number of deferred documents from which shards are
// scored in parallel; below it goroutines cost more than they save.
const parallelMin = 32768

// Search parses and runs a ToolSearch query.
func (ix *Index) Search(query string, opt Options) (Result, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return Result{}, err
	}
	return ix.Run(q, opt), nil
}

// Run executes a parsed query.
func (ix *Index) Run(q Query, opt Options) Result {
	n := opt.Max
	if n <= 0 {
		n = DefaultMax
	}
	n = min(n, MaxResults)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	res := Result{Kind: q.Kind, Deferred: ix.nDeferred}
	allow := opt.Allow
	if allow == nil {
		allow = func(string) bool { return true }
	}
	switch q.Kind {
	case KindSelect:
		ix.runSelect(q.Names, allow, &res)
		return res
	case KindPrefix:
		if ix.runPrefix(q.Prefix, n, allow, &res) {
			return res
		}
		res.Kind = KindKeyword
	case KindDiscover:
		opt.Mode = ModeTFIDF
	}
	var exact []*doc
	if q.Kind != KindDiscover {
		exact = ix.exact(q.Text)
		exact = slices.DeleteFunc(exact, func(d *doc) bool { return !allow(d.name) })
		for _, d := range exact {
			if d.core {
				res.AlreadyLoaded = append(res.AlreadyLoaded, d.name)
				continue
			}
			res.Hits = append(res.Hits, Hit{Name: d.name, Score: 1, Keyword: 1, TFIDF: 1, Match: MatchExact})
		}
	}
	p := ix.compile(q.Text, opt.Mode, n-len(res.Hits), exact, opt.BlendWords)
	defer ix.putPlan(p)
	p.allow = opt.Allow
	res.Required = p.reqAll != 0 || p.noMatch
	if q.Kind != KindDiscover {
		for _, name := range ix.coreMentions(p, exact) {
			if allow(name) {
				res.AlreadyLoaded = append(res.AlreadyLoaded, name)
			}
		}
	}
	if len(res.Hits) >= n {
		res.Hits = res.Hits[:n]
		return res
	}
	ranked := ix.rank(p)
	if opt.BlendWords {
		blendWords(ranked)
		for i := range ranked {
			ranked[i].words = 0
		}
	}
	res.Hits = append(res.Hits, ranked...)
	return res
}

func (ix *Index) runSelect(names []string, allow func(string) bool, res *Result) {
	seen := make(map[*doc]bool)
	for _, name := range names {
		d := ix.byName(name)
		if d == nil {
			if ds := ix.lookupKey(name); len(ds) > 0 {
				d = ds[0]
			}
		}
		switch {
		case d == nil || !allow(d.name):
			res.NotFound = append(res.NotFound, name)
		case seen[d]:
		case d.core:
			seen[d] = true
			res.AlreadyLoaded = append(res.AlreadyLoaded, d.name)
		default:
			seen[d] = true
			res.Hits = append(res.Hits, Hit{Name: d.name, Score: 1, Keyword: 1, TFIDF: 1, Match: MatchSelect})
		}
	}
}

// lookupKey finds documents by an exact-name spelling, preferring the
// lower-case form over the canonical one, in a new slice. Deferred
// documents come first.
func (ix *Index) lookupKey(s string) []*doc {
	ds := ix.keys.lookup(strings.ToLower(strings.TrimSpace(s)))
	if len(ds) == 0 {
		// canonical(s), built without allocating.
		var parts [16]string
		var buf [maxExactQuery]byte
		b := buf[:0]
		for f := range strings.FieldsSeq(s) {
			for _, p := range analysis.AppendSplitIdentifier(parts[:0], f) {
				if len(b) > 0 {
					b = append(b, ' ')
				}
				b = append(b, p...)
			}
		}
		ds = ix.keys.lookupBytes(b)
	}
	return ds
}

// maxExactQuery bounds the queries tried as tool names: a name has at most
// 64 bytes, spelled as words a little more.
const maxExactQuery = 160

// exact returns the documents the whole query names, sorted by name.
func (ix *Index) exact(text string) []*doc {
	if len(text) > maxExactQuery || !ix.keys.mayName(text) {
		return nil
	}
	ds := ix.lookupKey(text) // a new slice
	slices.SortFunc(ds, func(a, b *doc) int { return strings.Compare(a.name, b.name) })
	return ds
}

// plan is a query compiled against the global vocabulary.
type plan struct {
	mode     Mode
	wk, wt   float64
	minTF    float64
	boostMin float64

	scorer Scorer
	k1     float64
	// BM25F: a field's factor is fw[f] / (b1 + bl[f] × length), looked
	// up in norm.
	fw, bl   [nFields]float64
	b1       float64
	norm     *lenNorm
	tf       []qterm
	pairs    []int   // per text term: the keyword term scored with it, or -1 (pairs.go)
	qnorm    float64 // cosine: query vector length
	ideal    float64 // BM25F: the score of a document saturating every term
	cjkTerms int

	kw      []kwTerm
	kwTotal float64 // the sum of the keyword terms' weights
	reqAll  uint64  // bits of required terms
	noMatch bool    // a required term matches nothing

	boost     [][]int32 // per shard: slots of name-boosted documents
	boostCore []*doc    // core documents the query names
	kwWords   []string  // every keyword word of the query
	exclude   map[*doc]bool
	allow     func(string) bool
	n         int

	// Scratch reused by the next plan (see getPlan).
	text    analysis.QueryText
	place   map[string]int32 // term → place in order
	order   []string         // the distinct text terms
	cnt     []int32          // their counts
	termOrd []int32          // per text.Terms: its place in order
	kwTmp   []kwTerm         // pairTerms' scratch
	kwIDs   []uint32         // backing of kw[i].words
	wordAvg float64          // the word score's average length (words.go)
	kq      kwQuery
	pq      pruneQuery
}

// getPlan returns a plan, empty but for the scratch of an earlier one.
func (ix *Index) getPlan() *plan {
	p, _ := ix.plans.Get().(*plan)
	if p == nil {
		return &plan{place: make(map[string]int32)}
	}
	return p
}

// putPlan keeps p's scratch for a later query.
func (ix *Index) putPlan(p *plan) {
	for i := range p.kw {
		p.kw[i] = kwTerm{} // partial lists are shared with the cache
	}
	// Let the query's strings go.
	p.text.Reset()
	clear(p.order)
	clear(p.kwWords)
	clear(p.place)
	clear(p.kwTmp)
	tf, kw, kwWords, place, order, kwIDs := p.tf[:0], p.kw[:0], p.kwWords[:0], p.place, p.order[:0], p.kwIDs[:0]
	pairs, cnt, termOrd, kwTmp := p.pairs[:0], p.cnt[:0], p.termOrd[:0], p.kwTmp[:0]
	kq := p.kq.reset()
	pqOrder, pqPre := p.pq.order[:0], p.pq.pre[:0]
	*p = plan{tf: tf, kw: kw, kwWords: kwWords, text: p.text, place: place, order: order, kwIDs: kwIDs, kq: kq,
		pairs: pairs, cnt: cnt, termOrd: termOrd, kwTmp: kwTmp}
	p.pq.order, p.pq.pre = pqOrder, pqPre
	ix.plans.Put(p)
}

type qterm struct {
	id  uint32
	ord int32   // its place in plan.order
	w   float64 // query term count (BM25F) or count × idf (cosine)
	idf float64
	qw  float64 // w × idf
	cjk bool
}

type kwTerm struct {
	// words are the ids of the term's words. A one-word term matches any
	// field; with several, every word must match the same field (only the
	// name, when whole is set).
	words []uint32
	// whole is the id of the whole term as a description or hint word, for
	// identifier terms (send_message); -1 when unknown or not used.
	whole      int64
	identifier bool     // several words from one identifier (send_message)
	partial    []uint32 // ids of name parts containing the (single) word
	bit        uint64   // required bit, or 0
	// w is the term's weight in the keyword score: BM25's idf of the
	// documents it can match (see keywordWeight).
	w float64
	// wordIDF is BM25's idf of the term's word, for the first one-word
	// term of each word when the search blends words (0 otherwise): its
	// share of the word score (blendWords).
	wordIDF float64
	// stemAt is the position in the query's text terms of a one-word
	// term's word, -1 for none; text is the index in plan.tf of that
	// term when the two are scored from one list (pairs.go), else -1.
	stemAt int32
	text   int
}

// single reports a one-word term that is neither required nor an
// identifier: its score reads one word's postings and partial name
// matches (oneWord).
func (t *kwTerm) single() bool {
	return len(t.words) == 1 && t.whole < 0 && t.bit == 0
}

// compile plans a search of text for the best n, exact excluded (they
// are pinned); with blend it prepares the word score (blendWords).
func (ix *Index) compile(text string, mode Mode, n int, exact []*doc, blend bool) *plan {
	p := ix.getPlan()
	p.mode, p.wk, p.wt = mode, ix.cfg.KeywordWeight, ix.cfg.TFIDFWeight
	p.minTF, p.boostMin, p.n = ix.cfg.MinTFIDF, ix.cfg.NameBoost, n
	p.scorer, p.k1 = ix.cfg.Scorer, ix.cfg.K1
	switch mode {
	case ModeKeyword:
		p.wk, p.wt = 1, 0
	case ModeTFIDF:
		p.wk, p.wt = 0, 1
	}
	if len(exact) > 0 {
		p.exclude = make(map[*doc]bool, len(exact))
		for _, d := range exact {
			p.exclude[d] = true
		}
	}
	N := float64(ix.nDeferred)
	p.fw = [nFields]float64{ix.cfg.NameWeight, ix.cfg.HintWeight, ix.cfg.DescWeight, ix.cfg.ParamWeight}
	p.b1 = 1
	if b := ix.cfg.B; b > 0 {
		p.b1 = 1 - b
		for f, total := range ix.flen {
			if total > 0 {
				p.bl[f] = b * N / float64(total) // b / average length
			}
		}
	}
	if p.scorer == ScorerBM25F {
		p.norm = ix.lenNorm(p)
	}
	if blend {
		p.wordAvg = ix.wordAvg()
	}
	ix.an.Analyze(&p.text, text, p.wt > 0, p.wk > 0)
	p.boost, p.boostCore = ix.boosted(p.text.Tokens)
	if p.wt > 0 {
		// place maps a term to its place in order, the distinct
		// terms; cnt holds their counts, termOrd the place of each of
		// the query's terms (pairTerms).
		place := p.place
		most := int32(1)
		order, cnt, termOrd := p.order[:0], p.cnt[:0], p.termOrd[:0]
		for _, t := range p.text.Terms {
			o, ok := place[t]
			if !ok {
				o = int32(len(order))
				place[t] = o
				order, cnt = append(order, t), append(cnt, 0)
			}
			cnt[o]++
			most = max(most, cnt[o])
			termOrd = append(termOrd, o)
		}
		p.order, p.cnt, p.termOrd = order, cnt, termOrd
		for o, t := range order {
			id, ok := ix.tf.lookup(t)
			if !ok {
				continue
			}
			c := cnt[o]
			df := float64(ix.tf.df[id])
			rw := ix.tf.weight(id) // a request word weighs less (Config.RequestDamping)
			var idf, w float64
			if p.scorer == ScorerCosine {
				idf = math.Log(N / df)
				w = float64(c) / float64(most) * idf * rw
				p.qnorm += w * w
			} else {
				idf = bm25IDF(df, N)
				w = queryTermWeight(c, ix.cfg.K3) * rw
				p.ideal += w * idf
			}
			cjk := isCJKTerm(t)
			if cjk {
				p.cjkTerms++
			}
			if idf > 0 {
				p.tf = append(p.tf, qterm{id: id, w: w, idf: idf, qw: w * idf, cjk: cjk, ord: int32(o)})
			}
		}
		if p.scorer == ScorerBM25F {
			// Contributions are summed by descending weight, the
			// order the pruned search meets them in (see prune.go);
			// stably, so that equal weights keep the query's order.
			slices.SortStableFunc(p.tf, func(a, b qterm) int { return cmp.Compare(b.qw, a.qw) })
		}
		if len(p.tf) > maxTerms {
			p.capTerms()
		}
		p.qnorm = math.Sqrt(p.qnorm)
	} else {
		p.boost = nil
	}
	if p.wk > 0 {
		var reqBit uint64 = 1
		for ki, t := range p.text.Keywords {
			p.kwWords = append(p.kwWords, t.Words...)
			kt := kwTerm{whole: -1, identifier: len(t.Words) > 1 && t.Whole != "", stemAt: -1, text: -1}
			if kt.identifier {
				if id, found := ix.kw.lookup(t.Whole); found {
					kt.whole = int64(id)
				}
			}
			from := len(p.kwIDs)
			for _, w := range t.Words {
				id, found := ix.kw.lookup(w)
				if !found {
					p.kwIDs = p.kwIDs[:from]
					break
				}
				p.kwIDs = append(p.kwIDs, id)
			}
			if len(p.kwIDs) > from {
				kt.words = p.kwIDs[from:len(p.kwIDs):len(p.kwIDs)]
			}
			if ki < len(p.text.StemAt) {
				kt.stemAt = p.text.StemAt[ki]
			}
			w := -1.0 // not computed
			if len(t.Words) == 1 && len(t.Words[0]) >= 3 {
				kt.partial, w = ix.partial(t.Words[0], kt, N)
			}
			known := len(kt.words) > 0 || len(kt.partial) > 0 || kt.whole >= 0
			if t.Required {
				if !known {
					p.noMatch = true
				}
				if reqBit != 0 {
					kt.bit = reqBit
					p.reqAll |= reqBit
					reqBit <<= 1
				}
			}
			if known {
				kt.w = w
				if w < 0 {
					kt.w = ix.keywordWeight(kt, N)
				}
				p.kwTotal += kt.w
				p.kw = append(p.kw, kt)
			}
		}
	}
	if len(p.kw) > maxTerms {
		p.capKeywords()
	}
	if blend {
		// The first one-word term of each word holds its share of the
		// word score (after the cap: a search has few terms).
		for i := range p.kw {
			t := &p.kw[i]
			if len(t.words) == 1 && t.whole < 0 && !slices.ContainsFunc(p.kw[:i], func(o kwTerm) bool {
				return o.wordIDF > 0 && o.words[0] == t.words[0]
			}) {
				t.wordIDF = bm25IDF(min(float64(ix.kw.df[t.words[0]]), N), N)
			}
		}
	}
	ix.pairTerms(p)
	return p
}

// maxTerms is MaxQueryTerms, but for the report of what the cap saves
// (TestQueryTermCapCost).
var maxTerms = MaxQueryTerms

// capTerms keeps the maxTerms text terms of largest weight, in their
// order, and recomputes what the plan sums over them.
func (p *plan) capTerms() {
	th := kthLargest(len(p.tf), maxTerms, func(i int) float64 { return p.tf[i].qw })
	kept := p.tf[:0]
	p.ideal, p.qnorm, p.cjkTerms = 0, 0, 0
	for _, q := range p.tf {
		if len(kept) == maxTerms || q.qw < th {
			continue
		}
		kept = append(kept, q)
		if p.scorer == ScorerCosine {
			p.qnorm += q.w * q.w
		} else {
			p.ideal += q.qw
		}
		if q.cjk {
			p.cjkTerms++
		}
	}
	p.tf = kept
}

// capKeywords keeps the required keyword terms and the maxTerms others
// of largest weight, in their order.
func (p *plan) capKeywords() {
	var w []float64
	for _, t := range p.kw {
		if t.bit == 0 {
			w = append(w, t.w)
		}
	}
	th := math.Inf(-1)
	if len(w) > maxTerms {
		th = kthLargest(len(w), maxTerms, func(i int) float64 { return w[i] })
	}
	kept, n := p.kw[:0], 0
	p.kwTotal = 0
	for _, t := range p.kw {
		if t.bit == 0 {
			if n == maxTerms || t.w < th {
				continue
			}
			n++
		}
		kept = append(kept, t)
		p.kwTotal += t.w
	}
	clear(p.kw[len(kept):]) // partial lists are shared with the cache
	p.kw = kept
}

// kthLargest returns the k-th largest of n values (1 ≤ k ≤ n).
func kthLargest(n, k int, value func(int) float64) float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = value(i)
	}
	slices.SortFunc(v, func(a, b float64) int { return cmp.Compare(b, a) })
	return v[k-1]
}

// keywordWeight is a keyword term's weight: BM25's idf, ln(1 + (N − df +
// 0.5) / (df + 0.5)), of the number of documents df the term can match,
// so that a word most tools have ("information", "get") counts less
// toward the keyword score than a rare one. A one-word term matches its
// word's documents and those whose name parts contain it; a term of
// several words (an identifier or a phrase) at most the documents of its
// rarest word. df is capped at N, which keeps the weight positive.
func (ix *Index) keywordWeight(t kwTerm, N float64) float64 {
	var df float64
	switch {
	case len(t.words) == 1:
		df = float64(ix.kw.df[t.words[0]])
	case len(t.words) > 1:
		df = math.Inf(1)
		for _, id := range t.words {
			df = min(df, float64(ix.kw.df[id]))
		}
	case t.whole >= 0:
		df = float64(ix.kw.df[t.whole])
	}
	if len(t.words) <= 1 {
		for _, id := range t.partial {
			df += float64(ix.kw.df[id])
		}
	}
	return bm25IDF(min(df, N), N)
}

// bm25IDF is BM25's idf of a term in df of N documents, ln(1 + (N − df +
// 0.5) / (df + 0.5)): positive even for a term every document has.
func bm25IDF(df, N float64) float64 {
	return math.Log(1 + (N-df+0.5)/(df+0.5))
}

// partial returns the keyword ids of the name parts that contain word
// without equalling it, and the weight of t, the one-word keyword term of
// word (keywordWeight; t.words set, t.partial not yet). Results are cached
// until the name-part vocabulary changes, since the trigram scan is the
// costly part of a query; the weight until the index changes.
func (ix *Index) partial(word string, t kwTerm, N float64) ([]uint32, float64) {
	ix.partMu.Lock()
	if ix.partEpoch != ix.parts.epoch {
		clear(ix.partCache)
		ix.partEpoch = ix.parts.epoch
	}
	e, ok := ix.partCache[word]
	if ok && e.at == ix.epoch {
		ids, w := e.ids, e.w
		ix.partMu.Unlock()
		return ids, w
	}
	ix.partMu.Unlock()
	var ids []uint32
	if ok {
		ids = e.ids
	} else {
		for _, part := range ix.parts.containing(word) {
			if id, found := ix.kw.lookup(part); found {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids) // the pruned search looks ids up
	}
	t.partial = ids
	w := ix.keywordWeight(t, N)
	ix.partMu.Lock()
	switch {
	case ok:
		e.w, e.at = w, ix.epoch
	case ix.partEpoch == ix.parts.epoch && len(ix.partCache) < maxPartCache:
		// A copy: word is a slice of the query, which the cache
		// would keep alive.
		ix.partCache[strings.Clone(word)] = &partEntry{ids: ids, w: w, at: ix.epoch}
	}
	ix.partMu.Unlock()
	return ids, w
}

// partEntry is a word's entry in the partial-match cache: the ids of the
// name parts containing it, and its weight as a one-word term computed
// in index epoch at.
type partEntry struct {
	ids []uint32
	w   float64
	at  uint64
}

// maxPartCache bounds the partial-match cache.
const maxPartCache = 1 << 14

// boosted finds the documents whose name phrase occurs as consecutive
// whole words of the query: deferred ones by shard slot, core ones apart.
// Only words that start some name phrase open a window.
func (ix *Index) boosted(toks []analysis.Token) (slots [][]int32, core []*doc) {
	ps := &ix.boost
	if ix.cfg.NameBoost <= 0 {
		ps = &ix.coreBoost // deferred documents get no boost
	}
	if len(ps.docs) == 0 {
		return nil, nil
	}
	var words []string
	for _, tok := range toks {
		if tok.CJK {
			words = append(words, "")
			continue
		}
		for _, p := range tok.Parts {
			words = append(words, ix.an.Stem(p))
		}
	}
	var b strings.Builder
	for i, w := range words {
		if ps.first[w] == 0 {
			continue
		}
		b.Reset()
		for j := i; j < len(words) && j < i+ps.maxLen; j++ {
			if words[j] == "" {
				break
			}
			if j > i {
				b.WriteByte(' ')
			}
			b.WriteString(words[j])
			for _, d := range ps.docs[b.String()] {
				if d.core {
					core = append(core, d)
					continue
				}
				if slots == nil {
					slots = make([][]int32, len(ix.shards))
				}
				slots[d.shard] = append(slots[d.shard], d.slot)
			}
		}
	}
	return slots, core
}

// coreMentions returns the core tools a keyword query is about: those whose
// name phrase it contains, or one of whose name parts is a query word.
// Core tools are never ranked, but a frontend should hear that the tool it
// is looking for is already loaded.
func (ix *Index) coreMentions(p *plan, exclude []*doc) []string {
	if len(ix.core) == 0 {
		return nil
	}
	var out []string
	add := func(d *doc) {
		if !slices.Contains(exclude, d) && !slices.Contains(out, d.name) {
			out = append(out, d.name)
		}
	}
	for _, d := range p.boostCore {
		add(d)
	}
	for _, w := range p.kwWords {
		for _, d := range ix.coreParts[w] {
			add(d)
		}
	}
	slices.Sort(out)
	return out
}

// rank scores deferred documents for a compiled query and returns the best
// p.n.
func (ix *Index) rank(p *plan) []Hit {
	if p.n <= 0 || p.noMatch || (len(p.tf) == 0 && len(p.kw) == 0 && p.boost == nil) {
		return nil
	}
	if ix.prunable(p) {
		return ix.rankPruned(p)
	}
	if ix.nDeferred >= parallelMin && len(ix.shards) > 1 {
		tops := make([][]Hit, len(ix.shards))
		var wg sync.WaitGroup
		for i := range ix.shards {
			wg.Go(func() { tops[i] = ix.scoreShard(i, p, 0) })
		}
		wg.Wait()
		var all []Hit
		for _, t := range tops {
			all = append(all, t...)
		}
		slices.SortFunc(all, compareHits)
		return all[:min(p.n, len(all))]
	}
	// One shard after the other, each from the n-th best score of those
	// before: a document under it cannot enter the top.
	var all []Hit
	floor := 0.0
	for i := range ix.shards {
		all = append(all, ix.scoreShard(i, p, floor)...)
		slices.SortFunc(all, compareHits)
		if len(all) >= p.n {
			all = all[:p.n]
			floor = all[p.n-1].Score
		}
	}
	return all
}

func compareHits(a, b Hit) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

// scratch holds one shard search's accumulators, indexed by slot: the
// search adds every posting of the query's terms into them, term at a
// time, then reads the slots it touched (seen) in slot order. Every
// accumulator of a touched slot is zeroed again as it is read.
type scratch struct {
	acc  []slotAcc // by slot
	seen []uint64  // bit per touched slot
	tt   []int32   // slots with bits set
	top  []cand    // the best hits so far

	// parts caches namePartials by word for index epoch partEpoch, its
	// lists in partBuf; it is cleared once it holds two postings a slot
	// (a list's map entry counted as 8).
	parts     map[uint32][]kwPost
	partBuf   []kwPost
	partEpoch uint64

	// Only for the queries that need them, allocated on first use.
	req   []uint64 // required terms matched
	cjk   []uint16 // CJK terms matched
	flags []uint8  // flagASCII, flagBoost
	and   []uint8  // compound-term intersection
	tmp   []uint8
	sums  []float64 // saturated sums not kept (sumBuf)
	mx    []float64 // per text term: its largest saturated sum (weakFrom)
}

// slotAcc holds one slot's accumulators side by side, so that a posting
// of either kind, and the combine, read one cache line of a slot.
type slotAcc struct {
	text float64 // text score: cosine dot product or BM25F sum
	kw   float64 // Σ idf-weighted sqrt(min(points, 16)/16) over keyword terms
	pts  int32   // keyword points
	bits uint8   // the current keyword term's field bits
	// words is the idf summed of the one-word keyword terms whose word
	// the document has (the word score's numerator, blendWords).
	words float64
}

const (
	flagASCII uint8 = 1 << iota
	flagBoost
)

// keywordFull is the number of points that counts as a full match of one
// term: a built-in tool's name part (10), hint (4) and description (2).
const keywordFull = 16

// kwPoints and kwScore are the points of one keyword term matching the
// field bits b of a document (fieldMCP included) and its share of the
// keyword score, sqrt(min(points, 16) / 16).
var kwPoints, kwScore = func() (pts [32]int32, score [32]float64) {
	for b := range pts {
		n := keywordPoints(uint8(b), uint8(b)&fieldMCP != 0)
		pts[b] = int32(n)
		score[b] = math.Sqrt(float64(min(n, keywordFull)) / keywordFull)
	}
	return pts, score
}()

func (sh *shard) getScratch(p *plan) *scratch {
	n := len(sh.docs)
	s, _ := sh.pool.Get().(*scratch)
	if s == nil || len(s.acc) < n {
		c := n + n/4 + 64
		s = &scratch{acc: make([]slotAcc, c), seen: make([]uint64, (c+63)/64)}
	}
	c := len(s.acc)
	if p.reqAll != 0 && s.req == nil {
		s.req = make([]uint64, c)
	}
	if p.cjkTerms > 0 && s.cjk == nil {
		s.cjk = make([]uint16, c)
	}
	if (p.cjkTerms > 0 || p.boost != nil) && s.flags == nil {
		s.flags = make([]uint8, c)
	}
	return s
}

// scoreShard ranks shard i's documents: every posting of the query's text
// terms, then of its keyword terms, is added to its slot's accumulators,
// and the touched slots are combined into hybrid scores, the best p.n
// kept of those scoring floor or more (the n-th best score of the shards
// ranked before, 0 for none).
func (ix *Index) scoreShard(i int, p *plan, floor float64) []Hit {
	sh := ix.shards[i]
	s := sh.getScratch(p)
	defer sh.pool.Put(s)
	acc, seen := s.acc, s.seen
	bm25 := p.scorer == ScorerBM25F
	// Text scores, summed in the plan's term order.
	weak := len(p.tf)
	if ix.nDeferred < ix.pruneFrom && p.weakable(floor) {
		// Each term's largest contribution in this shard, per unit of
		// weight, where the shard keeps it.
		mx := s.mx[:0]
		for _, q := range p.tf {
			m := 1.0
			if e := sh.kept(q.id, ix.epoch); e != nil && e.max >= 0 {
				m = e.max
			}
			mx = append(mx, m)
		}
		s.mx = mx
		weak = p.weakFrom(floor, mx)
	}
	for ti, q := range p.tf {
		l := ix.tfl.get(q.id, sh.idx)
		switch {
		case bm25 && p.cjkTerms == 0:
			if ix.nDeferred >= ix.pruneFrom { // see postx.go
				p.addBM25(s, sh.stat, l, q.qw, s.sumBuf(len(l)))
				continue
			}
			if j := p.pairs[ti]; j >= 0 {
				t := &p.kw[j]
				x, pl := ix.paired(sh, s, p, q.id, l, t)
				if ti < weak {
					addPair(s, l, x, pl, q.qw, t.w, t.wordIDF)
				} else {
					addPairSeen(s, l, x, pl, q.qw, t.w, t.wordIDF)
				}
				continue
			}
			x, ok := sh.sums(q.id, len(l), ix.epoch)
			switch {
			case ok && ti < weak:
				addX(s, l, x, q.qw)
			case ok:
				addXSeen(s, l, x, q.qw)
			case ti < weak:
				m := p.addBM25(s, sh.stat, l, q.qw, x)
				sh.keep(q.id, &xList{epoch: ix.epoch, sat: x, max: m}, len(ix.tfl))
			default:
				m := p.saturatedSums(sh.stat, l, x)
				sh.keep(q.id, &xList{epoch: ix.epoch, sat: x, max: m}, len(ix.tfl))
				addXSeen(s, l, x, q.qw)
			}
		default:
			for _, post := range l {
				slot := post.slot
				st := &sh.stat[slot]
				if bm25 {
					acc[slot].text += p.bm25(post.tf, st, q.qw)
				} else {
					acc[slot].text += q.qw * cosWeight(post.tf, st, &p.fw)
				}
				seen[slot>>6] |= 1 << (slot & 63)
				if p.cjkTerms == 0 {
					continue
				}
				if q.cjk {
					s.cjk[slot]++
				} else {
					s.flags[slot] |= flagASCII
				}
			}
		}
	}
	if p.boost != nil {
		for _, slot := range p.boost[i] {
			seen[slot>>6] |= 1 << (slot & 63)
			s.flags[slot] |= flagBoost
		}
	}
	// Keyword scores, term by term.
	for _, t := range p.kw {
		if t.text >= 0 && ix.nDeferred < ix.pruneFrom {
			continue // scored with its text term (pairs.go)
		}
		if t.single() {
			ix.oneWord(sh, s, &t)
			continue
		}
		ix.keywordTerm(sh, s, t)
		for _, slot := range s.tt {
			a := &acc[slot]
			b := a.bits
			a.bits = 0
			if b&^fieldMCP == 0 {
				continue
			}
			a.kw += kwScore[b] * t.w
			a.pts += kwPoints[b]
			if b&(fieldName|fieldHint|fieldDesc) != 0 {
				a.words += t.wordIDF
			}
			seen[slot>>6] |= 1 << (slot & 63)
			if t.bit != 0 {
				s.req[slot] |= t.bit
			}
		}
		s.tt = s.tt[:0]
	}
	top := ix.combine(sh, s, p, floor)
	hits := make([]Hit, len(top))
	for i, c := range top {
		hits[i] = Hit{Name: sh.docs[c.slot].name, Score: c.score, Keyword: c.kw, TFIDF: c.cos, Points: int(c.pts),
			words: p.wordScore(c.words, &sh.stat[c.slot])}
	}
	s.top = top[:0]
	return hits
}

// weakFrom returns the first of p's text terms from which on no document
// the terms before have not reached can score floor or more: whatever the
// terms from there and every keyword term not paired with an earlier text
// term add, at most a text term's weight times mx (its list's largest
// saturated sum, 1 when not known) and a keyword term's weight, it stays
// under floor (bound). The search adds those terms to the documents
// already reached only, and so reaches fewer. It returns len(p.tf) when no
// term is so weak; the caller asks only when weakable.
func (p *plan) weakFrom(floor float64, mx []float64) int {
	n := len(p.tf)
	var k float64 // the keyword terms scored after the text terms
	for _, t := range p.kw {
		if t.text < 0 {
			k += t.w
		}
	}
	var r float64
	for i := n - 1; i >= 0; i-- {
		r += p.tf[i].qw * mx[i]
		if j := p.pairs[i]; j >= 0 {
			k += p.kw[j].w
		}
		if p.bound(r, k) >= floor {
			return i + 1
		}
	}
	return 0
}

// weakable reports whether weakFrom may find weak terms: a floor, BM25F,
// no required, CJK or name-boosted terms.
func (p *plan) weakable(floor float64) bool {
	return floor > 0 && p.scorer == ScorerBM25F && p.cjkTerms == 0 && p.reqAll == 0 && p.boost == nil && p.ideal > 0
}

// combine reads the slots scoreShard touched, in slot order, into the
// best p.n of those scoring floor or more, clearing their accumulators.
// Once the top is full, a document whose score cannot reach its last is
// skipped before its score is computed (see skip); the few that are not
// are scored by consider. A function of its own, so that the loop keeps
// its values in registers.
func (ix *Index) combine(sh *shard, s *scratch, p *plan, floor float64) []cand {
	top := s.top[:0]
	var sk skipper
	if floor > 0 {
		sk = p.skipper(floor)
	}
	acc, seen := s.acc, s.seen
	// The optional accumulators are zero unless this query uses them
	// (every slot it sets is touched, so read and cleared here).
	opt := p.reqAll != 0 || p.cjkTerms > 0 || p.boost != nil
	for wi := range (len(sh.docs) + 63) / 64 {
		w := seen[wi]
		if w == 0 {
			continue
		}
		seen[wi] = 0
		for ; w != 0; w &= w - 1 {
			slot := wi<<6 | bits.TrailingZeros64(w)
			sa := &acc[slot]
			v := *sa
			*sa = slotAcc{}
			var o slotOpt
			if opt {
				o = s.takeOpt(p, slot)
			}
			if sk.skip(v.text, v.kw) && o.flags&flagBoost == 0 || o.req&p.reqAll != p.reqAll || sh.isDead(uint32(slot)) {
				continue
			}
			if c, ok := ix.consider(sh, p, uint32(slot), v, o, floor, top); ok {
				top = sh.insertCand(top, c, p.n)
				if len(top) == p.n {
					sk = p.skipper(top[p.n-1].score)
				}
			}
		}
	}
	return top
}

// slotOpt holds a slot's optional accumulators.
type slotOpt struct {
	req   uint64 // required terms matched
	cjk   uint16 // CJK terms matched
	flags uint8  // flagASCII, flagBoost
}

// takeOpt reads and clears the optional accumulators of slot that p uses.
func (s *scratch) takeOpt(p *plan, slot int) slotOpt {
	var o slotOpt
	if p.reqAll != 0 {
		o.req, s.req[slot] = s.req[slot], 0
	}
	if p.cjkTerms > 0 {
		o.cjk, s.cjk[slot] = s.cjk[slot], 0
	}
	if p.cjkTerms > 0 || p.boost != nil {
		o.flags, s.flags[slot] = s.flags[slot], 0
	}
	return o
}

// consider computes the hybrid score of the document in slot from its
// accumulators v and o, and returns it unless it scores under floor or
// under the last of a full top, or the search hides it.
func (ix *Index) consider(sh *shard, p *plan, slot uint32, v slotAcc, o slotOpt, floor float64, top []cand) (cand, bool) {
	var cos float64
	if a := v.text; a > 0 {
		switch {
		case p.scorer == ScorerBM25F && p.ideal > 0:
			// The fraction of the ideal score, square-rooted to
			// spread the low range where long queries land.
			cos = math.Sqrt(min(a/p.ideal, 1))
		case p.scorer != ScorerBM25F && p.qnorm > 0:
			if dn := ix.norm(sh, int32(slot)); dn > 0 {
				cos = a / (p.qnorm * dn)
			}
		}
		if p.cjkTerms > 0 && o.flags&flagASCII == 0 && int(o.cjk) < min(2, p.cjkTerms) {
			cos = 0
		}
	}
	if o.flags&flagBoost != 0 && p.boostMin > 0 {
		cos = max(cos, p.boostMin)
	}
	if cos < p.minTF {
		cos = 0
	}
	var kw float64
	if p.kwTotal > 0 {
		kw = v.kw / p.kwTotal
	}
	score := p.wk*kw + p.wt*cos
	if score <= 0 || score < floor || len(top) == p.n && score < top[p.n-1].score {
		return cand{}, false
	}
	if p.exclude != nil || p.allow != nil {
		d := sh.docs[slot]
		if p.exclude[d] || p.allow != nil && !p.allow(d.name) {
			return cand{}, false
		}
	}
	return cand{score: score, kw: kw, cos: cos, words: v.words, pts: v.pts, slot: slot}, true
}

// addBM25 adds the BM25F contributions of a term (qw = count × idf) with
// postings l into the text sums of acc, marking their slots seen, and
// writes each posting's saturated field sum into xs (postx.go), returning
// the largest: p.bm25,
// inlined for the lengths in the table. In a function of its own the loop
// keeps its values in registers (in scoreShard they were spilled), and
// the postings and lengths are read in place (arrays are never held in
// registers).
func (p *plan) addBM25(s *scratch, stat []docStat, l []tfPost, qw float64, xs []float64) (largest float64) {
	const m = normLens - 1
	acc, seen := s.acc, s.seen
	xs = xs[:len(l)]
	n, k1 := p.norm, p.k1
	f := &n.f
	for i := range l {
		post := &l[i]
		slot := post.slot
		st := &stat[slot]
		ln, tf := &st.flen, &post.tf
		var x float64
		if ln[0]|ln[1]|ln[2]|ln[3] < normLens {
			x = float64(tf[0])*f[0][ln[0]&m] + float64(tf[1])*f[1][ln[1]&m] +
				float64(tf[2])*f[2][ln[2]&m] + float64(tf[3])*f[3][ln[3]&m]
		} else {
			x = float64(tf[0])*n.factor(0, ln[0]) + float64(tf[1])*n.factor(1, ln[1]) +
				float64(tf[2])*n.factor(2, ln[2]) + float64(tf[3])*n.factor(3, ln[3])
		}
		sat := x / (k1 + x)
		xs[i] = sat
		largest = max(largest, sat)
		acc[slot].text += qw * sat
		seen[slot>>6] |= 1 << (slot & 63)
	}
	return largest
}

// cand is a hit of one shard's exhaustive search before its name is read:
// without pointers, so that keeping the top costs no write barriers and
// no document is dereferenced but to break a tie.
type cand struct {
	score, kw, cos, words float64
	pts                   int32
	slot                  uint32
}

// insertCand keeps top sorted best first (by score, then name, as
// compareHits) and at most n long.
func (sh *shard) insertCand(top []cand, c cand, n int) []cand {
	before := func(a, b cand) bool {
		return a.score > b.score || a.score == b.score && sh.docs[a.slot].name < sh.docs[b.slot].name
	}
	if len(top) == n && !before(c, top[n-1]) {
		return top
	}
	if len(top) < n {
		top = append(top, cand{})
	}
	i := len(top) - 1
	for ; i > 0 && before(c, top[i-1]); i-- {
		top[i] = top[i-1]
	}
	top[i] = c
	return top
}

// skipper tells, from a document's text sum a and keyword sum k alone,
// that its BM25F hybrid score is under th, the score of the last of a
// full top: wt × sqrt(min(a / ideal, 1)) + wk × k / known < th holds when
// r = th − wk × k / known is positive and a < ideal × (r / wt)², with a
// margin of rounding so that a document that might tie is scored. It
// spares the square root and divisions of most documents; the cosine
// scorer and name-boosted documents are never skipped.
type skipper struct {
	th, kwf, a2 float64 // th less the margin; a2 = ideal / wt² less the margin
}

// skipMargin covers the rounding of the score and of the test.
const skipMargin = 1e-9

func (p *plan) skipper(th float64) skipper {
	if p.scorer != ScorerBM25F || p.ideal <= 0 {
		return skipper{} // r is never positive
	}
	sk := skipper{th: th - skipMargin}
	if p.kwTotal > 0 {
		sk.kwf = p.wk / p.kwTotal
	}
	if p.wt > 0 {
		sk.a2 = p.ideal / (p.wt * p.wt) * (1 - skipMargin)
	}
	return sk
}

// skip reports that a document with sums a and k scores under the
// threshold; a name-boosted document is never skipped (its caller tests
// that).
func (sk *skipper) skip(a, k float64) bool {
	r := sk.th - sk.kwf*k
	return r > 0 && a < sk.a2*r*r
}

// keywordTerm sets s.bits[slot] to the field bits one term matches in each
// document (with fieldMCP), listing the documents in s.tt.
func (ix *Index) keywordTerm(sh *shard, s *scratch, t kwTerm) {
	mark := func(slot uint32, bits uint8) {
		if bits&^fieldMCP == 0 {
			return
		}
		if s.acc[slot].bits == 0 {
			s.tt = append(s.tt, int32(slot))
		}
		s.acc[slot].bits |= bits
	}
	postings := func(id uint32) []kwPost {
		return ix.kwl.get(id, sh.idx)
	}
	switch {
	case len(t.words) == 1:
		for _, post := range postings(t.words[0]) {
			mark(post.docSlot(), post.low())
		}
	case len(t.words) > 1:
		// Every word must match the same field. Identifier terms
		// (send_message) match name parts so, and descriptions whole.
		if s.and == nil {
			s.and, s.tmp = make([]uint8, len(s.acc)), make([]uint8, len(s.acc))
		}
		keep := uint8(0xff)
		if t.identifier {
			keep = fieldName | fieldMCP
		}
		first := postings(t.words[0])
		for _, post := range first {
			s.and[post.docSlot()] = post.low() & keep
		}
		for _, id := range t.words[1:] {
			l := postings(id) // one list lookup for both passes
			for _, post := range l {
				s.tmp[post.docSlot()] = post.low()
			}
			for _, post := range first {
				s.and[post.docSlot()] &= s.tmp[post.docSlot()]
			}
			for _, post := range l {
				s.tmp[post.docSlot()] = 0
			}
		}
		for _, post := range first {
			mark(post.docSlot(), s.and[post.docSlot()])
			s.and[post.docSlot()] = 0
		}
	}
	if t.whole >= 0 {
		for _, post := range postings(uint32(t.whole)) {
			mark(post.docSlot(), post.low()&(fieldHint|fieldDesc|fieldMCP))
		}
	}
	ix.markPartial(sh, s, t.partial)
}

// oneWord adds the keyword score of a one-word term (neither required nor
// an identifier) to the slots its word's postings and its partial name
// matches (namePartials) reach: both lists are sorted by slot, so one
// merge scores each document once, with the fields of both.
func (ix *Index) oneWord(sh *shard, s *scratch, t *kwTerm) {
	acc, seen := s.acc, s.seen
	w, idf := t.w, t.wordIDF
	parts := s.namePartials(ix, sh, t)
	j := 0
	// partial scores a document that only a name part matches.
	partial := func(pp kwPost) {
		slot := pp.docSlot()
		b := fieldPartial | pp.low()
		a := &acc[slot]
		a.kw += kwScore[b] * w
		a.pts += kwPoints[b]
		seen[slot>>6] |= 1 << (slot & 63)
	}
	for _, post := range ix.kwl.get(t.words[0], sh.idx) {
		slot := post.docSlot()
		b := post.low()
		for j < len(parts) && parts[j].docSlot() < slot {
			partial(parts[j])
			j++
		}
		if j < len(parts) && parts[j].docSlot() == slot {
			b |= fieldPartial
			j++
		}
		a := &acc[slot]
		a.kw += kwScore[b] * w
		a.pts += kwPoints[b]
		a.words += idf
		seen[slot>>6] |= 1 << (slot & 63)
	}
	for ; j < len(parts); j++ {
		partial(parts[j])
	}
}

// namePartials returns the documents of shard sh one of whose name parts
// is among t.partial (those containing t's word), sorted by slot, each
// once and with fieldMCP for an MCP tool. They are cached by word until
// the index changes: merging the parts' lists is the costly part.
func (s *scratch) namePartials(ix *Index, sh *shard, t *kwTerm) []kwPost {
	if len(t.partial) == 0 {
		return nil
	}
	if s.partEpoch != ix.epoch || len(s.partBuf)+8*len(s.parts) > 2*len(s.acc) {
		clear(s.parts)
		s.partEpoch, s.partBuf = ix.epoch, s.partBuf[:0]
	}
	word := t.words[0]
	if l, ok := s.parts[word]; ok {
		return l
	}
	// Appended to partBuf, which lists later words' after it (a list
	// is never written again once made).
	from := len(s.partBuf)
	for _, id := range t.partial {
		for _, post := range ix.kwl.get(id, sh.idx) {
			if post.mask()&fieldName != 0 {
				s.partBuf = append(s.partBuf, post&^(1<<kwMaskBits-1)) // slot and fieldMCP
			}
		}
	}
	l := s.partBuf[from:]
	if len(t.partial) > 1 { // one list is sorted, each slot once
		slices.Sort(l)
		l = slices.Compact(l)
		s.partBuf = s.partBuf[:from+len(l)]
	}
	l = slices.Clip(l)
	if s.parts == nil {
		s.parts = make(map[uint32][]kwPost)
	}
	s.parts[word] = l
	return l
}

// markPartial adds fieldPartial (with fieldMCP) to s.bits of the
// documents one of whose name parts is among ids, listing in s.tt those
// it sets first.
func (ix *Index) markPartial(sh *shard, s *scratch, ids []uint32) {
	for _, id := range ids {
		for _, post := range ix.kwl.get(id, sh.idx) {
			if post.mask()&fieldName == 0 {
				continue
			}
			slot := post.docSlot()
			if s.acc[slot].bits == 0 {
				s.tt = append(s.tt, int32(slot))
			}
			s.acc[slot].bits |= fieldPartial | post.low()&fieldMCP
		}
	}
}

// norm returns the cosine vector length of the document in slot under the
// current statistics, computed at most once per index epoch. Concurrent
// searches may compute it twice; they store the same value. The length is
// stored before its epoch, so a reader that sees the epoch sees the length.
func (ix *Index) norm(sh *shard, slot int32) float64 {
	if atomic.LoadUint64(&sh.normEp[slot]) == ix.epoch {
		return math.Float64frombits(atomic.LoadUint64(&sh.norm[slot]))
	}
	fw := [nFields]float64{ix.cfg.NameWeight, ix.cfg.HintWeight, ix.cfg.DescWeight, ix.cfg.ParamWeight}
	N := float64(ix.nDeferred)
	var sum float64
	_, terms := ix.readers(sh.docs[slot])
	for id, tf, ok := terms.next(); ok; id, tf, ok = terms.next() {
		w := cosWeight(tf, &sh.stat[slot], &fw) * math.Log(N/float64(ix.tf.df[id]))
		sum += w * w
	}
	n := math.Sqrt(sum)
	atomic.StoreUint64(&sh.norm[slot], math.Float64bits(n))
	atomic.StoreUint64(&sh.normEp[slot], ix.epoch)
	return n
}

// cosWeight is a term's weight for the spec's cosine: the largest of
// count / max(count) × field weight over the fields.
func cosWeight(tf tfs, st *docStat, fw *[nFields]float64) float64 {
	var w float64
	for f, c := range tf {
		if c != 0 && fw[f] > 0 {
			w = max(w, float64(c)/float64(st.fmax[f])*fw[f])
		}
	}
	return w
}

// queryTermWeight is the BM25F weight of a term written c times in the
// query: c saturated with k3, or c itself when k3 is negative.
func queryTermWeight(c int32, k3 float64) float64 {
	if k3 < 0 {
		return float64(c)
	}
	return float64(c) * (k3 + 1) / (float64(c) + k3)
}

// insertTop keeps top sorted best first and at most n long.
func insertTop(top []Hit, h Hit, n int) []Hit {
	if len(top) == n && compareHits(h, top[n-1]) >= 0 {
		return top
	}
	i, _ := slices.BinarySearchFunc(top, h, compareHits)
	if len(top) < n {
		top = append(top, Hit{})
	}
	copy(top[i+1:], top[i:])
	top[i] = h
	return top
}

// bm25 is the BM25F contribution of one query term (qw = count × idf) to
// a document with field counts tf and statistics st: qw × its saturated
// field sum (saturated). The index and the tests' reference scorer both
// call it.
func (p *plan) bm25(tf tfs, st *docStat, qw float64) float64 {
	return qw * p.saturated(tf, st)
}

// saturated is BM25F's saturated field sum x / (k1 + x) of a posting
// (x from fieldSum), the term's contribution per unit of weight: what
// searches keep of a list (postx.go).
func (p *plan) saturated(tf tfs, st *docStat) float64 {
	x := p.fieldSum(tf, st)
	return x / (p.k1 + x)
}

// fieldSum is BM25F's field sum x of a posting with field counts tf in a
// document with statistics st: its field counts times their factors,
// summed. (addBM25 inlines it.)
func (p *plan) fieldSum(tf tfs, st *docStat) float64 {
	n := p.norm
	l := &st.flen
	var x float64
	if l[0]|l[1]|l[2]|l[3] < normLens {
		x = float64(tf[0])*n.f[0][l[0]] + float64(tf[1])*n.f[1][l[1]] +
			float64(tf[2])*n.f[2][l[2]] + float64(tf[3])*n.f[3][l[3]]
	} else {
		for f, c := range tf {
			x += float64(c) * n.factor(f, l[f])
		}
	}
	return x
}

// lenNorm holds BM25F's field factors fw[f] / (b1 + bl[f] × length) of
// the lengths under normLens, by field, for the statistics of one index
// epoch. Computing them once per epoch spares a division per field and
// posting; a search looks them up (Index.lenNorm).
type lenNorm struct {
	epoch  uint64
	fw, bl [nFields]float64
	b1     float64
	f      [nFields][normLens]float64
}

// normLens bounds the lengths held: longer fields (descriptions of
// hundreds of words) are rare and computed when met. It is a power of
// two, so that one test finds four lengths under it.
const normLens = 512

func (n *lenNorm) factor(f int, l uint16) float64 {
	if int(l) < normLens {
		return n.f[f][l]
	}
	return n.fw[f] / (n.b1 + n.bl[f]*float64(l))
}

// lenNorm returns the factors of p's statistics, computing them when the
// index changed since they were last. Concurrent searches may compute
// them twice; they store the same values.
func (ix *Index) lenNorm(p *plan) *lenNorm {
	if n := ix.norms.Load(); n != nil && n.epoch == ix.epoch {
		return n
	}
	n := &lenNorm{epoch: ix.epoch, fw: p.fw, bl: p.bl, b1: p.b1}
	for f := range n.f {
		// Length 0 holds no term: its factor is never used.
		for l := 1; l < normLens; l++ {
			n.f[f][l] = n.fw[f] / (n.b1 + n.bl[f]*float64(l))
		}
	}
	ix.norms.Store(n)
	return n
}

// keywordPoints are the points of one keyword term matching fields bits of
// a document.
func keywordPoints(bits uint8, mcp bool) int {
	pts := 0
	switch {
	case bits&fieldName != 0:
		pts += pick(mcp, 12, 10)
	case bits&fieldPartial != 0:
		pts += pick(mcp, 6, 5)
	}
	if bits&fieldHint != 0 {
		pts += 4
	}
	if bits&fieldDesc != 0 {
		pts += 2
	}
	return pts
}

func pick(c bool, a, b int) int {
	if c {
		return a
	}
	return b
}

func isCJKTerm(t string) bool {
	for _, r := range t {
		return r >= 0x2E80
	}
	return false
}
