package manifest

import "testing"

func TestStrictSchema(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" when the schema cannot be made strict
	}{
		{
			name: "all properties required, optional ones nullable, no additional properties",
			in:   `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
			want: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["integer","null"]}},"required":["a","b"],"additionalProperties":false}`,
		},
		{
			name: "no parameters",
			in:   `{"type":"object"}`,
			want: `{"type":"object","properties":{},"required":[],"additionalProperties":false}`,
		},
		{
			name: "nested objects and arrays of objects",
			in:   `{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]},"l":{"type":"array","items":{"type":"object","properties":{"y":{"type":"boolean"}}}}},"required":["o","l"]}`,
			want: `{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false},"l":{"type":"array","items":{"type":"object","properties":{"y":{"type":["boolean","null"]}},"required":["y"],"additionalProperties":false}}},"required":["l","o"],"additionalProperties":false}`,
		},
		{
			name: "optional enum gains null",
			in:   `{"type":"object","properties":{"e":{"type":"string","enum":["a","b"]},"f":{"enum":["x"]}}}`,
			want: `{"type":"object","properties":{"e":{"type":["string","null"],"enum":["a","b",null]},"f":{"enum":["x",null]}},"required":["e","f"],"additionalProperties":false}`,
		},
		{
			name: "optional type list gains null once",
			in:   `{"type":"object","properties":{"a":{"type":["string","integer"]},"b":{"type":["string","null"]}}}`,
			want: `{"type":"object","properties":{"a":{"type":["string","integer","null"]},"b":{"type":["string","null"]}},"required":["a","b"],"additionalProperties":false}`,
		},
		{
			name: "optional $ref and const are wrapped in anyOf",
			in:   `{"type":"object","$defs":{"p":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}},"properties":{"r":{"$ref":"#/$defs/p"},"c":{"type":"string","const":"k"}}}`,
			want: `{"type":"object","$defs":{"p":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}},"properties":{"c":{"anyOf":[{"type":"string","const":"k"},{"type":"null"}]},"r":{"anyOf":[{"$ref":"#/$defs/p"},{"type":"null"}]}},"required":["c","r"],"additionalProperties":false}`,
		},
		{
			name: "oneOf becomes anyOf; optional anyOf gains a null branch",
			in:   `{"type":"object","properties":{"u":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`,
			want: `{"type":"object","properties":{"u":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}},"required":["u"],"additionalProperties":false}`,
		},
		{
			name: "allOf merged",
			in:   `{"type":"object","allOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"string"}}}]}`,
			want: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["string","null"]}},"required":["a","b"],"additionalProperties":false}`,
		},
		{
			name: "refused keywords dropped, supported ones kept",
			in:   `{"type":"object","$id":"x","$comment":"c","title":"T","properties":{"s":{"type":"string","minLength":1,"maxLength":5,"pattern":"^a","format":"email","default":"a","examples":["a"]},"u":{"type":"string","format":"uri"},"n":{"type":"number","minimum":0,"exclusiveMaximum":9,"multipleOf":3,"not":{"const":6}},"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":4,"uniqueItems":true,"contains":{"const":"a"}}},"required":["s","u","n","l"],"if":{"required":["s"]},"then":{"required":["n"]},"dependentRequired":{"s":["n"]},"minProperties":1}`,
			want: `{"type":"object","title":"T","properties":{"s":{"type":"string","pattern":"^a","format":"email"},"u":{"type":"string"},"n":{"type":"number","minimum":0,"exclusiveMaximum":9,"multipleOf":3},"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":4}},"required":["l","n","s","u"],"additionalProperties":false}`,
		},
		{
			name: "tuple items become anyOf",
			in:   `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"number"},{"type":"string"}]}},"required":["p"]}`,
			want: `{"type":"object","properties":{"p":{"type":"array","items":{"anyOf":[{"type":"number"},{"type":"string"}]}}},"required":["p"],"additionalProperties":false}`,
		},
		{
			name: "explicitly empty nested object is fine",
			in:   `{"type":"object","properties":{"e":{"type":"object","additionalProperties":false}},"required":["e"]}`,
			want: `{"type":"object","properties":{"e":{"type":"object","properties":{},"required":[],"additionalProperties":false}},"required":["e"],"additionalProperties":false}`,
		},
		{name: "free-form nested object", in: `{"type":"object","properties":{"params":{"type":"object"}}}`},
		{name: "map with additionalProperties schema", in: `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`},
		{name: "additionalProperties true at the root", in: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`},
		{name: "patternProperties", in: `{"type":"object","properties":{"a":{"type":"string"}},"patternProperties":{"^x":{"type":"string"}}}`},
		{name: "array without items", in: `{"type":"object","properties":{"l":{"type":"array"}}}`},
		{name: "value of any type", in: `{"type":"object","properties":{"v":{"description":"anything"}}}`},
		{name: "boolean schema", in: `{"type":"object","properties":{"v":true}}`},
		{name: "anyOf at the root", in: `{"type":"object","anyOf":[{"properties":{"a":{"type":"string"}}},{"properties":{"b":{"type":"string"}}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := obj(t, tt.in)
			before := canon(t, in)
			got, ok := strictSchema(in)
			if tt.want == "" {
				if ok {
					t.Errorf("strictSchema(%s) = %s, true; want false", tt.in, canon(t, got))
				}
			} else if !ok {
				t.Errorf("strictSchema(%s) = false, want true", tt.in)
			} else if g, w := canon(t, got), canon(t, obj(t, tt.want)); g != w {
				t.Errorf("strictSchema(%s)\n got %s\nwant %s", tt.in, g, w)
			}
			if after := canon(t, in); after != before {
				t.Errorf("strictSchema modified its input:\n%s\n%s", before, after)
			}
		})
	}
}

// TestStrictInvariants walks converted schemas and checks the rules strict
// mode imposes on every object.
func TestStrictInvariants(t *testing.T) {
	in := obj(t, `{"type":"object","properties":{
		"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"string"}}}}},
		"l":{"type":"array","items":{"anyOf":[{"type":"object","properties":{"d":{"type":"integer"}}},{"type":"string"}]}}}}`)
	got, ok := strictSchema(in)
	if !ok {
		t.Fatal("strictSchema = false, want true")
	}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if props, ok := s["properties"].(map[string]any); ok {
			if s["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties = %v, want false", path, s["additionalProperties"])
			}
			req := requiredSet(s)
			for name, p := range props {
				if !req[name] {
					t.Errorf("%s: property %q not required", path, name)
				}
				walk(path+"."+name, p.(map[string]any))
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
		for _, b := range asList(s["anyOf"]) {
			walk(path+"|", b.(map[string]any))
		}
	}
	walk("$", got)
}
