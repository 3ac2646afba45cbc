package service

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// Renderings for a model. Search lists names, scores, one-line
// descriptions and parameter summaries; select: and Discover add each
// tool's full input schema, since their purpose is to load tools.

const (
	oneLineMax = 160
	invokeHint = `Call a deferred tool with ExecuteTool {"tool_name": "<name>", "params": {...}}.`
)

func renderSearch(query string, r *tooldexv1.SearchResponse, entries []*entry) string {
	var b strings.Builder
	withSchemas := r.GetMode() == tooldexv1.QueryMode_QUERY_MODE_SELECT
	switch {
	case len(r.GetResults()) > 0:
		fmt.Fprintf(&b, "Found %d deferred %s for %q (%d searched):\n", len(r.GetResults()), plural(len(r.GetResults()), "tool"), query, r.GetTotalDeferredTools())
		renderResults(&b, r.GetResults(), entries, withSchemas)
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

func renderDiscover(query string, r *tooldexv1.DiscoverResponse, entries []*entry) string {
	var b strings.Builder
	if len(r.GetResults()) == 0 {
		fmt.Fprintf(&b, "No deferred tools match %q (%d searched). Describe the task differently or with fewer details.\n", query, r.GetTotalDeferredTools())
		return b.String()
	}
	fmt.Fprintf(&b, "Found %d deferred %s for %q (%d searched):\n", len(r.GetResults()), plural(len(r.GetResults()), "tool"), query, r.GetTotalDeferredTools())
	renderResults(&b, r.GetResults(), entries, true)
	b.WriteString(invokeHint + "\n")
	return b.String()
}

// renderResults lists results; entries[i] holds the rendering of
// results[i]'s tool, prepared at registration. Schemas (select: and
// Discover) are rendered from the stored wire bytes when asked for: the
// catalog does not keep a JSON copy of every schema.
func renderResults(b *strings.Builder, results []*tooldexv1.SearchResult, entries []*entry, withSchemas bool) {
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

// oneLine returns the first line of a description, cut at a word boundary
// to at most oneLineMax bytes.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) <= oneLineMax {
		return s
	}
	cut := oneLineMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > oneLineMax/2 {
		cut = i
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

// paramSummary lists top-level parameters, required first: "cron (string,
// required), prompt (string)".
func paramSummary(schema *structpb.Struct) string {
	props := schema.GetFields()["properties"].GetStructValue().GetFields()
	if len(props) == 0 {
		return ""
	}
	required := make(map[string]bool)
	for _, v := range schema.GetFields()["required"].GetListValue().GetValues() {
		required[v.GetStringValue()] = true
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if required[a] != required[b] {
			if required[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names))
	for _, n := range names {
		typ := props[n].GetStructValue().GetFields()["type"]
		desc := n
		switch {
		case typ.GetStringValue() != "":
			desc += " (" + typ.GetStringValue()
		case typ.GetListValue() != nil:
			var ts []string
			for _, v := range typ.GetListValue().GetValues() {
				ts = append(ts, v.GetStringValue())
			}
			desc += " (" + strings.Join(ts, "|")
		default:
			desc += " (any"
		}
		if required[n] {
			desc += ", required"
		}
		parts = append(parts, desc+")")
	}
	return strings.Join(parts, ", ")
}

func schemaJSON(schema *structpb.Struct) string {
	if schema == nil {
		return `{"type":"object"}`
	}
	b, err := json.Marshal(schema.AsMap())
	if err != nil {
		return `{"type":"object"}`
	}
	return string(b)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
