package semantic

import "sort"

// Scored is a candidate tool for Fuse.
type Scored struct {
	Name string
	// Lexical is the lexical ranking's score (≥ 0; 0 when it did not find
	// the tool).
	Lexical float64
	// Dense is the cosine similarity to the query, when HasDense.
	Dense    float64
	HasDense bool
	// Pinned candidates (exact name matches) stay first, in their order.
	Pinned bool
	// Score is Fuse's output: the fused score in [0, 1].
	Score float64
}

// Fuse scores and orders candidates: pinned ones first in the order given,
// then the rest by (1−ratio)·lexical′ + ratio·dense′, where lexical′ is the
// lexical score over the best one and dense′ the similarity over the best
// one (a negative similarity, or a tool without a vector, counts 0; all
// count 0 when none is positive), pinned candidates left out of both
// scales. Both are scaled by their best, not stretched between their
// lowest and highest: candidates whose similarities barely differ (near
// duplicates) keep their lexical order (docs/BENCHMARKS.md, session 11).
// Ties keep the lexical order, then names. ratio is clamped to [0, 1].
func Fuse(c []Scored, ratio float64) {
	ratio = min(max(ratio, 0), 1)
	var maxLex, maxDense float64
	for _, x := range c {
		if x.Pinned {
			continue
		}
		maxLex = max(maxLex, x.Lexical)
		if x.HasDense {
			maxDense = max(maxDense, x.Dense)
		}
	}
	for i := range c {
		var lex, dense float64
		if maxLex > 0 {
			lex = c[i].Lexical / maxLex
		}
		if c[i].HasDense && maxDense > 0 {
			dense = max(c[i].Dense, 0) / maxDense
		}
		c[i].Score = (1-ratio)*lex + ratio*dense
		if c[i].Pinned {
			c[i].Score = 1
		}
	}
	sort.SliceStable(c, func(i, j int) bool {
		a, b := c[i], c[j]
		if a.Pinned != b.Pinned {
			return a.Pinned
		}
		if a.Pinned {
			return false
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Lexical != b.Lexical {
			return a.Lexical > b.Lexical
		}
		return a.Name < b.Name
	})
}

// Rank merges the lexical candidates (best first) with the depth tools
// nearest to q that allow accepts (those with a similarity of at least
// StoreConfig.MinSimilarity), fuses their scores (see Fuse) and returns
// the best n.
func (s *Store) Rank(q Query, lexical []Scored, ratio float64, depth, n int, allow func(name string) bool) []Scored {
	c := make([]Scored, 0, len(lexical)+depth)
	c = append(c, lexical...)
	at := make(map[string]int, len(c)+depth)
	for i, x := range c {
		at[x.Name] = i
	}
	for _, h := range s.Nearest(q, depth, allow) {
		if i, ok := at[h.Name]; ok {
			c[i].Dense, c[i].HasDense = h.Score, true
			continue
		}
		if h.Score < s.minSim {
			continue
		}
		at[h.Name] = len(c)
		c = append(c, Scored{Name: h.Name, Dense: h.Score, HasDense: true})
	}
	var missing []string
	for _, x := range c {
		if !x.HasDense {
			missing = append(missing, x.Name)
		}
	}
	if len(missing) > 0 {
		sims, ok := s.Similarity(q, missing)
		for i, name := range missing {
			if ok[i] {
				j := at[name]
				c[j].Dense, c[j].HasDense = sims[i], true
			}
		}
	}
	Fuse(c, ratio)
	return c[:min(n, len(c))]
}
