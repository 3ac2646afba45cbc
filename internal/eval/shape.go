package eval

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/tooldex/tooldex/index/analysis"
)

// Shape is a way of rewriting a dataset query into the shape a model sends
// through ToolSearch.
type Shape string

// The query shapes.
const (
	// ShapeFull is the dataset's query, unchanged.
	ShapeFull Shape = "full"
	// ShapeShort is the first ShortWords words of the query (words split
	// at white space, punctuation kept).
	ShapeShort Shape = "short"
	// ShapeKeywords is the query's KeywordCount longest distinct content
	// words (letters and digits, at least 3 bytes, not a stop word,
	// compared lower-cased), in query order, joined by spaces; ties in
	// length go to the earlier word. A query without such words keeps its
	// first ShortWords words.
	ShapeKeywords Shape = "keywords"
)

// ShortWords is the length, in words, of a short query; KeywordCount is the
// number of words of a keywords query.
const (
	ShortWords   = 6
	KeywordCount = 5
)

// Shapes lists the shapes in the order they are documented.
var Shapes = []Shape{ShapeFull, ShapeShort, ShapeKeywords}

// ParseShapes parses a shape specification: one shape, or several joined by
// '+' (full+short), whose query sets are then evaluated together.
func ParseShapes(spec string) ([]Shape, error) {
	var out []Shape
	for p := range strings.SplitSeq(spec, "+") {
		s := Shape(strings.TrimSpace(p))
		if !slices.Contains(Shapes, s) {
			return nil, fmt.Errorf("query shape %q: want full, short or keywords, or several joined by '+'", p)
		}
		if slices.Contains(out, s) {
			return nil, fmt.Errorf("query shape %q given twice", p)
		}
		out = append(out, s)
	}
	return out, nil
}

// Apply returns q rewritten to shape s. An unknown shape returns q.
func (s Shape) Apply(q string) string {
	switch s {
	case ShapeShort:
		return firstWords(q, ShortWords)
	case ShapeKeywords:
		if k := keywords(q, KeywordCount); k != "" {
			return k
		}
		return firstWords(q, ShortWords)
	}
	return q
}

func firstWords(q string, n int) string {
	f := strings.Fields(q)
	return strings.Join(f[:min(n, len(f))], " ")
}

var stopWords = analysis.New()

// keywords returns the n longest distinct content words of q in q's order.
func keywords(q string, n int) string {
	type word struct {
		w   string
		pos int
	}
	var words []word
	seen := make(map[string]bool)
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		lw := strings.ToLower(w)
		if len(lw) < 3 || seen[lw] || stopWords.IsStopWord(lw) {
			continue
		}
		seen[lw] = true
		words = append(words, word{w, len(words)})
	}
	slices.SortStableFunc(words, func(a, b word) int { return len(b.w) - len(a.w) })
	words = words[:min(n, len(words))]
	slices.SortFunc(words, func(a, b word) int { return a.pos - b.pos })
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.w
	}
	return strings.Join(out, " ")
}

// MultiTool selects or builds queries with several relevant tools.
type MultiTool string

// The multi-tool modes.
const (
	// MultiAll keeps every query.
	MultiAll MultiTool = "all"
	// MultiOnly keeps the queries with at least two relevant tools.
	MultiOnly MultiTool = "only"
	// MultiPairs joins queries two by two in file order (1st with 2nd, 3rd
	// with 4th; an odd last query is dropped): the texts, each shaped
	// first, joined by " and ", the relevant lists united. It turns a
	// one-tool dataset into a multi-tool one.
	MultiPairs MultiTool = "pairs"
)

// ParseMultiTool parses a multi-tool mode.
func ParseMultiTool(s string) (MultiTool, error) {
	switch m := MultiTool(s); m {
	case MultiAll, MultiOnly, MultiPairs:
		return m, nil
	}
	return "", fmt.Errorf("multi-tool mode %q: want all, only or pairs", s)
}

// Reshape returns a copy of ds whose queries are ds's in every shape of
// shapes, in turn, after multi-tool selection; the ids of all but the first
// shape get "#" and the shape's name appended. The tools are shared with ds.
// It fails when no query is left.
func Reshape(ds *Dataset, shapes []Shape, multi MultiTool) (*Dataset, error) {
	out := &Dataset{Tools: ds.Tools}
	for i, s := range shapes {
		suffix := ""
		if i > 0 {
			suffix = "#" + string(s)
		}
		switch multi {
		case MultiPairs:
			for j := 0; j+1 < len(ds.Queries); j += 2 {
				a, b := ds.Queries[j], ds.Queries[j+1]
				rel := slices.Clone(a.Relevant)
				for _, r := range b.Relevant {
					if !slices.Contains(rel, r) {
						rel = append(rel, r)
					}
				}
				out.Queries = append(out.Queries, Query{
					ID:       a.ID + "+" + b.ID + suffix,
					Text:     s.Apply(a.Text) + " and " + s.Apply(b.Text),
					Relevant: rel,
				})
			}
		default:
			for _, q := range ds.Queries {
				if multi == MultiOnly && len(q.Relevant) < 2 {
					continue
				}
				out.Queries = append(out.Queries, Query{ID: q.ID + suffix, Text: s.Apply(q.Text), Relevant: q.Relevant})
			}
		}
	}
	if len(out.Queries) == 0 {
		return nil, errors.New("eval: no query left after the multi-tool selection")
	}
	return out, nil
}
