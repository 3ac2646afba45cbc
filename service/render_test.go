package service

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// The fmt-based renderings the strconv ones replaced, as references.

func refRenderSearch(query string, r *tooldexv1.SearchResponse, entries []*entry) string {
	var b strings.Builder
	withSchemas := r.GetMode() == tooldexv1.QueryMode_QUERY_MODE_SELECT
	switch {
	case len(r.GetResults()) > 0:
		fmt.Fprintf(&b, "Found %d deferred %s for %q (%d searched):\n", len(r.GetResults()), plural(len(r.GetResults()), "tool"), query, r.GetTotalDeferredTools())
		refRenderResults(&b, r.GetResults(), entries, withSchemas)
	case len(r.GetAlreadyLoaded()) == 0:
		fmt.Fprintf(&b, "No matching deferred tools found for %q (%d searched). Try fewer or broader keywords, discover:<what you want to do>, or select:<exact tool name>.\n", query, r.GetTotalDeferredTools())
	default:
		fmt.Fprintf(&b, "No deferred tools found for %q (%d searched).\n", query, r.GetTotalDeferredTools())
	}
	if nf := r.GetNotFound(); len(nf) > 0 {
		fmt.Fprintf(&b, "Not found: %s. Check the spelling, or search by keywords.\n", strings.Join(nf, ", "))
	}
	if al := r.GetAlreadyLoaded(); len(al) > 0 {
		fmt.Fprintf(&b, "Already loaded as core %s, call directly: %s.\n", plural(len(al), "tool"), strings.Join(al, ", "))
	}
	if len(r.GetResults()) > 0 {
		b.WriteString(invokeHint)
		if !withSchemas {
			b.WriteString(" For full parameter schemas use select:<name>[,<name>...].")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func refRenderDiscover(query string, r *tooldexv1.DiscoverResponse, entries []*entry) string {
	var b strings.Builder
	if len(r.GetResults()) == 0 {
		fmt.Fprintf(&b, "No deferred tools match %q (%d searched). Describe the task differently or with fewer details.\n", query, r.GetTotalDeferredTools())
		return b.String()
	}
	fmt.Fprintf(&b, "Found %d deferred %s for %q (%d searched):\n", len(r.GetResults()), plural(len(r.GetResults()), "tool"), query, r.GetTotalDeferredTools())
	refRenderResults(&b, r.GetResults(), entries, true)
	b.WriteString(invokeHint + "\n")
	return b.String()
}

func refRenderResults(b *strings.Builder, results []*tooldexv1.SearchResult, entries []*entry, withSchemas bool) {
	for i, res := range results {
		e := entries[i]
		fmt.Fprintf(b, "%d. %s (score %.2f)", i+1, res.GetTool().GetName(), res.GetScore())
		if e.oneLine != "" {
			fmt.Fprintf(b, ": %s", e.oneLine)
		}
		b.WriteByte('\n')
		if withSchemas {
			fmt.Fprintf(b, "   Schema: %s\n", schemaJSON(inputSchema(e.tool)))
		} else if e.params != "" {
			fmt.Fprintf(b, "   Params: %s\n", e.params)
		}
	}
}

// TestRenderMatchesFmt checks the renderings against the fmt references on
// random responses.
func TestRenderMatchesFmt(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	s := New(Config{})
	queries := []string{"", "slack send", `quote " and \ and 日本語`, "\x00\xff bad utf-8", "select:a,b"}
	scores := []float64{0, 1, 0.125, 0.005, 0.994999, 0.995, 1e-9, 12.3456}
	for i := range 2000 {
		var results []*tooldexv1.SearchResult
		var entries []*entry
		for j := range r.IntN(7) {
			e := s.newEntry(&ValidationError{}, "t", randTool(r, fmt.Sprintf("tool_%d_%d", i, j)), tooldexv1.Origin_ORIGIN_FRONTEND, "")
			entries = append(entries, e)
			results = append(results, &tooldexv1.SearchResult{Tool: e.tool, Score: scores[r.IntN(len(scores))] + float64(r.IntN(3))*r.Float64()})
		}
		var nf, al []string
		for range r.IntN(3) {
			nf = append(nf, randWords(r, 1))
		}
		for range r.IntN(3) {
			al = append(al, randWords(r, 1))
		}
		q := queries[r.IntN(len(queries))] + randWords(r, r.IntN(3))
		sr := &tooldexv1.SearchResponse{Results: results, TotalDeferredTools: int32(r.IntN(1000)), NotFound: nf, AlreadyLoaded: al,
			Mode: []tooldexv1.QueryMode{tooldexv1.QueryMode_QUERY_MODE_KEYWORD, tooldexv1.QueryMode_QUERY_MODE_SELECT}[r.IntN(2)]}
		if got, want := renderSearch(q, sr, entries), refRenderSearch(q, sr, entries); got != want {
			t.Fatalf("renderSearch:\n got %q\nwant %q", got, want)
		}
		dr := &tooldexv1.DiscoverResponse{Results: results, TotalDeferredTools: sr.TotalDeferredTools}
		if got, want := renderDiscover(q, dr, entries), refRenderDiscover(q, dr, entries); got != want {
			t.Fatalf("renderDiscover:\n got %q\nwant %q", got, want)
		}
	}
}
