package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

func TestFastCheckShape(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		simple bool
	}{
		{"empty object", `{"type":"object"}`, true},
		{"primitives", `{"type":"object","properties":{"a":{"type":"string","description":"x"},"n":{"type":"integer"}},"required":["a"],"additionalProperties":false}`, true},
		{"enum", `{"type":"object","properties":{"u":{"type":"string","enum":["c","f"]}}}`, true},
		{"nested object", `{"type":"object","properties":{"o":{"type":"object"}}}`, false},
		{"min length", `{"type":"object","properties":{"a":{"type":"string","minLength":2}}}`, false},
		{"format", `{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, false},
		{"type array", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`, false},
		{"untyped property", `{"type":"object","properties":{"a":{"description":"any"}}}`, false},
		{"ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, false},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"string"}}`, false},
	}
	for _, tt := range tests {
		var m map[string]any
		if err := json.Unmarshal([]byte(tt.schema), &m); err != nil {
			t.Fatal(err)
		}
		if got := NewFast(m) != nil; got != tt.simple {
			t.Errorf("%s: newFastCheck != nil = %v, want %v", tt.name, got, tt.simple)
		}
	}
}

// FuzzFastCheckNeverAcceptsInvalid is the fast path's contract: whatever it
// accepts, the JSON Schema library accepts too.
func FuzzFastCheckNeverAcceptsInvalid(f *testing.F) {
	schemas := []string{
		`{"type":"object","properties":{"a":{"type":"string"},"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"boolean"}},"required":["a"],"additionalProperties":false}`,
		`{"type":"object","properties":{"u":{"type":"string","enum":["c","f"]},"k":{"type":"integer","enum":[1,2,3]}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`,
	}
	params := []string{`{}`, `{"a":"x"}`, `{"a":"x","n":1}`, `{"a":"x","n":1.5}`, `{"a":1}`, `{"a":"x","z":1}`, `{"u":"c","k":2}`, `{"u":"k"}`, `{"n":1e3}`, `{"n":9007199254740993}`, `{"k":2.0}`}
	for _, s := range schemas {
		for _, p := range params {
			f.Add(s, p)
		}
	}
	f.Fuzz(func(t *testing.T, schemaJSON, paramsJSON string) {
		var schema map[string]any
		if json.Unmarshal([]byte(schemaJSON), &schema) != nil {
			return
		}
		fc := NewFast(schema)
		if fc == nil {
			return
		}
		sch, err := Compile(schema)
		if err != nil {
			return
		}
		for _, useNumber := range []bool{false, true} {
			dec := json.NewDecoder(strings.NewReader(paramsJSON))
			if useNumber {
				dec.UseNumber()
			}
			var v any
			if dec.Decode(&v) != nil {
				return
			}
			if fc.Valid(v) {
				if err := sch.Validate(v); err != nil {
					t.Fatalf("fast path accepted %s for %s, the validator says: %v", paramsJSON, schemaJSON, err)
				}
			}
			// Parameters sent as a Struct are checked in place, with the
			// same verdict as on their map.
			if obj, ok := v.(map[string]any); ok && !useNumber {
				if st, err := structpb.NewStruct(obj); err == nil {
					if got, want := fc.ValidStruct(st), fc.Valid(st.AsMap()); got != want {
						t.Fatalf("validStruct = %v, valid(AsMap) = %v for %s, schema %s", got, want, paramsJSON, schemaJSON)
					}
				}
			}
		}
	})
}

func TestJSONPath(t *testing.T) {
	tests := []struct {
		give []string
		want string
	}{
		{nil, "params"},
		{[]string{"a"}, "params.a"},
		{[]string{"items", "0", "name"}, "params.items[0].name"},
		{[]string{""}, "params."},
	}
	for _, tt := range tests {
		if got := jsonPath(tt.give); got != tt.want {
			t.Errorf("jsonPath(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
