package index

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// Dynamic pruning (MaxScore) for the BM25F scorer.
//
// The hybrid score wk × keyword + wt × text is monotone in every query
// term's BM25F contribution and in every keyword term's score. A text term
// contributes at most the largest contribution of its posting list in the
// shard (less than its weight qw = count × idf, x / (k1 + x) < 1; see
// textLists) and a keyword term at most its weight w to the keyword sum,
// so a document whose text contributions sum to at most R and whose
// keyword terms' weighted scores sum to at most K scores at most bound(R,
// K) = wk × K / total + wt × sqrt(min(1, R / ideal)), total being the sum
// of the keyword terms' weights. Terms are taken as non-essential, text
// terms by ascending weight (not by bound: the sums' order below) and
// keyword terms by descending posting count, while the bound of all of
// them together stays under the current n-th best score θ: a document
// found only in their lists cannot enter the top n, so only the lists of
// the essential terms are scanned.
//
// They are scanned term at a time in windows of slots (the lists are
// sorted by slot), adding the essential text contributions and bounding
// each essential keyword term by the fields its postings name, list by
// list (a document in two lists of a term gets both bounds). Each
// document seen is checked against the bound, then looked up in the
// non-essential text lists (galloping forward) while the bound stays at
// or above θ, then against the non-essential keyword terms (their lists
// are scanned per window into the bounds of the documents seen when they
// are short against them, looked up per document otherwise, and the
// longest of those to scan, an eighth of their weight, bound every
// document by their weights). The text contributions are so added by
// descending weight, essential terms first; the exhaustive search adds
// them in the same order (compile sorts the terms so), so the sums agree
// to the bit. The survivors of a window are finished best bound first:
// the keyword score is computed for them alone, from the document's own
// word list, until the bound falls under θ.
//
// Queries with required terms, CJK terms or a name boost, keyword-only
// searches and the cosine scorer run exhaustively.

const (
	// boundSlack inflates bounds so that rounding never makes one smaller
	// than the score it bounds.
	boundSlack = 1e-9
	// Window sizes of the term-at-a-time scan: small at first, while θ is
	// still rising, then growing.
	minWindow = 256
	maxWindow = 4096
)

// pruneQuery is the query-wide part of a pruned search, shared by the
// shards.
type pruneQuery struct {
	order []int // text term indices by weight, ascending
	// pre holds each shard's bounds of the text terms: for shard i,
	// pre[i*(len(order)+1)+k] is the sum of the largest contributions of
	// the shard's lists of the first k terms of order (shardRun.pre).
	pre   []float64
	kw    *kwQuery
	theta atomic.Uint64
}

// pruneStats counts pruned searches and their work (tests and
// benchmarks): text postings scored in windows, keyword postings marked,
// documents seen, candidates and candidates finished.
type pruneStats struct {
	pruned                           atomic.Int64
	text, keyword, seen, cand, final atomic.Int64
}

// kwList is one posting list of a keyword term: a posting can match the
// term in the fields mask & need, or in the name as a partial match when
// partial is set.
type kwList struct {
	list    []kwPost
	need    uint8
	partial bool
	pos     int
}

type pruneScratch struct {
	acc   [maxWindow]float64
	pmask [maxWindow]uint64  // looked-up keyword terms matching partially
	pt    []int32            // slots with pmask set
	kwub  [maxWindow]float64 // bound on the scanned keyword terms' sum, of slots seen
	scan  []uint8            // per non-essential keyword term: kwScan, kwLook or kwFree
	seen  [maxWindow / 64]uint64
	lists [][]tfPost
	win   []int // per text term: the next posting of the window scan
	cur   []int // per text term: the lookup cursor
	kl    []kwList
	cand  []candidate
	kbits []uint8 // per keyword term
	masks []uint8 // per kwQuery id
	kfrom []int   // keyword term j's lists are kl[kfrom[j]:kfrom[j+1]],
	kpart []int   // its partial lists kl[kpart[j]:kfrom[j+1]]
	kord  []int   // keyword terms by posting count, descending
	kvol  []int
	tmax  []float64   // per text term: its list's largest x / (k1 + x)
	xs    [][]float64 // per text term: its list's saturated sums, or nil
}

// pruneMin is the number of deferred documents from which searches run
// pruned: below it scoring every posting is faster than the pruning's
// bookkeeping (measured at 10k and 100k tools, docs/BENCHMARKS.md).
const pruneMin = 32768

