package catalog

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
)

func mustStruct(t testing.TB, js string) *structpb.Struct {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("schema %s: %v", js, err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatalf("schema %s: %v", js, err)
	}
	return s
}

// entry makes an entry of a valid tool in the default tenant, deferred.
func entry(t testing.TB, tl *tooldexv1.Tool) *Entry {
	t.Helper()
	ve := &ValidationError{}
	e := NewEntry(ve, "t", tl, "default", tooldexv1.Origin_ORIGIN_FRONTEND, "", tooldexv1.Loading_LOADING_DEFERRED)
	if e == nil {
		t.Fatalf("NewEntry(%v): %v", tl, ve)
	}
	return e
}

func TestOneLine(t *testing.T) {
	long := strings.Repeat("word ", 40) // 200 bytes
	tests := []struct {
		desc, want string
	}{
		{"", ""},
		{"  one line  ", "one line"},
		{"first\nsecond", "first"},
		{"\n\n  first after blanks\nsecond", "first after blanks"},
		{"  lead\tspace\nsecond", "lead\tspace"},
		{long, strings.TrimSpace(strings.Repeat("word ", 32)) + "…"},
		{strings.Repeat("é", 100), strings.Repeat("é", 80) + "…"},
		{strings.Repeat("x", 170), strings.Repeat("x", 160) + "…"},
	}
	for _, tt := range tests {
		if got := entry(t, &tooldexv1.Tool{Name: "t", Description: tt.desc}).OneLine(); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.desc, got, tt.want)
		}
	}
}

func TestParamSummary(t *testing.T) {
	tests := []struct {
		schema, want string
	}{
		{`{"type":"object"}`, ""},
		{`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["b"]}`, "b (string, required), a (integer)"},
		{`{"properties":{"t":{"type":["string","null"]},"e":{"enum":[1,2]},"x":{}}}`, "e (enum), t (string|null), x (any)"},
	}
	for _, tt := range tests {
		e := entry(t, &tooldexv1.Tool{Name: "t", InputSchema: mustStruct(t, tt.schema)})
		if got := e.Params(); got != tt.want {
			t.Errorf("Params(%s) = %q, want %q", tt.schema, got, tt.want)
		}
	}
}

// TestViews checks each view against the registered tool: the JSON one
// holds the schema as JSON text and no Struct, the bare one neither, and
// the wire one marshals to what the tool itself decodes to. Unknown fields
// survive every view.
func TestViews(t *testing.T) {
	future := protowire.AppendVarint(protowire.AppendTag(nil, 100, protowire.VarintType), 7)
	tools := []*tooldexv1.Tool{
		{Name: "none", Description: "no schema"},
		{Name: "empty", InputSchema: &structpb.Struct{}},
		{Name: "full", Description: "d", SearchHint: "h", Aliases: []string{"f"},
			Annotations: &tooldexv1.ToolAnnotations{Idempotent: true},
			InputSchema: mustStruct(t, `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number","maximum":3}},"required":["z"]}`)},
	}
	tools[2].ProtoReflect().SetUnknown(future)
	for _, tl := range tools {
		e := entry(t, tl)
		want := proto.CloneOf(tl)
		want.Source = &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_FRONTEND}
		want.Loading = tooldexv1.Loading_LOADING_DEFERRED
		if !proto.Equal(e.Tool(), want) {
			t.Errorf("%s: Tool() = %v, want %v", tl.Name, e.Tool(), want)
		}
		b, err := proto.Marshal(e.WireTool())
		if err != nil {
			t.Fatal(err)
		}
		got := &tooldexv1.Tool{}
		if err := proto.Unmarshal(b, got); err != nil || !proto.Equal(got, want) {
			t.Errorf("%s: WireTool decodes to %v (%v), want %v", tl.Name, got, err, want)
		}
		bare := proto.CloneOf(want)
		bare.InputSchema = nil
		if !proto.Equal(e.BareTool(), bare) {
			t.Errorf("%s: BareTool() = %v", tl.Name, e.BareTool())
		}
		js := proto.CloneOf(bare)
		if tl.InputSchema != nil {
			js.InputSchemaJson = SchemaJSON(tl.InputSchema)
		}
		if !proto.Equal(e.JSONTool(), js) {
			t.Errorf("%s: JSONTool() = %v, want %v", tl.Name, e.JSONTool(), js)
		}
		if e.SchemaJSON() != js.InputSchemaJson {
			t.Errorf("%s: SchemaJSON() = %q", tl.Name, e.SchemaJSON())
		}
	}
}

