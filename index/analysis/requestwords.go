package analysis

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
)

// Request words.
//
// People ask for a tool in a sentence ("I want to find…, can you help me
// with…"), and the words of the asking say nothing about which tool is
// meant. A catalog's idf cannot tell: tools rarely say "help" or
// "please", so those words rank as rare, and a tool that happens to use
// one outranks the tool the request is about. The request share g of a
// term is how much more often requests use it than tool texts do, in
// every one of several sets of real requests (the minimum over the sets,
// so that a topic common in one set's requests, "news" or "image", is
// not a request word); the index weighs a query term of share g by
// (1 − g)^λ (index.Config.RequestDamping).
//
// requestwords.tsv is made by `tooldex-dev request-words` from the
// development datasets whose licences allow it (its header names them);
// docs/BENCHMARKS.md measures it leave-one-dataset-out.

//go:embed requestwords.tsv
var requestWordsFile string

// maxRequestWords bounds a request-word table (the embedded one has a few
// hundred entries).
const maxRequestWords = 1 << 16

var requestShares = sync.OnceValue(func() map[string]float64 {
	m, err := ParseRequestShares(strings.NewReader(requestWordsFile))
	if err != nil {
		panic("analysis: requestwords.tsv: " + err.Error())
	}
	return m
})

// RequestShares returns the embedded request share of every term that
// has one, by term (a stem, as Terms gives it). The map is shared: do not
// modify it.
func RequestShares() map[string]float64 { return requestShares() }

// ParseRequestShares reads a request-word table: one "term<TAB>share" a
// line, share in (0, 1), each term once; blank lines and lines starting
// with '#' are skipped. Errors name the line.
func ParseRequestShares(r io.Reader) (map[string]float64, error) {
	m := make(map[string]float64)
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		term, share, ok := strings.Cut(line, "\t")
		if !ok || term == "" || strings.ContainsAny(term, " \t\r") {
			return nil, fmt.Errorf("line %d: want term<TAB>share", n)
		}
		g, err := strconv.ParseFloat(share, 64)
		if err != nil || math.IsNaN(g) || g <= 0 || g >= 1 {
			return nil, fmt.Errorf("line %d: share %q: want a number in (0, 1)", n, share)
		}
		if _, dup := m[term]; dup {
			return nil, fmt.Errorf("line %d: term %q given twice", n, term)
		}
		if len(m) == maxRequestWords {
			return nil, fmt.Errorf("line %d: more than %d terms", n, maxRequestWords)
		}
		m[term] = g
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return m, nil
}
