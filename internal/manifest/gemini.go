package manifest

import (
	"encoding/json"
	"math"
	"strings"
)

// ProjectGeminiSchema returns schema projected onto the subset of OpenAPI
// 3.0 that Gemini function declarations accept in "parameters" (the
// google.golang.org/genai Schema type). It does not modify schema. Per
// schema node:
//
//   - Local $refs ("#/$defs/x", "#/definitions/x", any pointer into the
//     schema) are inlined, the keywords beside the $ref winning, up to 8
//     along one path; a deeper, external or dangling $ref is dropped.
//     $defs and definitions themselves are dropped.
//   - allOf is merged into the node (properties and required united; for any
//     other keyword the node's own value, else the first subschema's).
//   - type becomes Gemini's upper-case enum (STRING, NUMBER, INTEGER,
//     BOOLEAN, ARRAY, OBJECT, NULL). A type list loses "null", which becomes
//     "nullable": true; one remaining type is used as is, several become an
//     anyOf with one branch per type. A node without type gets one from its
//     keywords: properties → OBJECT, items → ARRAY, enum or const values →
//     their type.
//   - oneOf becomes anyOf (at least one branch must match instead of exactly
//     one). A {"type": "null"} branch becomes "nullable": true; a single
//     remaining branch is merged into the node. A node that has its own type
//     drops anyOf and oneOf.
//   - const becomes enum [value]. A string enum stays. An enum of numbers or
//     booleans (Gemini takes string enums only) keeps its type and moves the
//     values into the description ("Allowed values: 1, 2."), so the model
//     still sends 1 and not "1", which the tool's schema would refuse; an
//     enum mixing types becomes type STRING with the values as JSON text. A
//     null value becomes "nullable": true.
//   - exclusiveMinimum and exclusiveMaximum become minimum and maximum: for
//     integers exactly (exclusiveMinimum 0 is minimum 1), for numbers
//     inclusively.
//   - format is kept only where Gemini knows it: "enum" and "date-time" for
//     strings, "int32" and "int64" for integers, "float" and "double" for
//     numbers.
//   - required keeps only names that exist in properties.
//   - Kept as they are: description, nullable, properties, items (a tuple,
//     items or prefixItems as a list, becomes anyOf of its schemas),
//     minItems, maxItems, minLength, maxLength, pattern, minProperties,
//     maxProperties, minimum, maximum.
//   - Everything else is dropped, notably $schema, $id, $comment, title,
//     additionalProperties, patternProperties, propertyNames, default,
//     examples, multipleOf, uniqueItems, not, if/then/else and
//     dependentRequired.
//
// A value that may be anything has no Gemini form: it comes out as an
// OBJECT without properties, an ARRAY without items or a node without type.
// Gemini refuses those in "parameters"; Build sends such a tool with
// "parametersJsonSchema" instead.
func ProjectGeminiSchema(schema map[string]any) map[string]any {
	if schema == nil {
		return nil
	}
	g := geminiProjector{resolver{root: schema}}
	return g.project(schema, 0)
}

type geminiProjector struct {
	resolver
}

func (g geminiProjector) project(v any, depth int) map[string]any {
	s, ok := v.(map[string]any)
	if !ok {
		// A boolean schema (true: anything; false: nothing) has no Gemini form.
		return map[string]any{}
	}
	s, depth = g.flatten(s, depth)
	out := make(map[string]any)
	if d, ok := s["description"].(string); ok && d != "" {
		out["description"] = d
	}
	nullable, _ := s["nullable"].(bool)

	types := schemaTypes(s)
	var nonNull []string
	for _, t := range types {
		if t == "null" {
			nullable = true
		} else {
			nonNull = append(nonNull, t)
		}
	}
	switch {
	case len(types) > 0 && len(nonNull) == 0:
		nonNull = []string{"null"}
		nullable = false
	case len(nonNull) == 0:
		if branches := firstList(s, "anyOf", "oneOf"); branches != nil {
			g.union(branches, out, &nullable, depth)
			if nullable {
				out["nullable"] = true
			}
			return out
		}
		nonNull = inferType(s)
	}

	switch len(nonNull) {
	case 0:
		// Anything goes: no Gemini form.
	case 1:
		if g.typed(s, nonNull[0], out, depth) {
			nullable = true
		}
	default:
		branches := make([]any, 0, len(nonNull))
		for _, t := range nonNull {
			b := copyMap(s)
			b["type"] = t
			for _, k := range []string{"description", "nullable", "anyOf", "oneOf"} {
				delete(b, k)
			}
			branches = append(branches, g.project(b, depth))
		}
		out["anyOf"] = branches
	}
	if nullable {
		out["nullable"] = true
	}
	return out
}