// prunable reports whether the plan can run pruned.
func (ix *Index) prunable(p *plan) bool {
	return !ix.exhaustive && ix.nDeferred >= ix.pruneFrom && p.scorer == ScorerBM25F && p.wt > 0 && len(p.tf) > 0 && p.ideal > 0 &&
		p.reqAll == 0 && p.cjkTerms == 0 && (p.boost == nil || p.boostMin <= 0)
}

// rankPruned ranks with dynamic pruning.
func (ix *Index) rankPruned(p *plan) []Hit {
	nt := len(p.tf)
	// p.tf is sorted by descending weight: order is its reverse.
	q := &p.pq
	q.order = slices.Grow(q.order[:0], nt)[:nt]
	np := len(ix.shards) * (nt + 1)
	q.pre = slices.Grow(q.pre[:0], np)[:np]
	p.kq.build(p.kw)
	q.kw = &p.kq
	for i := range q.order {
		q.order[i] = nt - 1 - i
	}
	tops := make([][]Hit, len(ix.shards))
	if ix.nDeferred >= parallelMin && len(ix.shards) > 1 {
		var wg sync.WaitGroup
		for i := range ix.shards {
			wg.Go(func() { tops[i] = ix.pruneShard(i, p, q) })
		}
		wg.Wait()
	} else {
		for i := range ix.shards {
			tops[i] = ix.pruneShard(i, p, q)
		}
	}
	all := make([]Hit, 0, len(tops)*p.n)
	for _, t := range tops {
		all = append(all, t...)
	}
	slices.SortFunc(all, compareHits)
	if ix.pruneStats != nil {
		ix.pruneStats.pruned.Add(1)
	}
	return all[:min(p.n, len(all))]
}

// bound is the highest score of a document whose text contributions sum
// to at most r and whose keyword terms' scores sum to at most k.
func (p *plan) bound(r, k float64) float64 {
	t := math.Sqrt(min(1, r*(1+boundSlack)/p.ideal))
	if t < p.minTF {
		t = 0
	}
	var kw float64
	if p.kwTotal > 0 {
		kw = min(k, p.kwTotal) / p.kwTotal
	}
	return (p.wk*kw + p.wt*t) * (1 + boundSlack)
}

// limiter turns the threshold th into text sums: under lim(m) a document
// whose keyword terms' scores sum to at most m scores under th, that is,
// r < lim(m) implies bound(r, m) < th, with a margin for rounding.
type limiter struct {
	a, kw, known, minTF, ideal float64
}

func (p *plan) limiter(th float64) limiter {
	l := limiter{a: (th/(1+boundSlack)*(1-boundSlack) - 1e-12) / p.wt, minTF: p.minTF,
		ideal: p.ideal / (1 + boundSlack) * (1 - boundSlack)}
	if p.kwTotal > 0 {
		l.kw, l.known = p.wk/p.kwTotal*(1-boundSlack)/p.wt, p.kwTotal
	}
	return l
}

func (l *limiter) lim(m float64) float64 {
	// The text score must stay under u.
	u := l.a - l.kw*min(m, l.known)
	if u <= 0 {
		return negInf
	}
	// Text scores under minTF count 0, which is under u.
	u = max(u, l.minTF)
	if u > 1 {
		return posInf
	}
	return u * u * l.ideal
}

var negInf, posInf = math.Inf(-1), math.Inf(1)

// keywordBound bounds the score of one keyword term matching fields bits
// (MCP names score the most).
func keywordBound(bits uint8) float64 {
	return keywordBounds[bits&(fieldName|fieldHint|fieldDesc|fieldPartial)]
}

var keywordBounds = func() (t [32]float64) {
	for b := range t {
		t[b] = math.Sqrt(float64(min(keywordPoints(uint8(b), true), keywordFull)) / keywordFull)
	}
	return t
}()

// pruneShard runs the pruned search over shard i, window by window, and
// returns its top hits.
func (ix *Index) pruneShard(i int, p *plan, q *pruneQuery) []Hit {
	sc, _ := ix.prune.Get().(*pruneScratch)
	if sc == nil {
		sc = &pruneScratch{}
	}
	defer ix.prune.Put(sc)
	nt := len(p.tf)
	r := &shardRun{ix: ix, sh: ix.shards[i], p: p, q: q, sc: sc, st: ix.pruneStats, pre: q.pre[i*(nt+1) : (i+1)*(nt+1)]}
	r.openLists()
	r.top = make([]Hit, 0, p.n)
	nslots := len(r.sh.docs)
	w := minWindow
	for lo := 0; lo < nslots; lo += w {
		w = min(2*w, maxWindow)
		r.th = r.theta()
		if !r.splitTerms() {
			break // no document left can enter
		}
		hi := min(lo+w, nslots)
		r.scoreEssentialText(lo, hi)
		r.boundEssentialKeywords(lo, hi)
		nseen := sc.countSeen(lo, hi)
		seekW, freeW := r.scanNonEssentialKeywords(lo, hi, nseen)
		r.markPartialNames(lo, hi)
		if r.st != nil {
			r.st.seen.Add(int64(nseen))
		}
		r.collectCandidates(lo, hi, seekW, freeW)
		sc.clearPartialNames()
		r.finishSurvivors()
	}
	return r.top
}

