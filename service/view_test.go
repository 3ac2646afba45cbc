package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/demo"
	"github.com/tooldex/tooldex/internal/toolfile"
)

const (
	viewStruct = tooldexv1.SchemaView_SCHEMA_VIEW_STRUCT
	viewJSON   = tooldexv1.SchemaView_SCHEMA_VIEW_JSON
	viewNone   = tooldexv1.SchemaView_SCHEMA_VIEW_NONE
)

// decodeJSON decodes JSON text into any (numbers as float64).
func decodeJSON(t testing.TB, js []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, js)
	}
	return v
}

// checkSchemaJSON checks that js, the JSON view of a tool, is compact and
// equals want, its input schema (nil: none), as protojson and as
// encoding/json write it.
func checkSchemaJSON(t testing.TB, what, js string, want *structpb.Struct) {
	t.Helper()
	if want == nil {
		if js != "" {
			t.Fatalf("%s: input_schema_json = %s for a tool without a schema, want empty", what, js)
		}
		return
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(js)); err != nil || compact.String() != js {
		t.Fatalf("%s: input_schema_json is not compact JSON (%v): %s", what, err, js)
	}
	got := decodeJSON(t, []byte(js))
	pj, err := protojson.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if w := decodeJSON(t, pj); !reflect.DeepEqual(got, w) {
		t.Fatalf("%s: input_schema_json differs from input_schema as protojson:\n got %s\nwant %s", what, js, pj)
	}
	ej, err := json.Marshal(want.AsMap())
	if err != nil {
		t.Fatal(err)
	}
	if w := decodeJSON(t, ej); !reflect.DeepEqual(got, w) {
		t.Fatalf("%s: input_schema_json differs from input_schema as encoding/json:\n got %s\nwant %s", what, js, ej)
	}
}

// checkView checks that got, a tool of a response for view, is want (the
// same tool of the SCHEMA_VIEW_STRUCT response, or as registered) in that
// view.
func checkToolView(t testing.TB, what string, view tooldexv1.SchemaView, got, want *tooldexv1.Tool) {
	t.Helper()
	if got.GetName() != want.GetName() {
		t.Fatalf("%s: tool %q, want %q", what, got.GetName(), want.GetName())
	}
	switch view {
	case viewJSON:
		if got.GetInputSchema() != nil {
			t.Fatalf("%s: JSON view of %s carries input_schema", what, got.GetName())
		}
		checkSchemaJSON(t, what+" "+got.GetName(), got.GetInputSchemaJson(), want.GetInputSchema())
	case viewNone:
		if got.GetInputSchema() != nil || got.GetInputSchemaJson() != "" {
			t.Fatalf("%s: NONE view of %s carries a schema: %v", what, got.GetName(), got)
		}
	default:
		if got.GetInputSchemaJson() != "" {
			t.Fatalf("%s: STRUCT view of %s carries input_schema_json", what, got.GetName())
		}
	}
	// Apart from the schema, the tool is the same.
	a, b := proto.CloneOf(got), proto.CloneOf(want)
	a.InputSchema, a.InputSchemaJson, b.InputSchema, b.InputSchemaJson = nil, "", nil, ""
	if !proto.Equal(a, b) {
		t.Fatalf("%s: %s in view %v differs beyond its schema:\n got %v\nwant %v", what, got.GetName(), view, a, b)
	}
}

// catalogTools returns every tool of the shared catalogs (next to the
// repository: ../../shared/catalogs, or $TOOLDEX_CATALOGS) and of the demo
// catalog, names made distinct, always_load cleared so that select: lists
// them all.
func catalogTools(t *testing.T) []*tooldexv1.Tool {
	t.Helper()
	tools, err := toolfile.Parse(demo.Name, demo.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("TOOLDEX_CATALOGS")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "catalogs")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Logf("no catalogs in %s: the demo catalog only", dir)
	}
	for _, f := range files {
		ts, err := toolfile.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t.Logf("%s: %d tools", f, len(ts))
		tools = append(tools, ts...)
	}
	seen := map[string]int{}
	for _, tl := range tools {
		if n := seen[tl.Name]; n > 0 {
			tl.Name = fmt.Sprintf("%s_%d", tl.Name, n)
		}
		seen[tl.Name]++
		tl.AlwaysLoad = false
	}
	return tools
}