func TestSameDefinition(t *testing.T) {
	base := &tooldexv1.Tool{Name: "t", Description: "d", InputSchema: mustStruct(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}`)}
	reordered := &tooldexv1.Tool{Name: "t", Description: "d", InputSchema: mustStruct(t, `{"properties":{"b":{"type":"number"},"a":{"type":"string"}},"type":"object"}`)}
	otherSource := proto.CloneOf(base)
	otherSource.Source = &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_CATALOG, Id: "file"}
	otherSchema := proto.CloneOf(base)
	otherSchema.InputSchema = mustStruct(t, `{"type":"object"}`)
	hint := proto.CloneOf(base)
	hint.SearchHint = "h"
	tests := []struct {
		name     string
		o        *tooldexv1.Tool
		same, eq bool
	}{
		{"itself", base, true, true},
		{"keys reordered", reordered, true, true},
		{"other source", otherSource, true, false},
		{"other schema", otherSchema, false, false},
		{"search hint", hint, false, false},
	}
	a := entry(t, base)
	for _, tt := range tests {
		b := entry(t, tt.o)
		if got := a.SameDefinition(b); got != tt.same {
			t.Errorf("%s: SameDefinition = %v, want %v", tt.name, got, tt.same)
		}
		if got := a.Equal(b); got != tt.eq {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.eq)
		}
	}
}

func TestValidate(t *testing.T) {
	e := entry(t, &tooldexv1.Tool{Name: "t", InputSchema: mustStruct(t, `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)})
	tests := []struct {
		params string
		ok     bool
	}{
		{`{"n":1}`, true},
		{`{"n":"x"}`, false},
		{`{}`, false},
	}
	for _, tt := range tests {
		var v any
		if err := json.Unmarshal([]byte(tt.params), &v); err != nil {
			t.Fatal(err)
		}
		if err := e.Validate(context.Background(), v); (err == nil) != tt.ok {
			t.Errorf("Validate(%s) = %v, want ok %v", tt.params, err, tt.ok)
		}
		if fc := e.FastChecker(); fc == nil || tt.ok && !fc.Valid(v) {
			t.Errorf("FastChecker vouches %v for %s", fc, tt.params)
		}
	}
}

// TestValidatedSchemaDoc checks that the schema validation decodes (and
// compiles) gives the index the parameter text a fresh decoding does: the
// compiler must not have changed it.
func TestValidatedSchemaDoc(t *testing.T) {
	for _, js := range []string{
		`{"type":"object","properties":{"path":{"type":"string","description":"where"}},"required":["path"]}`,
		`{"$defs":{"a":{"type":"string","$ref":"#/$defs/b"},"b":{"minLength":1}},"properties":{"x":{"$ref":"#/$defs/a","enum":["p","q"]}}}`,
	} {
		s := mustStruct(t, js)
		e := entry(t, &tooldexv1.Tool{Name: "t", InputSchema: s})
		want := index.ParamText(s.AsMap())
		c := New(Config{})
		if got := c.docLocked(e).Params; got != want || got == "" {
			t.Errorf("schema %.60s: param text %q, want %q", js, got, want)
		}
		// Once stored, it is derived again from the stored schema.
		mustRegisterEntry(t, c, e)
		c.mu.Lock()
		got := c.docLocked(e).Params
		c.mu.Unlock()
		if got != want {
			t.Errorf("schema %.60s: param text once stored %q, want %q", js, got, want)
		}
	}
}

func TestNewEntryRefuses(t *testing.T) {
	tests := []struct {
		tool  *tooldexv1.Tool
		field string
	}{
		{&tooldexv1.Tool{Name: ""}, "t.name"},
		{&tooldexv1.Tool{Name: "bad name"}, "t.name"},
		{&tooldexv1.Tool{Name: "t", Description: strings.Repeat("x", MaxDescription+1)}, "t.description"},
		{&tooldexv1.Tool{Name: "t", Aliases: []string{"ok", "not ok"}}, "t.aliases[1]"},
		{&tooldexv1.Tool{Name: "t", InputSchemaJson: "{}"}, "t.input_schema_json"},
		{&tooldexv1.Tool{Name: "t", InputSchema: mustStruct(t, `{"type":"string"}`)}, "t.input_schema"},
		{&tooldexv1.Tool{Name: "t", InputSchema: mustStruct(t, `{"$ref":"https://example.com/s.json"}`)}, "t.input_schema"},
	}
	for _, tt := range tests {
		ve := &ValidationError{}
		if e := NewEntry(ve, "t", tt.tool, "default", tooldexv1.Origin_ORIGIN_FRONTEND, "", tooldexv1.Loading_LOADING_DEFERRED); e != nil {
			t.Errorf("%v: accepted", tt.tool)
			continue
		}
		if len(ve.Violations) != 1 || ve.Violations[0].Field != tt.field {
			t.Errorf("%v: violations %v, want one on %s", tt.tool, ve.Violations, tt.field)
		}
	}
}

func mustRegisterEntry(t *testing.T, c *Catalog, e *Entry) {
	t.Helper()
	if _, err := c.Register(e.Tenant(), "test", []*Entry{e}, false); err != nil {
		t.Fatal(err)
	}
}