// shardRun is the state of one shard's pruned search: the query, the
// shard's posting lists (in the scratch), the top hits so far, the
// threshold θ and how many terms are non-essential.
type shardRun struct {
	ix *Index
	sh *shard
	p  *plan
	q  *pruneQuery
	sc *pruneScratch
	st *pruneStats

	// pre[k] bounds the text contributions of the first k terms of
	// q.order: the sum of their lists' largest contributions.
	pre      []float64
	top      []Hit
	th       float64
	net, nek int     // non-essential terms: q.order[:net], sc.kord[:nek]
	nekW     float64 // the weights of sc.kord[:nek] summed
}

// openLists loads the shard's posting lists of the query's text terms and
// keyword terms into the scratch, bounds the text terms (r.pre), and
// orders the keyword terms by descending posting count (the order they
// become non-essential in).
func (r *shardRun) openLists() {
	sc, sh, ix := r.sc, r.sh, r.ix
	sc.lists, sc.win, sc.cur = sc.lists[:0], sc.win[:0], sc.cur[:0]
	for _, t := range r.p.tf {
		sc.lists = append(sc.lists, ix.tfl.get(t.id, sh.idx))
		sc.win = append(sc.win, 0)
		sc.cur = append(sc.cur, 0)
	}
	nt := len(r.p.tf)
	sc.tmax = slices.Grow(sc.tmax[:0], nt)[:nt]
	sc.xs = slices.Grow(sc.xs[:0], nt)[:nt]
	ix.textLists(r.p, sh, sc.lists, sc.tmax, sc.xs)
	r.pre[0] = 0
	for k, ti := range r.q.order {
		r.pre[k+1] = r.pre[k] + r.p.tf[ti].qw*sc.tmax[ti]
	}
	// Keyword terms: the lists a matching document is in.
	sc.kl, sc.kfrom, sc.kpart, sc.kord, sc.kvol = sc.kl[:0], sc.kfrom[:0], sc.kpart[:0], sc.kord[:0], sc.kvol[:0]
	addKw := func(id uint32, need uint8) int {
		l := ix.kwl.get(id, sh.idx)
		if len(l) > 0 {
			sc.kl = append(sc.kl, kwList{list: l, need: need, partial: need == fieldPartial})
		}
		return len(l)
	}
	for j, t := range r.p.kw {
		sc.kfrom = append(sc.kfrom, len(sc.kl))
		vol := 0
		switch {
		case len(t.words) == 1:
			vol += addKw(t.words[0], 0xff)
		case len(t.words) > 1:
			vol += addKw(t.words[0], pick8(t.identifier, fieldName, 0xff))
		}
		if t.whole >= 0 {
			vol += addKw(uint32(t.whole), fieldHint|fieldDesc)
		}
		sc.kpart = append(sc.kpart, len(sc.kl))
		for _, id := range t.partial {
			vol += addKw(id, fieldPartial)
		}
		sc.kord = append(sc.kord, j)
		sc.kvol = append(sc.kvol, vol)
	}
	sc.kfrom = append(sc.kfrom, len(sc.kl))
	slices.SortStableFunc(sc.kord, func(a, b int) int { return cmp.Compare(sc.kvol[b], sc.kvol[a]) })
}

// xDensity bounds the lists that keep their saturated sums for the pruned
// search: at most one posting in xDensity slots of the shard.
const xDensity = 8

