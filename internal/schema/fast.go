package schema

import (
	"encoding/json"
	"math"

	"google.golang.org/protobuf/types/known/structpb"
)

// Fast accepts, without the JSON Schema library, parameters that
// certainly satisfy a simple schema: an object whose properties have a
// primitive type and maybe an enum, with required names and
// additionalProperties. It never rejects: anything it cannot vouch for
// goes to the full validator, which alone decides and reports violations.
// Most tool schemas are of this shape, and the library's deep recursion
// made every call grow its goroutine's stack (docs/BENCHMARKS.md).
type Fast struct {
	props      map[string]fastProp
	required   []string
	closed     bool // additionalProperties: false
	extraProps bool // additionalProperties absent or true
}

type fastProp struct {
	typ  string // string, number, integer, boolean
	enum []any
}

// annotations are keywords that never make a value invalid.
var annotations = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// NewFast returns a fast path for schema, or nil when the schema is
// not of the simple shape.
func NewFast(schema map[string]any) *Fast {
	fc := &Fast{props: make(map[string]fastProp), extraProps: true}
	for k, v := range schema {
		switch k {
		case "type":
			if v != "object" {
				return nil
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, p := range props {
				fp, ok := newFastProp(p)
				if !ok {
					return nil
				}
				fc.props[name] = fp
			}
		case "required":
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, r := range list {
				name, ok := r.(string)
				if !ok {
					return nil
				}
				fc.required = append(fc.required, name)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			fc.closed, fc.extraProps = !b, b
		case "$schema":
		default:
			if !annotations[k] {
				return nil
			}
		}
	}
	return fc
}

func newFastProp(v any) (fastProp, bool) {
	p, ok := v.(map[string]any)
	if !ok {
		return fastProp{}, false
	}
	var fp fastProp
	for k, x := range p {
		switch k {
		case "type":
			t, ok := x.(string)
			if !ok || (t != "string" && t != "number" && t != "integer" && t != "boolean") {
				return fastProp{}, false
			}
			fp.typ = t
		case "enum":
			list, ok := x.([]any)
			if !ok {
				return fastProp{}, false
			}
			for _, e := range list {
				switch e.(type) {
				case string, float64, bool:
				default:
					return fastProp{}, false
				}
			}
			fp.enum = list
		default:
			if !annotations[k] {
				return fastProp{}, false
			}
		}
	}
	return fp, fp.typ != ""
}

// Valid reports whether value certainly satisfies the schema. false means
// "ask the full validator", not "invalid".
func (fc *Fast) Valid(value any) bool {
	obj, ok := value.(map[string]any)
	if !ok {
		return false
	}
	for _, r := range fc.required {
		if _, ok := obj[r]; !ok {
			return false
		}
	}
	for k, v := range obj {
		p, ok := fc.props[k]
		if !ok {
			if fc.closed {
				return false
			}
			continue
		}
		if !p.accepts(v) {
			return false
		}
	}
	return true
}

func (p fastProp) accepts(v any) bool {
	switch p.typ {
	case "string":
		if _, ok := v.(string); !ok {
			return false
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return false
		}
	case "number", "integer":
		var f float64
		switch n := v.(type) {
		case float64:
			f = n
		case json.Number:
			var err error
			if f, err = n.Float64(); err != nil {
				return false
			}
			if p.typ == "integer" {
				if _, err := n.Int64(); err != nil {
					return false // let the validator judge big or fractional numbers
				}
			}
		default:
			return false
		}
		if p.typ == "integer" && f != math.Trunc(f) {
			return false
		}
	}
	if p.enum == nil {
		return true
	}
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		if err != nil {
			return false
		}
		v = f
	}
	for _, e := range p.enum {
		if e == v {
			return true
		}
	}
	return false
}

// ValidStruct is Valid for parameters that came as a Struct, read in place:
// ValidStruct(st) == Valid(st.AsMap()), without building the map.
func (fc *Fast) ValidStruct(st *structpb.Struct) bool {
	fields := st.GetFields()
	for _, r := range fc.required {
		if _, ok := fields[r]; !ok {
			return false
		}
	}
	for k, v := range fields {
		p, ok := fc.props[k]
		if !ok {
			if fc.closed {
				return false
			}
			continue
		}
		if !p.acceptsValue(v) {
			return false
		}
	}
	return true
}

// acceptsValue is accepts for a Struct value (as AsMap would convert it:
// numbers are float64).
func (p fastProp) acceptsValue(v *structpb.Value) bool {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		if p.typ != "string" {
			return false
		}
		if p.enum == nil {
			return true
		}
		for _, e := range p.enum {
			if s, ok := e.(string); ok && s == k.StringValue {
				return true
			}
		}
	case *structpb.Value_BoolValue:
		if p.typ != "boolean" {
			return false
		}
		if p.enum == nil {
			return true
		}
		for _, e := range p.enum {
			if b, ok := e.(bool); ok && b == k.BoolValue {
				return true
			}
		}
	case *structpb.Value_NumberValue:
		f := k.NumberValue
		if p.typ != "number" && p.typ != "integer" || p.typ == "integer" && f != math.Trunc(f) {
			return false
		}
		if p.enum == nil {
			return true
		}
		for _, e := range p.enum {
			if n, ok := e.(float64); ok && n == f {
				return true
			}
		}
	}
	return false
}