// union projects anyOf/oneOf branches into out.
func (g geminiProjector) union(branches []any, out map[string]any, nullable *bool, depth int) {
	var kept []any
	for _, b := range branches {
		pb := g.project(b, depth)
		if pb["type"] == "NULL" {
			*nullable = true
			continue
		}
		if n, _ := pb["nullable"].(bool); n {
			*nullable = true
			delete(pb, "nullable")
		}
		kept = append(kept, pb)
	}
	switch len(kept) {
	case 0:
		out["type"] = "NULL"
	case 1:
		for k, v := range kept[0].(map[string]any) {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	default:
		out["anyOf"] = kept
	}
}

// typed fills out for a node of JSON Schema type t. It reports whether the
// node's enum allowed null.
func (g geminiProjector) typed(s map[string]any, t string, out map[string]any, depth int) (enumNull bool) {
	switch t {
	case "object":
		out["type"] = "OBJECT"
		if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
			pp := make(map[string]any, len(props))
			for name, ps := range props {
				pp[name] = g.project(ps, depth)
			}
			out["properties"] = pp
			var req []any
			seen := make(map[string]bool)
			for _, r := range asList(s["required"]) {
				if name, ok := r.(string); ok && !seen[name] {
					if _, exists := props[name]; exists {
						seen[name] = true
						req = append(req, name)
					}
				}
			}
			if len(req) > 0 {
				out["required"] = req
			}
		}
		copyNumbers(s, out, "minProperties", "maxProperties")
	case "array":
		out["type"] = "ARRAY"
		switch it := s["items"].(type) {
		case map[string]any:
			out["items"] = g.project(it, depth)
		case []any:
			if items := g.tuple(it, depth); items != nil {
				out["items"] = items
			}
		case nil:
			if items := g.tuple(asList(s["prefixItems"]), depth); items != nil {
				out["items"] = items
			}
		}
		copyNumbers(s, out, "minItems", "maxItems")
	case "string":
		out["type"] = "STRING"
		keepFormat(s, out, "enum", "date-time")
		copyNumbers(s, out, "minLength", "maxLength")
		if p, ok := s["pattern"].(string); ok {
			out["pattern"] = p
		}
	case "integer":
		out["type"] = "INTEGER"
		keepFormat(s, out, "int32", "int64")
		bounds(s, out, true)
	case "number":
		out["type"] = "NUMBER"
		keepFormat(s, out, "float", "double")
		bounds(s, out, false)
	case "boolean":
		out["type"] = "BOOLEAN"
	case "null":
		out["type"] = "NULL"
	default:
		// An unknown type name: no Gemini form.
		return false
	}
	return projectEnum(s, t, out)
}

// tuple projects a list of item schemas: one schema as is, several as anyOf.
func (g geminiProjector) tuple(items []any, depth int) map[string]any {
	switch len(items) {
	case 0:
		return nil
	case 1:
		return g.project(items[0], depth)
	}
	branches := make([]any, len(items))
	for i, it := range items {
		branches[i] = g.project(it, depth)
	}
	return map[string]any{"anyOf": branches}
}