// textLists sets top[i] to the largest x / (k1 + x) of lists[i], shard
// sh's postings of the text term p.tf[i], and xs[i] to its saturated sums
// when kept (else nil), from what the shard keeps for the current epoch
// (postx.go), computing and keeping what is missing. The largest
// contribution bounds a term more tightly than its weight (x / (k1 + x) <
// 1), so that terms become non-essential sooner and fewer documents are
// seen; it is computed when a search first reads the list in the epoch.
// The sums are kept for lists of at most one posting in xDensity slots,
// from the second search that reads them in the epoch: the window scan
// reads them in posting order instead of each slot's lengths and their
// factors. A list read once per epoch (an index updated between searches)
// or denser (its terms are the common ones, non-essential once θ rises)
// keeps none. The caller holds the read lock.
func (ix *Index) textLists(p *plan, sh *shard, lists [][]tfPost, top []float64, xs [][]float64) {
	for i, l := range lists {
		id := p.tf[i].id
		e := sh.kept(id, ix.epoch)
		switch {
		case e == nil || e.max < 0:
			var m float64
			for j := range l {
				m = math.Max(m, p.bm25(l[j].tf, &sh.stat[l[j].slot], 1))
			}
			top[i], xs[i] = m, nil
			sh.keep(id, &xList{epoch: ix.epoch, max: m}, len(ix.tfl))
		case e.sat == nil && len(l) > 0 && len(l)*xDensity <= len(sh.docs):
			x := make([]float64, len(l))
			p.saturatedSums(sh.stat, l, x)
			top[i], xs[i] = e.max, x
			sh.keep(id, &xList{epoch: ix.epoch, sat: x, max: e.max}, len(ix.tfl))
		default:
			top[i], xs[i] = e.max, e.sat
		}
	}
}

// theta is the current n-th best score: the best of the one the shards
// published and this shard's own n-th hit.
func (r *shardRun) theta() float64 {
	th := math.Float64frombits(r.q.theta.Load())
	if len(r.top) == r.p.n {
		th = max(th, r.top[r.p.n-1].Score)
	}
	return th
}

// splitTerms makes terms non-essential while the bound of all of them
// stays under θ (text terms by ascending weight, keyword terms by
// descending posting count, the longer list first), and reports whether
// any term is left essential (if none is, no document left can enter).
func (r *shardRun) splitTerms() bool {
	p, pre, order, sc := r.p, r.pre, r.q.order, r.sc
	nt, nk := len(p.tf), len(p.kw)
	for {
		canT := r.net < nt && p.bound(pre[r.net+1], r.nekW) < r.th
		canK := r.nek < nk && p.bound(pre[r.net], r.nekW+p.kw[sc.kord[r.nek]].w) < r.th
		switch {
		case canT && (!canK || len(sc.lists[order[r.net]]) >= sc.kvol[sc.kord[r.nek]]):
			r.net++
			continue
		case canK:
			r.nekW += p.kw[sc.kord[r.nek]].w
			r.nek++
			continue
		}
		break
	}
	return r.net < nt || r.nek < nk
}

// scoreEssentialText adds the essential text terms' contributions of the
// window's documents to sc.acc, term at a time by descending weight, and
// marks the documents seen. A list's kept saturated sums give its
// contributions as plan.bm25 computes them, to the bit.
func (r *shardRun) scoreEssentialText(lo, hi int) {
	p, sh, sc, order := r.p, r.sh, r.sc, r.q.order
	lists, win := sc.lists, sc.win
	for k := len(p.tf) - 1; k >= r.net; k-- {
		ti := order[k]
		l, qw := lists[ti], p.tf[ti].qw
		j := win[ti]
		j0 := j
		if x := sc.xs[ti]; x != nil {
			x = x[:len(l)]
			for ; j < len(l); j++ {
				slot := int(l[j].slot)
				if slot >= hi {
					break
				}
				s := slot - lo
				sc.acc[s] += qw * x[j]
				sc.seen[s>>6] |= 1 << (s & 63)
			}
		}
		for ; j < len(l); j++ {
			post := &l[j]
			if int(post.slot) >= hi {
				break
			}
			s := int(post.slot) - lo
			sc.acc[s] += p.bm25(post.tf, &sh.stat[post.slot], qw)
			sc.seen[s>>6] |= 1 << (s & 63)
		}
		win[ti] = j
		if r.st != nil {
			r.st.text.Add(int64(j - j0))
		}
	}
}

// boundEssentialKeywords adds the essential keyword terms' bounds of the
// window's documents to sc.kwub (see boundList) and marks the documents
// seen.
func (r *shardRun) boundEssentialKeywords(lo, hi int) {
	sc := r.sc
	for k := r.nek; k < len(r.p.kw); k++ {
		tj := sc.kord[k]
		w := r.p.kw[tj].w
		for li := sc.kfrom[tj]; li < sc.kfrom[tj+1]; li++ {
			n := sc.boundList(&sc.kl[li], lo, hi, w, true)
			if r.st != nil {
				r.st.keyword.Add(int64(n))
			}
		}
	}
}

// countSeen is the number of documents of the window [lo, hi) seen.
func (sc *pruneScratch) countSeen(lo, hi int) int {
	nseen := 0
	for wi := range (hi - lo + 63) / 64 {
		nseen += bits.OnesCount64(sc.seen[wi])
	}
	return nseen
}

