package service

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tooldex/tooldex/demo"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolfile"
)

// summarySchemas are schemas whose summaries take every branch of
// ParamSummary: type lists (empty, with non-strings), enum-only and typeless
// parameters, parameters that are not objects, required lists with
// non-strings (which count as "", a legal property name), and properties
// or required of the wrong kind.
func summarySchemas() []string {
	return []string{
		`{}`,
		`{"type":"object","properties":{}}`,
		`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"},"c":{"type":"boolean"}},"required":["c","a"]}`,
		`{"properties":{"x":{"type":["string","null"]},"y":{"type":[]},"z":{"type":[1,"a",null,{"k":1}]}}}`,
		`{"properties":{"e":{"enum":["a","b"]},"n":{"enum":null},"t":{"type":""},"u":{"type":"","enum":[]},"v":{"type":7},"w":{}}}`,
		`{"properties":{"s":"string","n":null,"l":[1,2],"o":{"properties":{"inner":{"type":"string"}}}}}`,
		`{"properties":{"":{"type":"string"},"a":{"type":"number"}},"required":[7]}`,
		`{"properties":{"":{"type":"string"},"a":{"type":"number"}},"required":["",""]}`,
		`{"properties":{"a":{"type":"string"}},"required":"a"}`,
		`{"properties":[{"a":1}],"required":["a"]}`,
		`{"properties":null,"items":[],"required":{}}`,
		`{"properties":{"日本":{"type":"string"},"émoji 🎉":{"type":"x\"y"},"Z":{},"a":{}},"required":["émoji 🎉"]}`,
		`{"properties":{"b":{"type":"string"}},"required":["missing","b","b"]}`,
	}
}

// checkParamSummary checks the summary rendered from s's stored bytes, by
// walking them and from a recipe, and the summary of an entry with schema
// s, against ParamSummary(s).
func checkParamSummary(t *testing.T, s *structpb.Struct) {
	t.Helper()
	want := ParamSummary(s)
	tl := &tooldexv1.Tool{Name: "t", InputSchema: s}
	p, buf := prepareTool(tl, nil, nil)
	e := makeEntry(nil, tl, p, buf, nil, tooldexv1.Loading_LOADING_DEFERRED)
	if got := string(e.appendParams([]byte("x"))); got != "x"+want {
		t.Fatalf("entry's summary %q, want %q (schema %v)", got, "x"+want, s)
	}
	if e.hasParams() != (want != "") {
		t.Fatalf("hasParams %v for summary %q", e.hasParams(), want)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(s)
	if err != nil {
		return // not stored as bytes (encodeSchema)
	}
	if got := string(appendParamSummary([]byte("x"), b)); got != "x"+want {
		t.Fatalf("summary from bytes %q, want %q (schema %v)", got, "x"+want, s)
	}
	// The recipe refers to the end of the bytes: other bytes may precede
	// them (a tool's own unknown fields).
	wire := append([]byte("\x7a\x01z"), b...)
	if got := string(appendSummary([]byte("x"), appendRecipe(nil, b), wire)); got != "x"+want {
		t.Fatalf("summary from recipe %q, want %q (schema %v)", got, "x"+want, s)
	}
}

// TestParamSummaryWire checks that the summary rendered from a schema's
// stored bytes is ParamSummary's, on the schemas above, the hostile ones,
// the demo catalog and random schemas.
func TestParamSummaryWire(t *testing.T) {
	for _, js := range append(summarySchemas(), hostileSchemas()...) {
		checkParamSummary(t, mustStruct(t, js))
	}
	tools, err := toolfile.Parse(demo.Name, demo.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		checkParamSummary(t, tl.GetInputSchema())
	}
	// A schema that cannot be encoded (invalid UTF-8, in-process only)
	// keeps its summary as text.
	bad := &structpb.Struct{Fields: map[string]*structpb.Value{
		"properties": structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"b\xff": structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"type": structpb.NewStringValue("string")}}),
			"a":     structpb.NewStructValue(&structpb.Struct{}),
		}}),
		"required": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("a")}}),
	}}
	checkParamSummary(t, bad)
	r := rand.New(rand.NewPCG(3, 5))
	for i := range 3000 {
		tl := randTool(r, fmt.Sprint("t", i))
		if tl.GetInputSchema() == nil {
			continue
		}
		checkParamSummary(t, tl.GetInputSchema())
		// Random values in the places the summary reads.
		props := map[string]any{}
		for j := range r.IntN(6) {
			props[fmt.Sprintf("p%d_%s", j, words[r.IntN(len(words))])] = randValue(r, 2)
		}
		req := make([]any, r.IntN(4))
		for j := range req {
			req[j] = randValue(r, 1)
		}
		s, err := structpb.NewStruct(map[string]any{"properties": props, "required": req})
		if err != nil {
			t.Fatal(err)
		}
		checkParamSummary(t, s)
	}
}

// FuzzParamSummaryWire checks the summary rendered from stored bytes
// against ParamSummary for any schema.
func FuzzParamSummaryWire(f *testing.F) {
	for _, s := range append(summarySchemas(), hostileSchemas()...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		if s := structOf(js); s != nil {
			checkParamSummary(t, s)
		}
	})
}

// BenchmarkParamSummary measures the summary of each demo catalog tool:
// rendered from its recipe (what Search does), walking the stored bytes,
// and copied from a stored string.
func BenchmarkParamSummary(b *testing.B) {
	tools, err := toolfile.Parse(demo.Name, demo.Catalog)
	if err != nil {
		b.Fatal(err)
	}
	var wires, recipes [][]byte
	var sums []string
	for _, tl := range tools {
		if s := tl.GetInputSchema(); s != nil {
			w, err := proto.MarshalOptions{Deterministic: true}.Marshal(s)
			if err != nil {
				b.Fatal(err)
			}
			wires = append(wires, w)
			recipes = append(recipes, appendRecipe(nil, w))
			sums = append(sums, ParamSummary(s))
		}
	}
	buf := make([]byte, 0, 4096)
	b.Run("recipe", func(b *testing.B) {
		for b.Loop() {
			for i, r := range recipes {
				buf = appendSummary(buf[:0], r, wires[i])
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(wires)), "ns/tool")
	})
	b.Run("wire", func(b *testing.B) {
		for b.Loop() {
			for _, w := range wires {
				buf = appendParamSummary(buf[:0], w)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(wires)), "ns/tool")
	})
	b.Run("stored", func(b *testing.B) {
		for b.Loop() {
			for _, s := range sums {
				buf = append(buf[:0], s...)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sums)), "ns/tool")
	})
}

// appendParamSummary appends the parameter summary (ParamSummary) of the
// Struct marshalled as schema to b, walking the bytes: the render-time walk
// the recipe replaced, kept to check the walk and to compare with it
// (BenchmarkParamSummary).
func appendParamSummary(b, schema []byte) []byte {
	start := len(b)
	paramsOf(schema, func(name []byte, required bool, param []byte) {
		b = appendParam(b, len(b) > start, name, required, func(b []byte) []byte { return appendParamType(b, param) })
	})
	return b
}

// appendParam appends one parameter of a summary: `name (type)` or `name
// (type, required)`, after ", " when not the first.
func appendParam(b []byte, sep bool, name []byte, required bool, typ func([]byte) []byte) []byte {
	if sep {
		b = append(b, ", "...)
	}
	b = append(b, name...)
	b = append(b, " ("...)
	b = typ(b)
	if required {
		b = append(b, ", required"...)
	}
	return append(b, ')')
}
