package eval

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tooldex/tooldex/index/analysis"
)

// RequestShares computes the request share of each text term over sets
// (analysis.RequestShares explains it): in each set, q(t) is the fraction
// of its queries whose text terms include t and d(t) the fraction of its
// tools (name and description) whose do; a term's share is the smallest
// q(t) − kappa·d(t) over the sets, kept when it is at least minShare and
// at most maxShare (a word in every request would otherwise get 1, and
// weigh nothing). The minimum keeps the words every set's requests use,
// not the topics one set's requests are about.
func RequestShares(an *analysis.Analyzer, sets []Named, kappa, minShare float64) map[string]float64 {
	share := map[string]float64{}
	for i, s := range sets {
		q := termFractions(an, len(s.Dataset.Queries), func(j int) string { return s.Dataset.Queries[j].Text })
		d := termFractions(an, len(s.Dataset.Tools), func(j int) string {
			t := s.Dataset.Tools[j]
			return t.Name + " " + t.Description
		})
		next := make(map[string]float64)
		for t, f := range q {
			g := f - kappa*d[t]
			if i > 0 {
				prev, ok := share[t]
				if !ok {
					continue // not in an earlier set's queries
				}
				g = min(g, prev)
			}
			next[t] = g
		}
		share = next
	}
	maps.DeleteFunc(share, func(_ string, g float64) bool { return g < minShare })
	for t, g := range share {
		share[t] = min(g, maxShare)
	}
	return share
}

// maxShare caps a request share.
const maxShare = 0.99

// termFractions returns, for every text term of the n texts text(j), the
// fraction of them that have it.
func termFractions(an *analysis.Analyzer, n int, text func(int) string) map[string]float64 {
	count := make(map[string]int)
	seen := make(map[string]bool)
	var terms []string
	for j := range n {
		clear(seen)
		terms = an.Terms(terms[:0], text(j))
		for _, t := range terms {
			if !seen[t] {
				seen[t] = true
				count[t]++
			}
		}
	}
	f := make(map[string]float64, len(count))
	for t, c := range count {
		f[t] = float64(c) / float64(n)
	}
	return f
}

// WriteRequestShares writes shares in analysis.ParseRequestShares's
// format, largest share first (then by term), four decimals; the lines of
// header come first as comments.
func WriteRequestShares(w io.Writer, shares map[string]float64, header []string) error {
	var b strings.Builder
	for _, h := range header {
		b.WriteString("# " + h + "\n")
	}
	terms := slices.SortedFunc(maps.Keys(shares), func(a, b string) int {
		return cmp.Or(cmp.Compare(shares[b], shares[a]), strings.Compare(a, b))
	})
	for _, t := range terms {
		v := strconv.FormatFloat(shares[t], 'f', 4, 64)
		if v == "0.0000" {
			continue
		}
		fmt.Fprintf(&b, "%s\t%s\n", t, v)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
