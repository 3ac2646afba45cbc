package service

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

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

// The renderings append to a byte slice with strconv rather than going
// through fmt: Search renders on every call. render_test.go checks them
// against fmt-based references.

func renderSearch(query string, r *tooldexv1.SearchResponse, entries []*entry) string {
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

func renderDiscover(query string, r *tooldexv1.DiscoverResponse, entries []*entry) string {
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
func renderSize(query string, entries []*entry, withSchemas bool) int {
	n := 320 + 2*len(query)
	for _, e := range entries {
		n += 40 + len(e.name) + e.oneLineLen()
		if !withSchemas {
			n += e.paramsSize()
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

// renderResults lists results; entries[i] holds the rendering of
// results[i]'s tool, prepared at registration. Schemas (select: and
// Discover) are rendered from the stored wire bytes the first time a tool
// is listed with them (entry.schemaJSON): the catalog does not keep a JSON
// copy of every schema.
func renderResults(b []byte, results []*tooldexv1.SearchResult, entries []*entry, withSchemas bool) []byte {
	for i, res := range results {
		e := entries[i]
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, ". "...)
		b = append(b, res.GetTool().GetName()...)
		b = append(b, " (score "...)
		b = strconv.AppendFloat(b, res.GetScore(), 'f', 2, 64)
		b = append(b, ')')
		if e.lineLen > 0 || e.lineCut() {
			b = append(b, ": "...)
			b = e.appendOneLine(b)
		}
		b = append(b, '\n')
		if withSchemas {
			b = append(b, "   Schema: "...)
			if js := e.schemaJSON(); js != "" {
				b = append(b, js...)
			} else {
				b = append(b, defaultSchemaJSON...)
			}
			b = append(b, '\n')
		} else if e.hasParams() {
			b = append(b, "   Params: "...)
			b = e.appendParams(b)
			b = append(b, '\n')
		}
	}
	return b
}

// ellipsis follows a cut first line.
const ellipsis = "…"

// oneLineSpan returns where the first line of description s lies in it, cut
// at a word boundary to at most oneLineMax bytes; cut says it was cut (it
// is then shown followed by "…"). The line is a substring of the
// description, so an entry keeps its offsets rather than a copy. s is at
// most MaxDescription bytes long.
func oneLineSpan(s string) (off, n uint16, cut bool) {
	start := len(s) - len(strings.TrimLeftFunc(s, unicode.IsSpace)) // where TrimSpace(s) starts
	line := strings.TrimSpace(s)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[:i]) // starts where it did: it has no leading space left
	}
	if len(line) > oneLineMax {
		c := oneLineMax
		for c > 0 && !utf8.RuneStart(line[c]) {
			c--
		}
		if i := strings.LastIndexByte(line[:c], ' '); i > oneLineMax/2 {
			c = i
		}
		line, cut = strings.TrimSpace(line[:c]), true // trims the right only: line starts with no space
	}
	return uint16(start), uint16(len(line)), cut
}

// ParamSummary lists a schema's top-level parameters, required first:
// "cron (string, required), prompt (string)". A parameter with no type
// shows its type list joined by "|", "enum" when it only has an enum, or
// "any".
func ParamSummary(schema *structpb.Struct) string {
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
		case props[n].GetStructValue().GetFields()["enum"] != nil:
			desc += " (enum"
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

// defaultSchemaJSON is what a tool without an input schema takes.
const defaultSchemaJSON = `{"type":"object"}`

// schemaJSON renders a schema as compact JSON (encoding/json's: keys
// sorted, HTML characters escaped). Registration refuses the only values
// JSON cannot hold (numbers that are not finite); a schema holding one
// anyway renders as the default.
func schemaJSON(schema *structpb.Struct) string {
	if schema == nil {
		return defaultSchemaJSON
	}
	b, err := json.Marshal(schema.AsMap())
	if err != nil {
		return defaultSchemaJSON
	}
	return string(b)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
