package index

import (
	"math"
	"slices"

	"github.com/tooldex/tooldex/index/analysis"
)

// WordShare is the share of the word score in BlendWords' scores, chosen
// by leave-one-dataset-out evaluation over every query shape
// (docs/BENCHMARKS.md).
const WordShare = 0.02

// BM25's saturation and length normalisation for the word score.
const (
	wordK1 = 1.2
	wordB  = 0.75
)

// BlendWords gives a ranking a second opinion from the words as written.
// hits are a ranking of query (a Run result's hits, best first); each
// ranked one's score becomes (1 − WordShare) × its score + WordShare × its
// word score relative to the best word score among hits, and the hits are
// sorted again: pinned hits (exact names, select:) first in their order,
// then by score, ties by name. Hits that name no deferred tool keep
// (1 − WordShare) of their score.
//
// The word score is plain BM25 (k1 1.2, b 0.75) of the query's keyword
// words, unstemmed and each counted once, against the tool's own words
// (name parts, search hint and description words, each counted once; the
// document's length is their number). The text scorer stems, which pays
// on most catalogs but confuses "interested" with "interests" and
// "planning" with "plan" in catalogs of terse endpoint descriptions; the
// blend lets the exact words break such near-ties. Its cost is one pass
// over the forward lists of the hits given, so callers blend the
// candidates they already have (the service's fusion candidates).
func (ix *Index) BlendWords(query string, hits []Hit) []Hit {
	out := slices.Clone(hits)
	if len(out) == 0 {
		return out
	}
	ix.mu.RLock()
	scores := ix.wordScores(query, out)
	ix.mu.RUnlock()
	best := 0.0
	for _, s := range scores {
		best = max(best, s)
	}
	for i := range out {
		if out[i].Match != MatchRanked {
			continue
		}
		w := 0.0
		if best > 0 {
			w = scores[i] / best
		}
		out[i].Score = (1-WordShare)*out[i].Score + WordShare*w
	}
	// Pinned hits lead in Run's order; the ranked ones are sorted.
	slices.SortStableFunc(out, func(a, b Hit) int {
		pa, pb := a.Match != MatchRanked, b.Match != MatchRanked
		switch {
		case pa && pb:
			return 0
		case pa:
			return -1
		case pb:
			return 1
		}
		return compareHits(a, b)
	})
	return out
}

// wordScores returns the word score of each hit (0 for names that are no
// deferred document). The caller holds the read lock.
func (ix *Index) wordScores(query string, hits []Hit) []float64 {
	scores := make([]float64, len(hits))
	N := float64(ix.nDeferred)
	if N == 0 {
		return scores
	}
	var qt analysis.QueryText
	ix.an.Analyze(&qt, query, false, true)
	var ids []uint32
	add := func(w string) {
		if id, ok := ix.kw.lookup(w); ok {
			ids = append(ids, id)
		}
	}
	for _, t := range qt.Keywords {
		for _, w := range t.Words {
			add(w)
		}
		if t.Whole != "" && (len(t.Words) != 1 || t.Words[0] != t.Whole) {
			add(t.Whole)
		}
	}
	if len(ids) == 0 {
		return scores
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	idf := make([]float64, len(ids))
	for i, id := range ids {
		df := min(float64(ix.kw.df[id]), N)
		idf[i] = math.Log(1 + (N-df+0.5)/(df+0.5))
	}
	avg := float64(ix.kwLen) / N
	for i, h := range hits {
		d := ix.byName(h.Name)
		if d == nil || d.core {
			continue
		}
		words, _ := ix.readers(d)
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
		if matched == 0 || avg <= 0 {
			continue
		}
		scores[i] = matched * (wordK1 + 1) / (1 + wordK1*(1-wordB+wordB*float64(n)/avg))
	}
	return scores
}
