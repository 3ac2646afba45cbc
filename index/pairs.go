package index

import "math"

// Text and keyword terms scored from one list.
//
// Most words of a query are scored twice: as a text term (its stem, in
// the text lists) and as a one-word keyword term (the word as written, in
// the keyword lists, with the name parts that contain it). The two reach
// nearly the same documents, so the exhaustive search scores such a pair
// in one pass over the text list (addPair): beside each text posting's
// saturated sum (postx.go), a shard keeps for the index epoch the keyword
// fields of the same document (0 where it has only the stem), one byte a
// posting, and apart the few documents that have the word but not the
// stem. The contributions are those of addX and oneWord to the bit: fields
// 0 add 0 to the keyword sum. The keyword sum is still added term by term
// in the plan's order: pairTerms puts the paired terms first, in the order
// of their text terms.

// maxPairs bounds the pairLists an xList keeps, one per keyword word: a
// stem is written in a few forms (message, messages, messaging).
const maxPairs = 4

// pairList is a keyword word's fields (with fieldMCP and fieldPartial) in
// one shard's text list of its stem: b by posting, and the documents the
// list lacks, slots sorted and their fields eb.
type pairList struct {
	word  uint32
	b     []uint8
	slots []uint32
	eb    []uint8
}

// pairTerms pairs each single keyword term whose word stems to one of the
// query's text terms with that term (BM25F hybrid searches without CJK
// terms), sets p.pairs, and orders p.kw with the paired terms first, in the
// order of their text terms.
func (ix *Index) pairTerms(p *plan) {
	p.pairs = p.pairs[:0]
	for range p.tf {
		p.pairs = append(p.pairs, -1)
	}
	if p.wt <= 0 || p.wk <= 0 || p.scorer != ScorerBM25F || p.cjkTerms > 0 {
		return
	}
	paired := 0
	for j := range p.kw {
		t := &p.kw[j]
		if !t.single() || t.stemAt < 0 {
			continue
		}
		o := p.termOrd[t.stemAt]
		// The term's place in p.tf: the few terms the index does not
		// know are missing from it.
		for ti, q := range p.tf {
			if q.ord == o && p.pairs[ti] < 0 {
				p.pairs[ti], t.text = j, ti
				paired++
				break
			}
		}
	}
	if paired == 0 {
		return
	}
	// Paired terms first, by text term; the others after, in their order.
	kw := p.kwTmp[:0]
	for ti, j := range p.pairs {
		if j >= 0 {
			p.pairs[ti] = len(kw)
			kw = append(kw, p.kw[j])
		}
	}
	for _, t := range p.kw {
		if t.text < 0 {
			kw = append(kw, t)
		}
	}
	copy(p.kw, kw)
	p.kwTmp = kw
}

// paired returns what shard sh keeps of text term id (postings l) and
// keyword term t for the current epoch, the list's saturated sums and t's
// fields, making them when the shard keeps none for t's word.
func (ix *Index) paired(sh *shard, s *scratch, p *plan, id uint32, l []tfPost, t *kwTerm) ([]float64, *pairList) {
	word := t.words[0]
	e := sh.kept(id, ix.epoch)
	if e != nil && len(e.sat) == len(l) {
		for i := range e.pairs {
			if pl := e.pairs[i].Load(); pl != nil && pl.word == word {
				return e.sat, pl
			}
		}
	} else {
		x, ok := sh.sums(id, len(l), ix.epoch)
		m := -1.0
		if !ok {
			m = p.saturatedSums(sh.stat, l, x)
		}
		e = &xList{epoch: ix.epoch, sat: x, max: m}
		sh.keep(id, e, len(ix.tfl))
	}
	// Merge the word's postings and its partial name matches into
	// fields by slot, then into l.
	kw, parts := ix.kwl.get(word, sh.idx), s.namePartials(ix, sh, t)
	pl := &pairList{word: word, b: make([]uint8, len(l))}
	i, j, k := 0, 0, 0
	for j < len(kw) || k < len(parts) {
		slot := uint32(math.MaxUint32)
		if j < len(kw) {
			slot = kw[j].docSlot()
		}
		if k < len(parts) {
			slot = min(slot, parts[k].docSlot())
		}
		var b uint8
		if j < len(kw) && kw[j].docSlot() == slot {
			b = kw[j].low()
			j++
		}
		if k < len(parts) && parts[k].docSlot() == slot {
			b |= fieldPartial | parts[k].low()
			k++
		}
		for i < len(l) && l[i].slot < slot {
			i++
		}
		if i < len(l) && l[i].slot == slot {
			pl.b[i] = b
			continue
		}
		pl.slots, pl.eb = append(pl.slots, slot), append(pl.eb, b)
	}
	// Concurrent searches may make the same list, or replace each
	// other's; either is made again when missed.
	e.pairs[(e.next.Add(1)-1)%maxPairs].Store(pl)
	return e.sat, pl
}

// hasWord is 1 for the keyword fields of a word's own posting (not only a
// name part containing it): the term's share of the word score.
var hasWord = func() (w [32]float64) {
	for b := range w {
		if uint8(b)&(fieldName|fieldHint|fieldDesc) != 0 {
			w[b] = 1
		}
	}
	return w
}()

// addKeyword adds a keyword term's contribution to a document with fields
// b (fieldMCP and fieldPartial included, 0 for none): its weight w times
// the fields' share, their points, and the word idf idf when the document
// has the word itself.
func (a *slotAcc) addKeyword(b uint8, w, idf float64) {
	a.kw += kwScore[b] * w
	a.pts += kwPoints[b]
	a.words += hasWord[b] * idf
}

// addPair adds the text contributions of a term (postings l, saturated sums
// x, qw = count × idf, as addX) and the keyword contributions of its
// paired term (fields pl, weight w, word idf idf, as oneWord), marking
// their slots seen.
func addPair(s *scratch, l []tfPost, x []float64, pl *pairList, qw, w, idf float64) {
	acc, seen := s.acc, s.seen
	x, b := x[:len(l)], pl.b[:len(l)]
	for i := range l {
		slot := l[i].slot
		xi, bi := x[i], b[i]&31
		a := &acc[slot]
		a.text += qw * xi
		a.addKeyword(bi, w, idf)
		seen[slot>>6] |= 1 << (slot & 63)
	}
	eb := pl.eb[:len(pl.slots)]
	for i, slot := range pl.slots {
		bi := eb[i] & 31
		a := &acc[slot]
		a.addKeyword(bi, w, idf)
		seen[slot>>6] |= 1 << (slot & 63)
	}
}

// addPairSeen is addPair for the documents already seen alone (weakFrom).
func addPairSeen(s *scratch, l []tfPost, x []float64, pl *pairList, qw, w, idf float64) {
	acc, seen := s.acc, s.seen
	x, b := x[:len(l)], pl.b[:len(l)]
	for i := range l {
		slot := l[i].slot
		if seen[slot>>6]&(1<<(slot&63)) == 0 {
			continue
		}
		xi, bi := x[i], b[i]&31
		a := &acc[slot]
		a.text += qw * xi
		a.addKeyword(bi, w, idf)
	}
	eb := pl.eb[:len(pl.slots)]
	for i, slot := range pl.slots {
		if seen[slot>>6]&(1<<(slot&63)) == 0 {
			continue
		}
		bi := eb[i] & 31
		a := &acc[slot]
		a.addKeyword(bi, w, idf)
	}
}