// scanNonEssentialKeywords chooses, per non-essential keyword term, to
// scan its postings in the window (when they are at most 4 per document
// seen, nseen) into the bounds in sc.kwub of the documents seen, to look
// it up per candidate later, or to bound every document by its weight
// (sc.scan says which: kwScan, kwLook, kwFree); it returns the weights of
// those looked up, summed, and of those bounded by their weights. Looking
// up costs more per document than a posting scanned, but only the few
// documents that pass the text terms are looked up (32 postings per
// document seen scanned more than 2.5 times the keyword postings of short
// queries, docs/BENCHMARKS.md). Of the terms to scan, the longest (by
// sc.kord) are bounded by their weights while those sum to at most
// 1/freeShare of the non-essential keyword weight: the long task queries'
// many keyword terms spent a third of their time scanning, and a little
// slack in every bound costs less.
func (r *shardRun) scanNonEssentialKeywords(lo, hi, nseen int) (seekW, freeW float64) {
	sc := r.sc
	nslots := len(r.sh.docs)
	sc.scan = sc.scan[:0]
	for k := range r.nek {
		tj := sc.kord[k]
		w := r.p.kw[tj].w
		scan := sc.kvol[tj]*(hi-lo) <= 4*nseen*nslots
		switch {
		case scan && freeW+w <= r.nekW/freeShare:
			freeW += w
			sc.scan = append(sc.scan, kwFree)
			continue
		case !scan:
			seekW += w
			sc.scan = append(sc.scan, kwLook)
			continue
		}
		sc.scan = append(sc.scan, kwScan)
		for li := sc.kfrom[tj]; li < sc.kfrom[tj+1]; li++ {
			n := sc.boundList(&sc.kl[li], lo, hi, w, false)
			if r.st != nil {
				r.st.keyword.Add(int64(n))
			}
		}
	}
	return seekW, freeW
}

// How a non-essential keyword term is bounded in a window.
const (
	kwScan = iota // its postings scanned
	kwLook        // looked up per candidate
	kwFree        // by its weight
)

// freeShare is the inverse of the share of the non-essential keyword
// weight that terms bounded by their weights may take.
const freeShare = 8

// fields is the fields a posting of the list names for its term: those
// the list needs, or fieldPartial for a partial list's name part.
func (kl *kwList) fields(post kwPost) uint8 {
	if kl.partial && post.mask()&fieldName != 0 {
		return fieldPartial
	}
	return post.mask() & kl.need
}

// boundList adds to sc.kwub, for each posting of kl in the window [lo,
// hi), w × the bound of the fields it names. With mark it marks the
// documents seen; without, it adds only to those seen (the others cannot
// be candidates, and collectCandidates clears only the slots seen). A
// document in several lists of a term gets the sum of their bounds, never
// less than the bound of their fields together (points add up over
// fields, and their square root is concave). It returns the postings
// read.
func (sc *pruneScratch) boundList(kl *kwList, lo, hi int, w float64, mark bool) int {
	j0 := seek(kl.list, kl.pos, uint32(lo))
	j := j0
	for ; j < len(kl.list); j++ {
		post := kl.list[j]
		if int(post.docSlot()) >= hi {
			break
		}
		b := kl.fields(post)
		s := int(post.docSlot()) - lo
		if mark {
			if b != 0 {
				sc.kwub[s] += keywordBound(b) * w
				sc.seen[s>>6] |= 1 << (s & 63)
			}
			continue
		}
		// keywordBound(0) is 0: no branch on the fields or on seen.
		on := float64(sc.seen[s>>6] >> (s & 63) & 1)
		sc.kwub[s] += keywordBound(b) * w * on
	}
	kl.pos = j
	return j - j0
}

// markPartialNames records the partial name matches of the first 64
// looked-up keyword terms in the window, as bits per slot in sc.pmask.
func (r *shardRun) markPartialNames(lo, hi int) {
	sc := r.sc
	for k := range min(r.nek, 64) {
		if sc.scan[k] != kwLook {
			continue
		}
		tj := sc.kord[k]
		for li := sc.kpart[tj]; li < sc.kfrom[tj+1]; li++ {
			kl := &sc.kl[li]
			j := seek(kl.list, kl.pos, uint32(lo))
			for ; j < len(kl.list); j++ {
				post := kl.list[j]
				if int(post.docSlot()) >= hi {
					break
				}
				if post.mask()&fieldName != 0 {
					s := int(post.docSlot()) - lo
					if sc.pmask[s] == 0 {
						sc.pt = append(sc.pt, int32(s))
					}
					sc.pmask[s] |= 1 << k
				}
			}
			kl.pos = j
		}
	}
}

