package manifest

import "sort"

// strictFormats are the string formats OpenAI's strict mode accepts.
var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true,
	"email": true, "hostname": true, "ipv4": true, "ipv6": true, "uuid": true,
}

// strictKept are the keywords strict mode accepts that are copied as they
// are. type, properties, required, additionalProperties, items, anyOf,
// oneOf, allOf, $defs, definitions and format are handled on their own;
// everything else is dropped (see the package documentation).
var strictKept = []string{
	"description", "title", "enum", "const", "$ref", "pattern",
	"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minItems", "maxItems",
}

// strictSchema converts a tool's root input schema for OpenAI strict mode
// (see the package documentation). It reports false when the schema holds
// something strict mode cannot express; the result is then meaningless.
func strictSchema(root map[string]any) (map[string]any, bool) {
	c := strictConverter{resolver: resolver{root: root}, ok: true}
	out := c.node(root, true)
	return out, c.ok
}

type strictConverter struct {
	resolver
	ok bool
}

func (c *strictConverter) fail() { c.ok = false }

func (c *strictConverter) node(v any, root bool) map[string]any {
	s, ok := v.(map[string]any)
	if !ok {
		c.fail() // a boolean schema: true is "anything", false is "nothing"
		return map[string]any{}
	}
	if _, ok := s["allOf"]; ok {
		// Merge allOf, inlining $refs inside it, but keep the node's own $ref:
		// strict mode understands $ref and $defs.
		ref, hasRef := s["$ref"]
		rest := copyMap(s)
		delete(rest, "$ref")
		s, _ = c.flatten(rest, 0)
		if hasRef {
			s["$ref"] = ref
		}
	}
	out := make(map[string]any)
	for _, k := range strictKept {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	if f, ok := s["format"].(string); ok && strictFormats[f] {
		out["format"] = f
	}
	if t, ok := s["type"]; ok {
		out["type"] = t
	}
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := s[k].(map[string]any); ok {
			cd := make(map[string]any, len(defs))
			for name, d := range defs {
				cd[name] = c.node(d, false)
			}
			out[k] = cd
		}
	}
	if branches := firstList(s, "anyOf", "oneOf"); branches != nil {
		if root {
			c.fail() // strict mode refuses anyOf at the root
		}
		cb := make([]any, len(branches))
		for i, b := range branches {
			cb[i] = c.node(b, false)
		}
		out["anyOf"] = cb
	}

	types := schemaTypes(s)
	_, hasProps := s["properties"]
	isObject := hasProps || contains(types, "object")
	_, hasItems := s["items"]
	_, hasPrefix := s["prefixItems"]
	isArray := hasItems || hasPrefix || contains(types, "array")
	if isObject {
		c.object(s, out, root)
	}
	if isArray {
		switch it := s["items"].(type) {
		case map[string]any:
			out["items"] = c.node(it, false)
		case []any:
			out["items"] = c.tuple(it)
		default:
			if prefix := asList(s["prefixItems"]); len(prefix) > 0 {
				out["items"] = c.tuple(prefix)
			} else {
				c.fail() // an array of anything
			}
		}
	}
	if len(types) == 0 && !isObject && !isArray {
		_, hasEnum := s["enum"]
		_, hasConst := s["const"]
		_, hasRef := s["$ref"]
		if !hasEnum && !hasConst && !hasRef && out["anyOf"] == nil {
			c.fail() // a value of any type
		}
	}
	return out
}

// object converts an object node: all properties required, the optional
// ones nullable, no additional properties.
func (c *strictConverter) object(s, out map[string]any, root bool) {
	props, _ := s["properties"].(map[string]any)
	if ap, ok := s["additionalProperties"]; ok && ap != false {
		c.fail() // a map with free keys
	}
	if pp, ok := s["patternProperties"].(map[string]any); ok && len(pp) > 0 {
		c.fail()
	}
	if len(props) == 0 && !root && s["additionalProperties"] != false {
		c.fail() // a free-form object, like ExecuteTool's params
	}
	required := requiredSet(s)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	cp := make(map[string]any, len(props))
	req := make([]any, len(names))
	for i, name := range names {
		p := c.node(props[name], false)
		if !required[name] {
			p = nullable(p)
		}
		cp[name] = p
		req[i] = name
	}
	out["properties"] = cp
	out["required"] = req
	out["additionalProperties"] = false
}

func (c *strictConverter) tuple(items []any) map[string]any {
	if len(items) == 1 {
		return c.node(items[0], false)
	}
	branches := make([]any, len(items))
	for i, it := range items {
		branches[i] = c.node(it, false)
	}
	return map[string]any{"anyOf": branches}
}

// nullable returns s extended to accept null as well: null added to its
// type (and enum), or to its anyOf, or s wrapped as anyOf [s, null] when
// neither is safe (const, $ref, type together with anyOf).
func nullable(s map[string]any) map[string]any {
	_, hasConst := s["const"]
	_, hasRef := s["$ref"]
	branches, hasAnyOf := s["anyOf"].([]any)
	switch {
	case hasConst || hasRef:
	case hasAnyOf && s["type"] == nil:
		for _, b := range branches {
			if m, ok := b.(map[string]any); ok && m["type"] == "null" {
				return s
			}
		}
		out := copyMap(s)
		out["anyOf"] = append(append([]any{}, branches...), map[string]any{"type": "null"})
		return out
	case hasAnyOf:
	default:
		switch t := s["type"].(type) {
		case string:
			out := copyMap(s)
			out["type"] = []any{t, "null"}
			addNullToEnum(out)
			return out
		case []any:
			out := copyMap(s)
			if !containsAny(t, "null") {
				out["type"] = append(append([]any{}, t...), "null")
			}
			addNullToEnum(out)
			return out
		case nil:
			if _, hasEnum := s["enum"]; hasEnum {
				out := copyMap(s)
				addNullToEnum(out)
				return out
			}
		}
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

func addNullToEnum(s map[string]any) {
	e, ok := s["enum"].([]any)
	if !ok {
		return
	}
	for _, v := range e {
		if v == nil {
			return
		}
	}
	s["enum"] = append(append([]any{}, e...), nil)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
