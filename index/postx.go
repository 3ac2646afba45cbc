package index

import "sync/atomic"

// Per-posting BM25F saturated field sums.
//
// The exhaustive search's text loop spends most of its time on what a
// posting's BM25F field sum x = Σ_f tf_f × fw_f / (b1 + bl_f × len_f)
// needs: the slot's field lengths, four factor lookups and four
// conversions, and its saturation x / (k1 + x), a division. Both depend
// only on the posting and on the statistics of the index epoch (the
// average field lengths move with every update), not on the query, so a
// shard keeps each term list's saturated sums, computed the first time a
// search scores the list in an epoch (addBM25, which writes them as it
// adds) and read back by later searches of the epoch (addX): one float64 a
// posting instead of the lengths, lookups and division; a term adds qw ×
// its posting's value. The values are those every path computes
// (plan.saturated), so the scores are the same to the bit.
//
// A list's sums are kept until a search of a later epoch scores the list
// again, which refills their array when it has room: they take about 9
// bytes a posting of the lists searched (8, and room for the list to
// grow), and a byte a posting for each keyword word scored with the list
// (pairs.go, at most maxPairs), lists never searched nothing but their
// entry in the shard's table (8 bytes a term). From pruneFrom documents
// searches run pruned (prune.go), and the same table keeps what they read of a list besides
// its postings: its largest contribution, and its sums only for sparse
// lists read twice in the epoch (textLists); the few exhaustive searches
// there keep nothing.

// xList holds what searches keep of one term list of a shard for index
// epoch epoch: its postings' saturated field sums x / (k1 + x) in posting
// order (nil when not kept), and the largest of them for the pruned
// search and weakFrom (negative when not computed).
type xList struct {
	epoch uint64
	sat   []float64
	max   float64
	// pairs are the keyword fields of words of the term (pairs.go),
	// replaced in turn (next).
	pairs [maxPairs]atomic.Pointer[pairList]
	next  atomic.Uint32
}

// xLists holds a shard's sums by term id. Searches under the read lock
// grow it by copying (a copy may lose a sum stored meanwhile: it is
// computed again).
type xLists struct {
	l []atomic.Pointer[xList]
}

// kept returns what shard sh keeps of its list of term id for epoch, nil
// when nothing.
func (sh *shard) kept(id uint32, epoch uint64) *xList {
	if xs := sh.xs.Load(); xs != nil && int(id) < len(xs.l) {
		if e := xs.l[id].Load(); e != nil && e.epoch == epoch {
			return e
		}
	}
	return nil
}

// sums returns the kept sums of shard sh's list of term id, n postings
// long, for epoch (ok); otherwise an array of n for addBM25 to fill and
// keep to keep: the list's stale array when it has room for n and
// this search claims it, else a new one, with room for the list to grow
// by an eighth (an update appends to a list, and leaves the postings it
// replaces in place until the list is compacted). A stale array is no
// search's but its claimant's: the searches of its epoch ended before the
// update that changed it (they hold the read lock), and the claim takes
// it out of the table.
func (sh *shard) sums(id uint32, n int, epoch uint64) (x []float64, ok bool) {
	if xs := sh.xs.Load(); xs != nil && int(id) < len(xs.l) {
		e := xs.l[id].Load()
		switch {
		case e == nil:
		case e.epoch == epoch:
			if e.sat != nil && len(e.sat) == n {
				return e.sat, true
			}
		case cap(e.sat) >= n && xs.l[id].CompareAndSwap(e, nil):
			return e.sat[:n], false
		}
	}
	return make([]float64, n, n+n/8+4), false
}

// keep keeps e as what shard sh keeps of its list of term id; vocab is
// the number of term ids, which sizes a new table. A new table takes the
// old one's entries of e's epoch, not the stale ones (which another
// search could then claim from both tables).
func (sh *shard) keep(id uint32, e *xList, vocab int) {
	for {
		old := sh.xs.Load()
		if old != nil && int(id) < len(old.l) {
			old.l[id].Store(e)
			return
		}
		n := max(vocab, int(id)+1)
		grown := &xLists{l: make([]atomic.Pointer[xList], n+n/4+64)}
		if old != nil {
			for i := range old.l {
				if o := old.l[i].Load(); o != nil && o.epoch == e.epoch {
					grown.l[i].Store(o)
				}
			}
		}
		if sh.xs.CompareAndSwap(old, grown) {
			grown.l[id].Store(e)
			return
		}
	}
}

// sumBuf returns scratch room for n sums that are not kept.
func (s *scratch) sumBuf(n int) []float64 {
	if cap(s.sums) < n {
		s.sums = make([]float64, n+n/4)
	}
	return s.sums[:n]
}

// saturatedSums writes the saturated field sums of postings l into xs,
// as addBM25 does, and returns the largest.
func (p *plan) saturatedSums(stat []docStat, l []tfPost, xs []float64) (largest float64) {
	xs = xs[:len(l)]
	for i := range l {
		xs[i] = p.saturated(l[i].tf, &stat[l[i].slot])
		largest = max(largest, xs[i])
	}
	return largest
}

// addX adds the BM25F contributions of a term (qw = count × idf) with
// postings l and their saturated sums x into the text sums of acc, marking
// their slots seen, as addBM25 does.
func addX(s *scratch, l []tfPost, x []float64, qw float64) {
	acc, seen := s.acc, s.seen
	x = x[:len(l)]
	for i := range l {
		slot := l[i].slot
		xi := x[i]
		acc[slot].text += qw * xi
		seen[slot>>6] |= 1 << (slot & 63)
	}
}

// addXSeen is addX for the documents already seen alone (weakFrom).
func addXSeen(s *scratch, l []tfPost, x []float64, qw float64) {
	acc, seen := s.acc, s.seen
	x = x[:len(l)]
	for i := range l {
		if slot := l[i].slot; seen[slot>>6]&(1<<(slot&63)) != 0 {
			acc[slot].text += qw * x[i]
		}
	}
}
