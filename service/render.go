package service

import (
	"fmt"
	"strconv"
	"unsafe"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
)

// Renderings for a model. Search lists names, scores, one-line
// descriptions and parameter summaries; select: and Discover add each
// tool's full input schema, since their purpose is to load tools.

const invokeHint = `Call a deferred tool with ExecuteTool {"tool_name": "<name>", "params": {...}}.`

// The renderings append to a byte slice with strconv rather than going
// through fmt: Search renders on every call. render_test.go checks them
// against fmt-based references.

func renderSearch(query string, r *tooldexv1.SearchResponse, entries []*catalog.Entry) string {
	withSchemas := r.GetMode() == tooldexv1.QueryMode_QUERY_MODE_SELECT
	b := make([]byte, 0, renderSize(query, entries, withSchemas))
	n := len(r.GetResults())
	switch {
	case n > 0:
		b = appendFound(b, n, query, r.GetTotalDeferredTools())
		b = renderResults(b, r.GetResults(), entries, withSchemas)
	case len(r.GetAlreadyLoaded()) == 0:
		b = append(b, "No matching deferred tools found for "...)
		b = strconv.AppendQuote(b, query)
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(r.GetTotalDeferredTools()), 10)
		b = append(b, " searched). Try fewer or broader keywords, discover:<what you want to do>, or select:<exact tool name>.\n"...)
	default:
		b = append(b, "No deferred tools found for "...)
		b = strconv.AppendQuote(b, query)
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(r.GetTotalDeferredTools()), 10)
		b = append(b, " searched).\n"...)
	}
	if nf := r.GetNotFound(); len(nf) > 0 {
		b = append(b, "Not found: "...)
		b = appendJoined(b, nf)
		b = append(b, ". Check the spelling, or search by keywords.\n"...)
	}
	if al := r.GetAlreadyLoaded(); len(al) > 0 {
		b = append(b, "Already loaded as core "...)
		b = append(b, plural(len(al), "tool")...)
		b = append(b, ", call directly: "...)
		b = appendJoined(b, al)
		b = append(b, ".\n"...)
	}
	if n > 0 {
		b = append(b, invokeHint...)
		if !withSchemas {
			b = append(b, " For full parameter schemas use select:<name>[,<name>...]."...)
		}
		b = append(b, '\n')
	}
	return bytesString(b)
}

func renderDiscover(query string, r *tooldexv1.DiscoverResponse, entries []*catalog.Entry) string {
	n := len(r.GetResults())
	if n == 0 {
		return fmt.Sprintf("No deferred tools match %q (%d searched). Describe the task differently or with fewer details.\n", query, r.GetTotalDeferredTools())
	}
	b := make([]byte, 0, renderSize(query, entries, true))
	b = appendFound(b, n, query, r.GetTotalDeferredTools())
	b = renderResults(b, r.GetResults(), entries, true)
	b = append(b, invokeHint+"\n"...)
	return bytesString(b)
}

// bytesString returns b as a string without copying it, as
// strings.Builder does: b must not be modified afterwards. The renderings
// are built in one buffer that nothing else holds; copying it would cost
// an allocation and a copy of the text on every Search.
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendFound appends `Found N deferred tools for "query" (M searched):`.
func appendFound(b []byte, n int, query string, total int32) []byte {
	b = append(b, "Found "...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, " deferred "...)
	b = append(b, plural(n, "tool")...)
	b = append(b, " for "...)
	b = strconv.AppendQuote(b, query)
	b = append(b, " ("...)
	b = strconv.AppendInt(b, int64(total), 10)
	return append(b, " searched):\n"...)
}

// renderSize estimates a rendering's length, so that it is built in one
// allocation. Schemas are not counted: they are rendered when asked for.
func renderSize(query string, entries []*catalog.Entry, withSchemas bool) int {
	n := 320 + 2*len(query)
	for _, e := range entries {
		n += 40 + len(e.Name()) + len(e.OneLine())
		if !withSchemas {
			n += len(e.Params())
		}
	}
	return n
}

func appendJoined(b []byte, list []string) []byte {
	for i, s := range list {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, s...)
	}
	return b
}

// renderResults lists results; entries[i] holds the texts of results[i]'s
// tool, derived at registration. Schemas (select: and Discover) are
// rendered as JSON the first time a tool is listed with them
// (catalog.Entry.SchemaJSON).
func renderResults(b []byte, results []*tooldexv1.SearchResult, entries []*catalog.Entry, withSchemas bool) []byte {
	for i, res := range results {
		e := entries[i]
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, ". "...)
		b = append(b, res.GetTool().GetName()...)
		b = append(b, " (score "...)
		b = strconv.AppendFloat(b, res.GetScore(), 'f', 2, 64)
		b = append(b, ')')
		if line := e.OneLine(); line != "" {
			b = append(b, ": "...)
			b = append(b, line...)
		}
		b = append(b, '\n')
		if withSchemas {
			b = append(b, "   Schema: "...)
			if js := e.SchemaJSON(); js != "" {
				b = append(b, js...)
			} else {
				b = append(b, catalog.DefaultSchemaJSON...)
			}
			b = append(b, '\n')
		} else if p := e.Params(); p != "" {
			b = append(b, "   Params: "...)
			b = append(b, p...)
			b = append(b, '\n')
		}
	}
	return b
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
