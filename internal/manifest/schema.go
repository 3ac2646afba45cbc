package manifest

import (
	"net/url"
	"strconv"
	"strings"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// Schemas are handled as the generic values encoding/json and
// structpb.Struct.AsMap produce: map[string]any, []any, string, float64,
// bool and nil. No function here modifies its input.

// maxRefDepth bounds how many $refs are inlined along one path of a schema,
// so that recursive schemas terminate.
const maxRefDepth = 8

// inputSchema returns a tool's input schema as a fresh map, without
// "$schema" and with "type": "object" at its root when it has no type.
func inputSchema(t *tooldexv1.Tool) map[string]any {
	var m map[string]any
	if s := t.GetInputSchema(); s != nil {
		m = s.AsMap()
	}
	if m == nil {
		m = map[string]any{}
	}
	delete(m, "$schema")
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	return m
}

// copyMap returns a shallow copy of m.
func copyMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// resolver finds local $ref targets ("#", "#/$defs/x", "#/definitions/x",
// any JSON pointer into the root schema).
type resolver struct {
	root map[string]any
}

// resolve returns the schema ref points to, or false for a non-local or
// dangling reference.
func (r resolver) resolve(ref string) (map[string]any, bool) {
	if ref == "#" {
		return r.root, true
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	var cur any = r.root
	for _, tok := range strings.Split(ref[2:], "/") {
		if t, err := url.PathUnescape(tok); err == nil {
			tok = t
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// flatten returns s with its local $ref inlined (the keywords next to the
// $ref win over the target's) and its allOf merged into it, repeatedly,
// while depth stays under maxRefDepth. It returns the depth reached. A $ref
// it cannot or may not inline is dropped, leaving its siblings.
//
// allOf is merged, not kept: properties are united (the first definition of
// a property wins), required lists are united, and any other keyword is
// taken from the first subschema that has it when the parent has none.
// This is exact for the common use (composing object schemas) and at worst
// keeps the first of two conflicting constraints.
func (r resolver) flatten(s map[string]any, depth int) (map[string]any, int) {
	for {
		if ref, ok := s["$ref"].(string); ok {
			target, found := r.resolve(ref)
			next := make(map[string]any, len(s))
			if found && depth < maxRefDepth {
				for k, v := range target {
					next[k] = v
				}
				depth++
			}
			for k, v := range s {
				if k != "$ref" {
					next[k] = v
				}
			}
			s = next
			continue
		}
		if all, ok := s["allOf"].([]any); ok {
			merged := copyMap(s)
			delete(merged, "allOf")
			for _, sub := range all {
				m, ok := sub.(map[string]any)
				if !ok {
					continue
				}
				m, _ = r.flatten(m, depth)
				mergeInto(merged, m)
			}
			s = merged
			continue
		}
		return s, depth
	}
}

// mergeInto merges src into dst as flatten documents for allOf.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			props, _ := dst[k].(map[string]any)
			props = copyMap(props)
			if sp, ok := v.(map[string]any); ok {
				for name, ps := range sp {
					if _, ok := props[name]; !ok {
						props[name] = ps
					}
				}
			}
			dst[k] = props
		case "required":
			req, _ := dst[k].([]any)
			seen := make(map[string]bool)
			var out []any
			for _, list := range [][]any{req, asList(v)} {
				for _, x := range list {
					if s, ok := x.(string); ok && !seen[s] {
						seen[s] = true
						out = append(out, s)
					}
				}
			}
			dst[k] = out
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// schemaTypes returns a schema's "type" as a list: one entry for a string,
// the strings of an array, nothing when absent.
func schemaTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// requiredSet returns the names a schema's "required" lists.
func requiredSet(s map[string]any) map[string]bool {
	set := make(map[string]bool)
	for _, x := range asList(s["required"]) {
		if name, ok := x.(string); ok {
			set[name] = true
		}
	}
	return set
}

// isNumber reports whether v is a JSON number as AsMap or encoding/json
// decodes it.
func isNumber(v any) bool {
	switch v.(type) {
	case float64, float32, int, int64, int32:
		return true
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	}
	return 0, false
}