// collectCandidates checks the window's documents seen, in slot order,
// against the bound: adding the non-essential text terms, then the
// looked-up keyword terms, while it stays at or above θ. The survivors go
// to sc.cand with their text score; the window's accumulators are reset.
func (r *shardRun) collectCandidates(lo, hi int, seekW, freeW float64) {
	p, sh, sc, pre := r.p, r.sh, r.sc, r.pre
	th, net := r.th, r.net
	lm := p.limiter(th) // th holds until the survivors are finished
	for wi := range (hi - lo + 63) / 64 {
		seen := sc.seen[wi]
		sc.seen[wi] = 0
		for seen != 0 {
			s := wi*64 + bits.TrailingZeros64(seen)
			seen &= seen - 1
			slot := uint32(lo + s)
			a, ke := sc.acc[s], sc.kwub[s]+freeW
			m := ke + seekW
			sc.acc[s], sc.kwub[s] = 0, 0
			rl := lm.lim(m)
			if a+pre[net] < rl || sh.isDead(slot) {
				continue
			}
			a, ok := r.addNonEssentialText(slot, a, rl)
			if !ok {
				continue
			}
			if seekW > 0 {
				m = r.lookUpKeywords(s, slot, ke)
				if a < lm.lim(m) {
					continue
				}
			}
			// a is the text sum, added by descending weight
			// like the exhaustive search adds it.
			var cos float64
			if a > 0 {
				cos = math.Sqrt(min(a/p.ideal, 1))
			}
			if cos < p.minTF {
				cos = 0
			}
			if b := p.hybridBound(cos, m); b >= th {
				sc.cand = append(sc.cand, candidate{slot: slot, cos: cos, bound: b})
			}
		}
	}
}

// addNonEssentialText adds to the text sum a the document's contributions
// of the non-essential text terms, by descending weight, looking each up
// (galloping forward); it reports false as soon as the sum plus what is
// left falls under the limit rl.
func (r *shardRun) addNonEssentialText(slot uint32, a, rl float64) (float64, bool) {
	p, sh, sc, order, pre := r.p, r.sh, r.sc, r.q.order, r.pre
	for k := r.net - 1; k >= 0; k-- {
		ti := order[k]
		l := sc.lists[ti]
		c := seek(l, sc.cur[ti], slot)
		sc.cur[ti] = c
		if c < len(l) && l[c].slot == slot {
			a += p.bm25(l[c].tf, &sh.stat[slot], p.tf[ti].qw)
		}
		if a+pre[k] < rl {
			return a, false
		}
	}
	return a, true
}

// lookUpKeywords is the keyword bound of the document at window offset s:
// ke (the bounds of the terms scanned and of those bounded by their
// weights) plus the looked-up keyword terms' bounds from the fields their
// postings name.
func (r *shardRun) lookUpKeywords(s int, slot uint32, ke float64) float64 {
	sc := r.sc
	m := ke
	for k := range r.nek {
		if sc.scan[k] != kwLook {
			continue
		}
		tj := sc.kord[k]
		var b uint8
		for li := sc.kfrom[tj]; li < sc.kpart[tj]; li++ {
			kl := &sc.kl[li]
			c := seek(kl.list, kl.pos, slot)
			kl.pos = c
			if c < len(kl.list) && kl.list[c].docSlot() == slot {
				b |= kl.list[c].mask() & kl.need
			}
		}
		if sc.kpart[tj] < sc.kfrom[tj+1] && (k >= 64 || sc.pmask[s]&(1<<k) != 0) {
			b |= fieldPartial
		}
		m += keywordBound(b) * r.p.kw[tj].w
	}
	return m
}

// clearPartialNames resets the window's partial name bits, touching only
// the slots that were set.
func (sc *pruneScratch) clearPartialNames() {
	for _, s := range sc.pt {
		sc.pmask[s] = 0
	}
	sc.pt = sc.pt[:0]
}

// finishSurvivors finishes the window's candidates by bound, best first (a
// heap: most are never taken), until none can enter, inserting them into
// the top hits and publishing θ when the top is full.
func (r *shardRun) finishSurvivors() {
	sc := r.sc
	cands := sc.cand
	if r.st != nil {
		r.st.cand.Add(int64(len(cands)))
	}
	heapify(cands)
	for len(cands) > 0 {
		c := cands[0]
		if c.bound < r.th {
			break
		}
		cands = popCandidate(cands)
		if r.st != nil {
			r.st.final.Add(1)
		}
		h, ok := r.ix.finish(r.sh, c, r.p, r.q.kw, sc, r.th)
		if !ok {
			continue
		}
		r.top = insertTop(r.top, h, r.p.n)
		if len(r.top) == r.p.n {
			publishMax(&r.q.theta, r.top[r.p.n-1].Score)
			r.th = r.theta()
		}
	}
	sc.cand = sc.cand[:0]
}

