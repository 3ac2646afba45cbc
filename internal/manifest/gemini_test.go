package manifest

import (
	"testing"
)

func TestProjectGeminiSchema(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "types upper-cased, description kept",
			in:   `{"type":"object","description":"d","properties":{"s":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"}}}`,
			want: `{"type":"OBJECT","description":"d","properties":{"s":{"type":"STRING"},"n":{"type":"NUMBER"},"i":{"type":"INTEGER"},"b":{"type":"BOOLEAN"}}}`,
		},
		{
			name: "$schema $id $comment title dropped",
			in:   `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","$comment":"c","title":"T","type":"object","properties":{"a":{"type":"string","title":"A"}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`,
		},
		{
			name: "required kept, filtered to existing properties, deduplicated",
			in:   `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["b","ghost","b","a"]}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"STRING"}},"required":["b","a"]}`,
		},
		{
			name: "required dropped when nothing exists",
			in:   `{"type":"object","properties":{"a":{"type":"string"}},"required":["ghost"]}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`,
		},
		{
			name: "additionalProperties patternProperties propertyNames dropped",
			in:   `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false,"patternProperties":{"^x":{"type":"string"}},"propertyNames":{"pattern":"^[a-z]+$"}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`,
		},
		{
			name: "const string becomes enum",
			in:   `{"type":"object","properties":{"kind":{"type":"string","const":"x"}}}`,
			want: `{"type":"OBJECT","properties":{"kind":{"type":"STRING","enum":["x"]}}}`,
		},
		{
			name: "const without type",
			in:   `{"type":"object","properties":{"kind":{"const":"x"}}}`,
			want: `{"type":"OBJECT","properties":{"kind":{"type":"STRING","enum":["x"]}}}`,
		},
		{
			name: "integer enum keeps its type, values go to the description",
			in:   `{"type":"object","properties":{"level":{"type":"integer","description":"Level.","enum":[1,2,3]}}}`,
			want: `{"type":"OBJECT","properties":{"level":{"type":"INTEGER","description":"Level. Allowed values: 1, 2, 3."}}}`,
		},
		{
			name: "number const keeps its type",
			in:   `{"type":"object","properties":{"v":{"type":"number","const":1.5}}}`,
			want: `{"type":"OBJECT","properties":{"v":{"type":"NUMBER","description":"Must be 1.5."}}}`,
		},
		{
			name: "boolean enum without type",
			in:   `{"type":"object","properties":{"f":{"enum":[true]}}}`,
			want: `{"type":"OBJECT","properties":{"f":{"type":"BOOLEAN","description":"Must be true."}}}`,
		},
		{
			name: "mixed enum becomes strings",
			in:   `{"type":"object","properties":{"m":{"enum":["a",1,true]}}}`,
			want: `{"type":"OBJECT","properties":{"m":{"type":"STRING","enum":["a","1","true"]}}}`,
		},
		{
			name: "enum on a mismatched type becomes strings",
			in:   `{"type":"object","properties":{"m":{"type":"string","enum":[1,2],"maxLength":3}}}`,
			want: `{"type":"OBJECT","properties":{"m":{"type":"STRING","enum":["1","2"]}}}`,
		},
		{
			name: "null in enum becomes nullable",
			in:   `{"type":"object","properties":{"m":{"type":["string","null"],"enum":["a","b",null]}}}`,
			want: `{"type":"OBJECT","properties":{"m":{"type":"STRING","enum":["a","b"],"nullable":true}}}`,
		},
		{
			name: "exclusive bounds: integers exact, numbers inclusive",
			in:   `{"type":"object","properties":{"i":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10},"n":{"type":"number","exclusiveMinimum":0.5,"maximum":2,"exclusiveMaximum":3}}}`,
			want: `{"type":"OBJECT","properties":{"i":{"type":"INTEGER","minimum":1,"maximum":9},"n":{"type":"NUMBER","minimum":0.5,"maximum":2}}}`,
		},
		{
			name: "exclusive bound tighter than the inclusive one wins",
			in:   `{"type":"object","properties":{"i":{"type":"integer","minimum":0,"exclusiveMinimum":5}}}`,
			want: `{"type":"OBJECT","properties":{"i":{"type":"INTEGER","minimum":6}}}`,
		},
		{
			name: "draft 4 boolean exclusive bounds ignored",
			in:   `{"type":"object","properties":{"i":{"type":"integer","minimum":0,"exclusiveMinimum":true}}}`,
			want: `{"type":"OBJECT","properties":{"i":{"type":"INTEGER","minimum":0}}}`,
		},
		{
			name: "type with null becomes nullable",
			in:   `{"type":"object","properties":{"a":{"type":["string","null"]},"o":{"type":["null","object"],"properties":{"x":{"type":"integer"}}}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING","nullable":true},"o":{"type":"OBJECT","nullable":true,"properties":{"x":{"type":"INTEGER"}}}}}`,
		},
		{
			name: "several types become anyOf with their keywords",
			in:   `{"type":"object","properties":{"v":{"type":["string","array","null"],"description":"d","items":{"type":"string"},"maxLength":5}}}`,
			want: `{"type":"OBJECT","properties":{"v":{"description":"d","nullable":true,"anyOf":[{"type":"STRING","maxLength":5},{"type":"ARRAY","items":{"type":"STRING"}}]}}}`,
		},
		{
			name: "anyOf with a null branch: nullable, single branch merged",
			in:   `{"type":"object","properties":{"a":{"description":"outer","anyOf":[{"type":"string","description":"inner"},{"type":"null"}]}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING","description":"outer","nullable":true}}}`,
		},
		{
			name: "oneOf becomes anyOf",
			in:   `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}}}`,
		},
		{
			name: "anyOf beside a type is dropped",
			in:   `{"type":"object","properties":{"a":{"type":"object","properties":{"x":{"type":"string"},"y":{"type":"string"}},"anyOf":[{"required":["x"]},{"required":["y"]}]}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"OBJECT","properties":{"x":{"type":"STRING"},"y":{"type":"STRING"}}}}}`,
		},
		{
			name: "allOf merged: properties and required united",
			in:   `{"type":"object","allOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}},"required":["b"],"description":"from allOf"}]}`,
			want: `{"type":"OBJECT","description":"from allOf","properties":{"a":{"type":"STRING"},"b":{"type":"INTEGER"}},"required":["a","b"]}`,
		},
		{
			name: "local $ref inlined, siblings win, $defs dropped",
			in:   `{"type":"object","$defs":{"addr":{"type":"object","description":"An address.","properties":{"city":{"type":"string"}},"required":["city"]}},"properties":{"home":{"$ref":"#/$defs/addr","description":"Home."}}}`,
			want: `{"type":"OBJECT","properties":{"home":{"type":"OBJECT","description":"Home.","properties":{"city":{"type":"STRING"}},"required":["city"]}}}`,
		},
		{
			name: "draft 7 definitions and escaped pointer",
			in:   `{"type":"object","definitions":{"a/b":{"type":"string","format":"date-time"}},"properties":{"t":{"$ref":"#/definitions/a~1b"}}}`,
			want: `{"type":"OBJECT","properties":{"t":{"type":"STRING","format":"date-time"}}}`,
		},
		{
			name: "dangling and external $ref dropped",
			in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/none","type":"string"},"b":{"$ref":"https://example.com/s.json","type":"integer"}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"INTEGER"}}}`,
		},
		{
			name: "formats kept only where Gemini knows them",
			in:   `{"type":"object","properties":{"a":{"type":"string","format":"date-time"},"b":{"type":"string","format":"uri"},"c":{"type":"integer","format":"int64"},"d":{"type":"integer","format":"double"},"e":{"type":"number","format":"float"},"f":{"type":"string","format":"enum","enum":["x"]}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING","format":"date-time"},"b":{"type":"STRING"},"c":{"type":"INTEGER","format":"int64"},"d":{"type":"INTEGER"},"e":{"type":"NUMBER","format":"float"},"f":{"type":"STRING","format":"enum","enum":["x"]}}}`,
		},
		{
			name: "default examples multipleOf uniqueItems not dropped; supported limits kept",
			in:   `{"type":"object","properties":{"s":{"type":"string","default":"x","examples":["y"],"minLength":1,"maxLength":9,"pattern":"^a"},"n":{"type":"number","multipleOf":2,"not":{"const":4}},"l":{"type":"array","uniqueItems":true,"minItems":1,"maxItems":3,"items":{"type":"string"}}}}`,
			want: `{"type":"OBJECT","properties":{"s":{"type":"STRING","minLength":1,"maxLength":9,"pattern":"^a"},"n":{"type":"NUMBER"},"l":{"type":"ARRAY","minItems":1,"maxItems":3,"items":{"type":"STRING"}}}}`,
		},
		{
			name: "nested objects in arrays",
			in:   `{"type":"object","properties":{"rows":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"id":{"type":"integer","exclusiveMinimum":0},"tags":{"type":"array","items":{"type":"string","const":"t"}}},"required":["id","missing"]}}},"required":["rows"]}`,
			want: `{"type":"OBJECT","properties":{"rows":{"type":"ARRAY","items":{"type":"OBJECT","properties":{"id":{"type":"INTEGER","minimum":1},"tags":{"type":"ARRAY","items":{"type":"STRING","enum":["t"]}}},"required":["id"]}}},"required":["rows"]}`,
		},
		{
			name: "types inferred from properties and items",
			in:   `{"properties":{"o":{"properties":{"x":{"type":"string"}}},"l":{"items":{"type":"integer"}}}}`,
			want: `{"type":"OBJECT","properties":{"o":{"type":"OBJECT","properties":{"x":{"type":"STRING"}}},"l":{"type":"ARRAY","items":{"type":"INTEGER"}}}}`,
		},
		{
			name: "tuples become anyOf items",
			in:   `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"number"},{"type":"string"}]},"q":{"type":"array","items":[{"type":"number"}]}}}`,
			want: `{"type":"OBJECT","properties":{"p":{"type":"ARRAY","items":{"anyOf":[{"type":"NUMBER"},{"type":"STRING"}]}},"q":{"type":"ARRAY","items":{"type":"NUMBER"}}}}`,
		},
		{
			name: "free-form values stay typeless or without properties",
			in:   `{"type":"object","properties":{"any":{"description":"anything"},"map":{"type":"object","additionalProperties":{"type":"string"}},"t":true}}`,
			want: `{"type":"OBJECT","properties":{"any":{"description":"anything"},"map":{"type":"OBJECT"},"t":{}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := obj(t, tt.in)
			before := canon(t, in)
			got := canon(t, ProjectGeminiSchema(in))
			if want := canon(t, obj(t, tt.want)); got != want {
				t.Errorf("ProjectGeminiSchema(%s)\n got %s\nwant %s", tt.in, got, want)
			}
			if after := canon(t, in); after != before {
				t.Errorf("ProjectGeminiSchema modified its input:\n%s\n%s", before, after)
			}
		})
	}
}

func TestProjectGeminiSchemaRecursion(t *testing.T) {
	// A recursive schema is inlined maxRefDepth levels deep, then the $ref
	// is dropped, leaving a node without type.
	in := obj(t, `{"type":"object","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"child":{"$ref":"#/$defs/node"}}}},"properties":{"root":{"$ref":"#/$defs/node"}}}`)
	got := ProjectGeminiSchema(in)
	depth := 0
	cur := got["properties"].(map[string]any)["root"].(map[string]any)
	for {
		props, ok := cur["properties"].(map[string]any)
		if !ok {
			break
		}
		depth++
		cur = props["child"].(map[string]any)
	}
	if depth != maxRefDepth {
		t.Errorf("recursive $ref inlined %d levels, want %d", depth, maxRefDepth)
	}
	if len(cur) != 0 {
		t.Errorf("innermost node = %v, want {}", cur)
	}
	if geminiExpressible(got, true) {
		t.Error("geminiExpressible = true for a truncated recursive schema, want false")
	}
	if ProjectGeminiSchema(nil) != nil {
		t.Error("ProjectGeminiSchema(nil) != nil")
	}
}

func TestGeminiExpressible(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, true},
		{`{"type":"object"}`, true}, // root without properties: sent without parameters
		{`{"type":"object","properties":{"p":{"type":"object"}}}`, false},
		{`{"type":"object","properties":{"l":{"type":"array"}}}`, false},
		{`{"type":"object","properties":{"v":{}}}`, false},
		{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"object"}]}}}`, false},
		{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, true},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}}}}}}`, true},
	}
	for _, tt := range tests {
		if got := geminiExpressible(ProjectGeminiSchema(obj(t, tt.in)), true); got != tt.want {
			t.Errorf("geminiExpressible(project(%s)) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
