package index

import (
	"fmt"
	"sort"
	"strings"
)

// Limits on what ParamText reads from a schema.
const (
	paramMaxDepth = 4
	paramMaxProps = 200
)

// ParamText returns the searchable text of a JSON Schema: the names,
// descriptions and string enum values of its properties, nested objects and
// array items included (to depth 4, at most 200 properties), in a stable
// order.
func ParamText(schema map[string]any) string {
	var b strings.Builder
	n := 0
	var walk func(s map[string]any, depth int)
	walk = func(s map[string]any, depth int) {
		if depth > paramMaxDepth || s == nil {
			return
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items, depth+1)
		}
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, name := range names {
			if n >= paramMaxProps {
				return
			}
			n++
			b.WriteString(name)
			b.WriteByte('\n')
			p, _ := props[name].(map[string]any)
			if d, ok := p["description"].(string); ok {
				b.WriteString(d)
				b.WriteByte('\n')
			}
			if e, ok := p["enum"].([]any); ok {
				for _, v := range e {
					if s, ok := v.(string); ok {
						fmt.Fprintf(&b, "%s ", s)
					}
				}
				b.WriteByte('\n')
			}
			walk(p, depth+1)
		}
	}
	walk(schema, 0)
	return b.String()
}