// projectEnum applies enum and const; see ProjectGeminiSchema. It reports
// whether null was among the values.
func projectEnum(s map[string]any, t string, out map[string]any) (hasNull bool) {
	values, ok := s["enum"].([]any)
	if c, hasConst := s["const"]; hasConst {
		values, ok = []any{c}, true
	}
	if !ok {
		return false
	}
	var vals []any
	for _, v := range values {
		if v == nil {
			hasNull = true
		} else {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return hasNull
	}
	allStrings, allNumbers, allBools := true, true, true
	for _, v := range vals {
		_, isStr := v.(string)
		_, isBool := v.(bool)
		allStrings = allStrings && isStr
		allBools = allBools && isBool
		allNumbers = allNumbers && isNumber(v)
	}
	switch {
	case allStrings:
		if out["type"] != "STRING" {
			clearTyped(out)
			out["type"] = "STRING"
		}
		out["enum"] = vals
	case allNumbers && (t == "integer" || t == "number"), allBools && t == "boolean":
		texts := make([]string, len(vals))
		for i, v := range vals {
			texts[i] = jsonText(v)
		}
		note := "Allowed values: " + strings.Join(texts, ", ") + "."
		if len(vals) == 1 {
			note = "Must be " + texts[0] + "."
		}
		if d, ok := out["description"].(string); ok && d != "" {
			note = d + " " + note
		}
		out["description"] = note
	default:
		clearTyped(out)
		out["type"] = "STRING"
		texts := make([]any, len(vals))
		for i, v := range vals {
			if str, ok := v.(string); ok {
				texts[i] = str
			} else {
				texts[i] = jsonText(v)
			}
		}
		out["enum"] = texts
	}
	return hasNull
}

// clearTyped removes every keyword of out but description and nullable.
func clearTyped(out map[string]any) {
	for k := range out {
		if k != "description" && k != "nullable" {
			delete(out, k)
		}
	}
}

// inferType guesses the JSON Schema type of a node without one.
func inferType(s map[string]any) []string {
	if _, ok := s["properties"].(map[string]any); ok {
		return []string{"object"}
	}
	if _, ok := s["items"]; ok {
		return []string{"array"}
	}
	if _, ok := s["prefixItems"]; ok {
		return []string{"array"}
	}
	values, ok := s["enum"].([]any)
	if c, hasConst := s["const"]; hasConst {
		values, ok = []any{c}, true
	}
	if !ok {
		return nil
	}
	kind := ""
	for _, v := range values {
		k := "string"
		switch n := v.(type) {
		case nil:
			continue
		case bool:
			k = "boolean"
		case string:
		default:
			if f, ok := toFloat(n); ok {
				k = "number"
				if f == math.Trunc(f) {
					k = "integer"
				}
			}
		}
		switch {
		case kind == "":
			kind = k
		case kind == k:
		case kind == "integer" && k == "number", kind == "number" && k == "integer":
			kind = "number"
		default:
			return []string{"string"} // mixed: projectEnum makes strings of them
		}
	}
	if kind == "" {
		return []string{"null"}
	}
	return []string{kind}
}

func firstList(s map[string]any, keys ...string) []any {
	for _, k := range keys {
		if l, ok := s[k].([]any); ok && len(l) > 0 {
			return l
		}
	}
	return nil
}

func copyNumbers(s, out map[string]any, keys ...string) {
	for _, k := range keys {
		if v, ok := s[k]; ok && isNumber(v) {
			out[k] = v
		}
	}
}

func keepFormat(s, out map[string]any, allowed ...string) {
	f, ok := s["format"].(string)
	if !ok {
		return
	}
	for _, a := range allowed {
		if f == a {
			out["format"] = f
			return
		}
	}
}

// bounds sets minimum and maximum from minimum, maximum and the exclusive
// bounds (numbers, as in draft 6 and later; draft 4's booleans are ignored).
func bounds(s, out map[string]any, integer bool) {
	lo, hasLo := toFloat(s["minimum"])
	if x, ok := toFloat(s["exclusiveMinimum"]); ok {
		if integer {
			x = math.Floor(x) + 1
		}
		if !hasLo || x > lo {
			lo, hasLo = x, true
		}
	}
	hi, hasHi := toFloat(s["maximum"])
	if x, ok := toFloat(s["exclusiveMaximum"]); ok {
		if integer {
			x = math.Ceil(x) - 1
		}
		if !hasHi || x < hi {
			hi, hasHi = x, true
		}
	}
	if hasLo {
		out["minimum"] = lo
	}
	if hasHi {
		out["maximum"] = hi
	}
}

// jsonText returns v as JSON text.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// geminiExpressible reports whether a projected schema can go in Gemini's
// "parameters": every value below the root has a type, every OBJECT below
// the root has properties, every ARRAY has items.
func geminiExpressible(s map[string]any, root bool) bool {
	if branches, ok := s["anyOf"].([]any); ok {
		for _, b := range branches {
			if m, ok := b.(map[string]any); !ok || !geminiExpressible(m, false) {
				return false
			}
		}
		return true
	}
	switch s["type"] {
	case nil:
		return false
	case "OBJECT":
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			return root
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); !ok || !geminiExpressible(m, false) {
				return false
			}
		}
	case "ARRAY":
		items, ok := s["items"].(map[string]any)
		if !ok {
			return false
		}
		return geminiExpressible(items, false)
	}
	return true
}
