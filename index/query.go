package index

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on queries. Longer input is rejected with ErrInvalidQuery rather
// than truncated, so that a caller never gets results for a query it did not
// send. A query's cost grows with its terms' postings, and one of
// MaxQueryBytes can hold hundreds of words: a search scores at most
// MaxQueryTerms distinct text terms and as many keyword terms, those of the
// largest weight (the rarest words), and the required ones. Of the
// evaluation datasets' requests only a few joined pairs have more
// (docs/BENCHMARKS.md, session 18).
const (
	MaxQueryBytes = 4096
	MaxQueryTerms = 64
	MaxSelect     = 256
	DefaultMax    = 5
	MaxResults    = 100
)

// ErrInvalidQuery is returned (wrapped) for queries that cannot be run.
var ErrInvalidQuery = errors.New("invalid query")

// QueryKind is how a query is interpreted.
type QueryKind int

// Query kinds.
const (
	KindKeyword  QueryKind = iota // keywords, ranked
	KindSelect                    // select:A,B
	KindDiscover                  // discover:<task>
	KindPrefix                    // mcp__server prefix listing
)

// Query is a parsed ToolSearch query.
type Query struct {
	Kind QueryKind
	// Text is what is ranked: the keywords, or the task after discover:.
	Text string
	// Names are the select: names, in request order, without duplicates.
	Names []string
	// Prefix is the lower-case mcp__ prefix of a KindPrefix query.
	Prefix string
}

// ParseQuery interprets a ToolSearch query: "select:A,B" selects tools by
// name, "discover:<task>" ranks by the text scorer alone, a query starting with
// "mcp__" lists the tools whose names start with it, anything else is a
// keyword query ("+term" required). Prefixes are case-insensitive.
func ParseQuery(q string) (Query, error) {
	if len(q) > MaxQueryBytes {
		return Query{}, fmt.Errorf("%w: query is %d bytes, at most %d", ErrInvalidQuery, len(q), MaxQueryBytes)
	}
	if !utf8.ValidString(q) {
		return Query{}, fmt.Errorf("%w: query is not valid UTF-8", ErrInvalidQuery)
	}
	q = strings.TrimSpace(q)
	if q == "" {
		return Query{}, fmt.Errorf("%w: query is empty", ErrInvalidQuery)
	}
	if rest, ok := cutPrefixFold(q, "select:"); ok {
		var names []string
		seen := make(map[string]bool)
		for _, n := range strings.Split(rest, ",") {
			n = strings.TrimSpace(n)
			if n == "" || seen[n] {
				continue
			}
			seen[n] = true
			names = append(names, n)
		}
		if len(names) == 0 {
			return Query{}, fmt.Errorf("%w: select: names no tool", ErrInvalidQuery)
		}
		if len(names) > MaxSelect {
			return Query{}, fmt.Errorf("%w: select: lists %d names, at most %d", ErrInvalidQuery, len(names), MaxSelect)
		}
		return Query{Kind: KindSelect, Names: names}, nil
	}
	if rest, ok := cutPrefixFold(q, "discover:"); ok {
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return Query{}, fmt.Errorf("%w: discover: needs a task description", ErrInvalidQuery)
		}
		return Query{Kind: KindDiscover, Text: rest}, nil
	}
	if rest, ok := cutPrefixFold(q, "mcp__"); ok && rest != "" && !strings.ContainsAny(q, " \t\r\n") {
		return Query{Kind: KindPrefix, Prefix: strings.ToLower(q), Text: q}, nil
	}
	return Query{Kind: KindKeyword, Text: q}, nil
}

// DiscoverQuery checks a task description that is ranked as
// discover:<text>, whatever it starts with.
func DiscoverQuery(text string) (Query, error) {
	if len(text) > MaxQueryBytes {
		return Query{}, fmt.Errorf("%w: query is %d bytes, at most %d", ErrInvalidQuery, len(text), MaxQueryBytes)
	}
	if !utf8.ValidString(text) {
		return Query{}, fmt.Errorf("%w: query is not valid UTF-8", ErrInvalidQuery)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return Query{}, fmt.Errorf("%w: discover needs a task description", ErrInvalidQuery)
	}
	return Query{Kind: KindDiscover, Text: text}, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}