// candidate is a document whose text score is known.
type candidate struct {
	slot       uint32
	cos, bound float64
}

// heapify orders cs as a heap, the largest bound first.
func heapify(cs []candidate) {
	for i := len(cs)/2 - 1; i >= 0; i-- {
		siftDown(cs, i)
	}
}

// popCandidate removes the first candidate of heap cs.
func popCandidate(cs []candidate) []candidate {
	n := len(cs) - 1
	cs[0] = cs[n]
	cs = cs[:n]
	siftDown(cs, 0)
	return cs
}

func siftDown(cs []candidate, i int) {
	for {
		c := 2*i + 1
		if c >= len(cs) {
			return
		}
		if c+1 < len(cs) && cs[c+1].bound > cs[c].bound {
			c++
		}
		if cs[c].bound <= cs[i].bound {
			return
		}
		cs[i], cs[c] = cs[c], cs[i]
		i = c
	}
}

// hybridBound bounds the score of a document with text score cos whose
// keyword terms' scores sum to at most m.
func (p *plan) hybridBound(cos, m float64) float64 {
	var mk float64
	if p.kwTotal > 0 {
		mk = min(m, p.kwTotal) / p.kwTotal
	}
	return (p.wk*mk + p.wt*cos) * (1 + boundSlack)
}

// finish scores candidate c exactly as the exhaustive search does, or
// reports false when it cannot enter a top whose n-th best score is th.
func (ix *Index) finish(sh *shard, c candidate, p *plan, kq *kwQuery, sc *pruneScratch, th float64) (Hit, bool) {
	d := sh.docs[c.slot]
	if p.exclude[d] {
		return Hit{}, false
	}
	var kwsum float64
	var pts int32
	sc.kbits = slices.Grow(sc.kbits[:0], len(p.kw))[:len(p.kw)]
	sc.masks = slices.Grow(sc.masks[:0], len(kq.ids))[:len(kq.ids)]
	bits := sc.kbits
	kq.bits(d, bits, sc.masks)
	var words float64
	for j := range p.kw {
		n := keywordPoints(bits[j], d.mcp)
		if n == 0 {
			continue
		}
		pts += int32(n)
		kwsum += math.Sqrt(float64(min(n, keywordFull))/keywordFull) * p.kw[j].w
		if bits[j]&(fieldName|fieldHint|fieldDesc) != 0 {
			words += p.kw[j].wordIDF
		}
	}
	var kw float64
	if p.kwTotal > 0 {
		kw = kwsum / p.kwTotal
	}
	score := p.wk*kw + p.wt*c.cos
	if score <= 0 || score < th {
		return Hit{}, false
	}
	if p.allow != nil && !p.allow(d.name) {
		return Hit{}, false
	}
	return Hit{Name: d.name, Score: score, Keyword: kw, TFIDF: c.cos, Points: int(pts), words: p.wordScore(words, &sh.stat[c.slot])}, true
}

// kwQuery resolves keyword terms against a document's word list in one
// merge: ids are the sorted distinct word ids of every term, and
// uses[from[i]:from[i+1]] the ways the terms use ids[i].
type kwQuery struct {
	ids  []uint32
	from []int32
	uses []kwUse
	// multi lists the terms of several words and their words' positions
	// in ids.
	multi []kwMulti
	pos   []int
	keys  []uint64 // scratch of build
	// member has bit id set for every id of ids.
	member []uint64
}

type kwUse struct {
	id   uint32
	term int32
	kind uint8 // kwWord, kwWhole or kwPartial
}

const (
	kwWord = iota
	kwWhole
	kwPartial
)

type kwMulti struct {
	term     int
	keep     uint8
	from, to int // its words' positions in ids are pos[from:to]
}

