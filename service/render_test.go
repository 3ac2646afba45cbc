package service

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/schema"
)

// The fmt-based renderings the strconv ones replaced, as references.

// The references render from the registered tools, not from what an entry
// stores.

func refRenderSearch(query string, r *tooldexv1.SearchResponse, tools []*tooldexv1.Tool) string {
	var b strings.Builder
	withSchemas := r.GetMode() == tooldexv1.QueryMode_QUERY_MODE_SELECT
	switch {
	case len(r.GetResults()) > 0:
		fmt.Fprintf(&b, "Found %d deferred %s for %q (%d searched):\n", len(r.GetResults()), plural(len(r.GetResults()), "tool"), query, r.GetTotalDeferredTools())
		refRenderResults(&b, r.GetResults(), tools, withSchemas)
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

func refRenderDiscover(query string, r *tooldexv1.DiscoverResponse, tools []*tooldexv1.Tool) string {
	var b strings.Builder
	if len(r.GetResults()) == 0 {
		fmt.Fprintf(&b, "No deferred tools match %q (%d searched). Describe the task differently or with fewer details.\n", query, r.GetTotalDeferredTools())
		return b.String()
	}
	fmt.Fprintf(&b, "Found %d deferred %s for %q (%d searched):\n", len(r.GetResults()), plural(len(r.GetResults()), "tool"), query, r.GetTotalDeferredTools())
	refRenderResults(&b, r.GetResults(), tools, true)
	b.WriteString(invokeHint + "\n")
	return b.String()
}

func refRenderResults(b *strings.Builder, results []*tooldexv1.SearchResult, tools []*tooldexv1.Tool, withSchemas bool) {
	for i, res := range results {
		tl := tools[i]
		fmt.Fprintf(b, "%d. %s (score %.2f)", i+1, res.GetTool().GetName(), res.GetScore())
		if l := refOneLine(tl.GetDescription()); l != "" {
			fmt.Fprintf(b, ": %s", l)
		}
		b.WriteByte('\n')
		if withSchemas {
			js := catalog.DefaultSchemaJSON
			if tl.GetInputSchema() != nil {
				js = catalog.SchemaJSON(tl.GetInputSchema())
			}
			fmt.Fprintf(b, "   Schema: %s\n", js)
		} else if p := schema.ParamSummary(tl.GetInputSchema()); p != "" {
			fmt.Fprintf(b, "   Params: %s\n", p)
		}
	}
}

// refOneLine is the first line as Search shows it.
func refOneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) <= catalog.OneLineMax {
		return s
	}
	cut := catalog.OneLineMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > catalog.OneLineMax/2 {
		cut = i
	}
	return strings.TrimSpace(s[:cut]) + "…"
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
		var entries []*catalog.Entry
		var tools []*tooldexv1.Tool
		for j := range r.IntN(7) {
			tl := randTool(r, fmt.Sprintf("tool_%d_%d", i, j))
			if r.IntN(4) == 0 {
				tl.Description = strings.Repeat(randWords(r, 4)+" ", 12) + "\n" + tl.Description // cut
			}
			e := catalog.NewEntry(&catalog.ValidationError{}, "t", tl, "t", tooldexv1.Origin_ORIGIN_FRONTEND, "", s.policy.loading(tl))
			entries = append(entries, e)
			tools = append(tools, tl)
			results = append(results, &tooldexv1.SearchResult{Tool: e.Tool(), Score: scores[r.IntN(len(scores))] + float64(r.IntN(3))*r.Float64()})
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
		if got, want := renderSearch(q, sr, entries), refRenderSearch(q, sr, tools); got != want {
			t.Fatalf("renderSearch:\n got %q\nwant %q", got, want)
		}
		dr := &tooldexv1.DiscoverResponse{Results: results, TotalDeferredTools: sr.TotalDeferredTools}
		if got, want := renderDiscover(q, dr, entries), refRenderDiscover(q, dr, tools); got != want {
			t.Fatalf("renderDiscover:\n got %q\nwant %q", got, want)
		}
	}
}