// TestSchemaViewsOnCatalogs selects every tool of the shared catalogs (and
// the demo catalog) in each schema view, through both gRPC registrations
// and in-process, and checks that the JSON view decodes to what the Struct
// view does (as protojson and encoding/json write it), that NONE carries no
// schema, and that nothing else differs.
func TestSchemaViewsOnCatalogs(t *testing.T) {
	tools := catalogTools(t)
	s := New(Config{Logger: zaptest.NewLogger(t), Policy: Policy{Core: []string{}}})
	standard, fast := twoPaths(t, s)
	ctx := t.Context()
	if _, err := fast.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		t.Fatal(err)
	}
	registered := map[string]*tooldexv1.Tool{}
	var names []string
	for _, tl := range tools {
		registered[tl.Name] = tl
		names = append(names, tl.Name)
	}
	withSchema := 0
	for start := 0; start < len(names); start += 200 {
		q := "select:" + strings.Join(names[start:min(start+200, len(names))], ",")
		var structResp *tooldexv1.SearchResponse
		for _, view := range []tooldexv1.SchemaView{tooldexv1.SchemaView_SCHEMA_VIEW_UNSPECIFIED, viewStruct, viewJSON, viewNone} {
			req := &tooldexv1.SearchRequest{Query: q, SchemaView: view}
			var resps []*tooldexv1.SearchResponse
			for _, call := range []func() (*tooldexv1.SearchResponse, error){
				func() (*tooldexv1.SearchResponse, error) { return fast.Search(ctx, req) },
				func() (*tooldexv1.SearchResponse, error) { return standard.Search(ctx, req) },
				func() (*tooldexv1.SearchResponse, error) { return s.Search(ctx, req) },
			} {
				r, err := call()
				if err != nil {
					t.Fatal(err)
				}
				resps = append(resps, r)
			}
			if !proto.Equal(resps[0], resps[1]) || !proto.Equal(resps[0], resps[2]) {
				t.Fatalf("view %v: fast, standard and in-process responses differ", view)
			}
			r := resps[0]
			if len(r.GetResults()) != min(200, len(names)-start) {
				t.Fatalf("%s: %d results, want every tool", q, len(r.GetResults()))
			}
			if structResp == nil {
				structResp = r
			}
			// The text and everything but the tools are the same in every view.
			a, b := proto.CloneOf(r), proto.CloneOf(structResp)
			for i := range a.Results {
				a.Results[i].Tool, b.Results[i].Tool = nil, nil
			}
			if !proto.Equal(a, b) {
				t.Fatalf("view %v: response differs from the Struct view's beyond tools", view)
			}
			for i, res := range r.GetResults() {
				want := structResp.GetResults()[i].GetTool()
				checkToolView(t, fmt.Sprint("Search view ", view), view, res.GetTool(), want)
				// And the Struct view is the registered schema.
				if !proto.Equal(want.GetInputSchema(), registered[want.GetName()].GetInputSchema()) {
					t.Fatalf("%s: Struct view schema differs from the registered one", want.GetName())
				}
				if view == viewJSON && want.GetInputSchema() != nil {
					withSchema++
				}
			}
		}
	}
	if withSchema < 50 {
		t.Errorf("only %d tools with schemas checked in the JSON view", withSchema)
	}
	// Discover and Prefetch, every view, over the same catalog.
	for _, q := range []string{"read a file", "send a slack message", "run a shell command", "search the web", "edit a notebook cell"} {
		for _, view := range []tooldexv1.SchemaView{viewJSON, viewNone} {
			ds, err := fast.Discover(ctx, &tooldexv1.DiscoverRequest{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			dv, err := fast.Discover(ctx, &tooldexv1.DiscoverRequest{Query: q, SchemaView: view})
			if err != nil {
				t.Fatal(err)
			}
			if len(dv.GetResults()) == 0 || len(dv.GetResults()) != len(ds.GetResults()) || dv.GetText() != ds.GetText() {
				t.Fatalf("Discover(%q) view %v: %d results, want %d and the same text", q, view, len(dv.GetResults()), len(ds.GetResults()))
			}
			for i, res := range dv.GetResults() {
				checkToolView(t, "Discover "+q, view, res.GetTool(), ds.GetResults()[i].GetTool())
			}
			ps, err := fast.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: q, MinScore: 0.01})
			if err != nil {
				t.Fatal(err)
			}
			pv, err := fast.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: q, MinScore: 0.01, SchemaView: view})
			if err != nil {
				t.Fatal(err)
			}
			if len(pv.GetResults()) == 0 || len(pv.GetResults()) != len(ps.GetResults()) || pv.GetText() != ps.GetText() {
				t.Fatalf("Prefetch(%q) view %v: %d results, want %d and the same text", q, view, len(pv.GetResults()), len(ps.GetResults()))
			}
			for i, res := range pv.GetResults() {
				checkToolView(t, "Prefetch "+q, view, res.GetTool(), ps.GetResults()[i].GetTool())
			}
		}
	}
}