// build resolves terms into k, reusing k's arrays.
func (k *kwQuery) build(terms []kwTerm) {
	// Every use of a word id, packed as id, term, kind so that a plain
	// sort orders them by id.
	keys := k.keys[:0]
	for j, t := range terms {
		if len(t.words) == 1 {
			keys = append(keys, packUse(t.words[0], j, kwWord))
		}
		if t.whole >= 0 {
			keys = append(keys, packUse(uint32(t.whole), j, kwWhole))
		}
		for _, id := range t.partial {
			keys = append(keys, packUse(id, j, kwPartial))
		}
	}
	slices.Sort(keys)
	k.keys = keys
	k.uses = slices.Grow(k.uses[:0], len(keys))[:len(keys)]
	for i, key := range keys {
		k.uses[i] = kwUse{id: uint32(key >> 32), term: int32(uint32(key) >> 2), kind: uint8(key & 3)}
	}
	// ids: the distinct ids of the uses and of the multi-word terms'
	// words.
	ids := k.ids[:0]
	for _, u := range k.uses {
		ids = append(ids, u.id)
	}
	for _, t := range terms {
		if len(t.words) > 1 {
			ids = append(ids, t.words...)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	k.ids = ids
	clear(k.member)
	k.member = k.member[:0]
	if len(ids) > 0 {
		n := int(ids[len(ids)-1]>>6) + 1
		k.member = slices.Grow(k.member, n)[:n]
		for _, id := range ids {
			k.member[id>>6] |= 1 << (id & 63)
		}
	}
	k.from = slices.Grow(k.from[:0], len(ids)+1)[:len(ids)+1]
	u := 0
	for i, id := range ids {
		k.from[i] = int32(u)
		for u < len(k.uses) && k.uses[u].id == id {
			u++
		}
	}
	k.from[len(ids)] = int32(len(k.uses))
	k.multi, k.pos = k.multi[:0], k.pos[:0]
	for j, t := range terms {
		if len(t.words) < 2 {
			continue
		}
		from := len(k.pos)
		for _, id := range t.words {
			i, _ := slices.BinarySearch(ids, id)
			k.pos = append(k.pos, i)
		}
		k.multi = append(k.multi, kwMulti{term: j, keep: pick8(t.identifier, fieldName, 0xff), from: from, to: len(k.pos)})
	}
}

func packUse(id uint32, term, kind int) uint64 {
	return uint64(id)<<32 | uint64(uint32(term))<<2 | uint64(kind)
}

// reset empties k, keeping its arrays.
func (k kwQuery) reset() kwQuery {
	return kwQuery{ids: k.ids[:0], from: k.from[:0], uses: k.uses[:0], multi: k.multi[:0], keys: k.keys[:0], pos: k.pos[:0], member: k.member}
}

// bits sets bits[j] to the fields of d that keyword term j matches, like
// keywordTerm does from the posting lists. masks is scratch of len(k.ids),
// zero on entry and on return.
func (k *kwQuery) bits(d *doc, bits, masks []uint8) {
	clear(bits)
	set := func(i int, mask uint8) {
		masks[i] = mask
		for _, u := range k.uses[k.from[i]:k.from[i+1]] {
			switch u.kind {
			case kwWord:
				bits[u.term] |= mask
			case kwWhole:
				bits[u.term] |= mask & (fieldHint | fieldDesc)
			case kwPartial:
				if mask&fieldName != 0 {
					bits[u.term] |= fieldPartial
				}
			}
		}
	}
	if ids := k.ids; len(ids) > 0 {
		// The document's words, by ascending id, are tested against
		// the query's set up to its largest id; the few members are
		// found in ids by a merge.
		member, last, i := k.member, ids[len(ids)-1], 0
		words, _ := fwdSplit(d.fwd)
		r := wordReader{s: words}
		for id, mask, ok := r.next(); ok && id <= last; id, mask, ok = r.next() {
			if member[id>>6]&(1<<(id&63)) != 0 {
				for ids[i] < id {
					i++
				}
				set(i, mask)
			}
		}
	}
	for _, m := range k.multi {
		and := m.keep
		for _, i := range k.pos[m.from:m.to] {
			and &= masks[i]
		}
		bits[m.term] |= and
	}
	clear(masks)
}

// seek returns the index of the first posting of l at or after j whose
// slot is at least slot, galloping forward.
func seek[P posting[P]](l []P, j int, slot uint32) int {
	if j >= len(l) || l[j].docSlot() >= slot {
		return j
	}
	// l[lo] is before slot; find hi at or after it, or the end.
	lo, step := j, 1
	hi := j + 1
	for hi < len(l) && l[hi].docSlot() < slot {
		lo = hi
		step <<= 1
		hi = lo + step
	}
	hi = min(hi, len(l))
	lo++
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l[m].docSlot() < slot {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// publishMax raises v (the bits of a non-negative float64) to x.
func publishMax(v *atomic.Uint64, x float64) {
	b := math.Float64bits(x)
	for {
		old := v.Load()
		if old >= b || v.CompareAndSwap(old, b) {
			return
		}
	}
}

func pick8(c bool, a, b uint8) uint8 {
	if c {
		return a
	}
	return b
}
