package index

import (
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

// The word score gives a ranking a second opinion from the words as
// written. It is plain BM25 (k1 1.2, b 0.75) of the query's words,
// unstemmed and each counted once (its one-word keyword terms), against
// the document's own keyword words (name parts, search hint and
// description words, each counted once), the document's length being its
// name, hint and description term counts. The text scorer stems, which
// pays on most catalogs but confuses "interested" with "interests" and
// "planning" with "plan" in catalogs of terse endpoint descriptions; the
// blend lets the exact words break such near-ties. Its numerator is summed
// while the keyword postings are scanned (the idf of each one-word term
// whose word the document has: slotAcc.words, or finish in the pruned
// search), so it costs an addition per keyword posting.

// wordScore is the word score of a document whose matched words' idf sum
// to sum.
func (p *plan) wordScore(sum float64, st *docStat) float64 {
	if sum == 0 || p.wordAvg <= 0 {
		return 0
	}
	n := float64(st.flen[fName]) + float64(st.flen[fHint]) + float64(st.flen[fDesc])
	return sum * (wordK1 + 1) / (1 + wordK1*(1-wordB+wordB*n/p.wordAvg))
}

// wordAvg is the catalog's average word-score length.
func (ix *Index) wordAvg() float64 {
	if ix.nDeferred == 0 {
		return 0
	}
	return float64(ix.flen[fName]+ix.flen[fHint]+ix.flen[fDesc]) / float64(ix.nDeferred)
}

// blendWords re-scores ranked hits (best first, their word scores set):
// each one's score becomes (1 − WordShare) × its score +
// WordShare × its word score relative to the best among hits, and hits
// are sorted again (by score, ties by name). With no word score among
// them nothing changes.
func blendWords(hits []Hit) {
	best := 0.0
	for _, h := range hits {
		best = max(best, h.words)
	}
	if best == 0 {
		return
	}
	for i := range hits {
		hits[i].Score = (1-WordShare)*hits[i].Score + WordShare*hits[i].words/best
	}
	slices.SortFunc(hits, compareHits)
}