// TestSchemaViewErrors checks that an unknown view is INVALID_ARGUMENT
// naming schema_view, for each RPC that takes one, and that registering a
// tool with input_schema_json, or with a schema JSON cannot hold, is
// refused.
func TestSchemaViewErrors(t *testing.T) {
	c := newTestEnv(t)
	register(t, c, searchCatalog(t)...)
	bad := tooldexv1.SchemaView(7)
	_, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: "cron", SchemaView: bad})
	if got := badFields(t, err); !slices.Equal(got, []string{"schema_view"}) {
		t.Errorf("Search: violations %q, want [schema_view]", got)
	}
	_, err = c.Search(t.Context(), &tooldexv1.SearchRequest{Query: "cron", MaxResults: -1, SchemaView: -1})
	if got := badFields(t, err); !slices.Equal(got, []string{"max_results", "schema_view"}) {
		t.Errorf("Search: violations %q, want [max_results schema_view]", got)
	}
	_, err = c.Discover(t.Context(), &tooldexv1.DiscoverRequest{Query: "cron", SchemaView: bad})
	if got := badFields(t, err); !slices.Equal(got, []string{"schema_view"}) {
		t.Errorf("Discover: violations %q, want [schema_view]", got)
	}
	_, err = c.Prefetch(t.Context(), &tooldexv1.PrefetchRequest{Message: "schedule a cron job", SchemaView: bad})
	if got := badFields(t, err); !slices.Equal(got, []string{"schema_view"}) {
		t.Errorf("Prefetch: violations %q, want [schema_view]", got)
	}

	withJSON := &tooldexv1.Tool{Name: "j", InputSchemaJson: `{"type":"object"}`}
	_, err = c.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{withJSON}})
	if got := badFields(t, err); !slices.Equal(got, []string{"tools[0].input_schema_json"}) {
		t.Errorf("RegisterTools with input_schema_json: violations %q", got)
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s := mustStruct(t, `{"type":"object","properties":{"n":{"type":"number"}}}`)
		s.Fields["properties"].GetStructValue().Fields["n"].GetStructValue().Fields["maximum"] = structpb.NewNumberValue(x)
		_, err = c.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "nan", InputSchema: s}}})
		if got := badFields(t, err); !slices.Equal(got, []string{"tools[0].input_schema"}) {
			t.Errorf("RegisterTools with %v in the schema: violations %q", x, got)
		}
	}
}

// TestViewCopiesEveryField sets every field of a Tool (whatever fields Tool
// has: a field added later is set too) and checks that the JSON and NONE
// views keep all of them but the schema.
func TestViewCopiesEveryField(t *testing.T) {
	full := &tooldexv1.Tool{}
	fillMessage(t, full.ProtoReflect())
	if full.GetInputSchema() == nil || full.GetAnnotations() == nil || len(full.GetAliases()) == 0 {
		t.Fatalf("sample tool lacks fields: %v", full)
	}
	future := protowire.AppendVarint(protowire.AppendTag(nil, 100, protowire.VarintType), 7)
	full.ProtoReflect().SetUnknown(future)
	full.InputSchemaJson = "" // output only
	// Every icon field set, with values registration accepts.
	full.Icons = []*tooldexv1.Icon{{Src: "https://example.com/i.png", MimeType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"}}
	ve := &catalog.ValidationError{}
	e := catalog.NewEntry(ve, "t", full, auth.DefaultTenant, tooldexv1.Origin_ORIGIN_FRONTEND, "", full.GetLoading())
	if e == nil {
		t.Fatalf("sample tool refused: %v", ve)
	}
	for _, view := range []tooldexv1.SchemaView{viewJSON, viewNone} {
		got := viewTool(e, view)
		checkToolView(t, "view", view, got, full)
		if string(got.ProtoReflect().GetUnknown()) != string(future) {
			t.Errorf("view %v: unknown fields %x, want %x", view, got.ProtoReflect().GetUnknown(), future)
		}
	}
}

// sampleValue returns a non-default value for field fd of parent (for a
// list: an element).
func sampleValue(t *testing.T, parent protoreflect.Message, fd protoreflect.FieldDescriptor) protoreflect.Value {
	t.Helper()
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("x_" + string(fd.Name()))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(fd.Enum().Values().Get(fd.Enum().Values().Len() - 1).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(7)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(7)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(7)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(7)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(0.5)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(0.5)
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("x"))
	case protoreflect.MessageKind:
		if fd.Message().FullName() == "google.protobuf.Struct" {
			return protoreflect.ValueOfMessage(mustStruct(t, `{"type":"object","properties":{"a":{"type":"string"}}}`).ProtoReflect())
		}
		var msg protoreflect.Message
		if fd.IsList() {
			msg = parent.Mutable(fd).List().NewElement().Message()
		} else {
			msg = parent.NewField(fd).Message()
		}
		fillMessage(t, msg)
		return protoreflect.ValueOfMessage(msg)
	}
	t.Fatalf("field %s of kind %v: extend this test", fd.FullName(), fd.Kind())
	return protoreflect.Value{}
}

// fillMessage sets every field of m but input_schema_json (output only).
func fillMessage(t *testing.T, m protoreflect.Message) {
	t.Helper()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.Name() == "input_schema_json":
		case fd.IsMap():
			t.Fatalf("map field %s: extend this test", fd.FullName())
		case fd.IsList():
			v := sampleValue(t, m, fd)
			m.Mutable(fd).List().Append(v)
		default:
			m.Set(fd, sampleValue(t, m, fd))
		}
	}
}
