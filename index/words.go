package index

import (
	"math"
	"slices"
)

// WordShare is the share of the word score in the scores of
// Options.BlendWords, chosen by leave-one-dataset-out evaluation over
// every query shape (docs/BENCHMARKS.md).
const WordShare = 0.02

// BM25's saturation and length normalisation for the word score.
const (
	wordK1 = 1.2
	wordB  = 0.75
)

// blendWords gives a ranking a second opinion from the words as written.
// hits are the ranked hits of plan p, best first, with their documents;
// each one's score becomes (1 − WordShare) × its score + WordShare × its
// word score relative to the best word score among hits, and hits are
// sorted again (by score, ties by name). The caller holds the read lock.
//
// The word score is plain BM25 (k1 1.2, b 0.75) of the query's keyword
// words, unstemmed and each counted once, against the document's own
// keyword words (name parts, search hint and description words, each
// counted once; the document's length is their number). The text scorer
// stems, which pays on most catalogs but confuses "interested" with
// "interests" and "planning" with "plan" in catalogs of terse endpoint
// descriptions; the blend lets the exact words break such near-ties. It
// costs one pass over the forward lists of the hits, so it is asked for
// where the hits are few (the server's fusion candidates).
func (ix *Index) blendWords(p *plan, hits []Hit) {
	N := float64(ix.nDeferred)
	if len(hits) == 0 || len(p.kw) == 0 || N == 0 || ix.kwLen == 0 {
		return
	}
	ids := p.blendIDs[:0]
	for _, t := range p.kw {
		ids = append(ids, t.words...)
		if t.whole >= 0 {
			ids = append(ids, uint32(t.whole))
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	p.blendIDs = ids
	idf := p.blendIDF[:0]
	for _, id := range ids {
		df := min(float64(ix.kw.df[id]), N)
		idf = append(idf, math.Log(1+(N-df+0.5)/(df+0.5)))
	}
	p.blendIDF = idf
	avg := float64(ix.kwLen) / N
	scores := p.blendScores[:0]
	best := 0.0
	for _, h := range hits {
		s := 0.0
		if h.doc != nil {
			words, _ := ix.readers(h.doc)
			var matched float64
			n, j := 0, 0
			for id, _, ok := words.next(); ok; id, _, ok = words.next() {
				n++
				for j < len(ids) && ids[j] < id {
					j++
				}
				if j < len(ids) && ids[j] == id {
					matched += idf[j]
				}
			}
			if matched > 0 {
				s = matched * (wordK1 + 1) / (1 + wordK1*(1-wordB+wordB*float64(n)/avg))
			}
		}
		scores = append(scores, s)
		best = max(best, s)
	}
	p.blendScores = scores
	if best == 0 {
		return
	}
	for i := range hits {
		hits[i].Score = (1-WordShare)*hits[i].Score + WordShare*scores[i]/best
	}
	slices.SortFunc(hits, compareHits)
}
