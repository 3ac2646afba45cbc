package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// twoPaths serves one Server both ways: with the standard generated
// registration (every message marshalled by the proto codec from copies of
// the stored tools) and with RegisterDiscoveryService (the stored tools
// themselves).
func twoPaths(t *testing.T, s *Server) (standard, fast tooldexv1.DiscoveryServiceClient) {
	t.Helper()
	dial := func(register func(*grpc.Server)) tooldexv1.DiscoveryServiceClient {
		lis := bufconn.Listen(1 << 20)
		t.Cleanup(func() { lis.Close() })
		srv := grpc.NewServer(grpc.UnaryInterceptor(UnaryInterceptor(zaptest.NewLogger(t))))
		register(srv)
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		conn, err := grpc.NewClient("passthrough:///bufnet",
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return tooldexv1.NewDiscoveryServiceClient(conn)
	}
	standard = dial(func(g *grpc.Server) { tooldexv1.RegisterDiscoveryServiceServer(g, s) })
	fast = dial(func(g *grpc.Server) { RegisterDiscoveryService(g, s) })
	return standard, fast
}

var words = []string{"send", "slack", "message", "file", "read", "write", "github", "issue", "cron", "schedule",
	"time", "zone", "calculate", "weather", "Paris", "日本語", "émoji 🎉", "search", "list", "delete"}

func randWords(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return strings.Join(ws, " ")
}

// randValue returns a random JSON value (as structpb accepts it).
func randValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(8); {
	case k == 0:
		return nil
	case k == 1:
		return r.IntN(2) == 0
	case k == 2:
		return r.NormFloat64() * 1e3
	case k == 3 && depth > 0:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randValue(r, depth-1)
		}
		return l
	case k == 4 && depth > 0:
		return randObject(r, depth-1)
	default:
		return randWords(r, 1+r.IntN(3))
	}
}

func randObject(r *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range r.IntN(5) {
		m[fmt.Sprintf("k%d_%s", r.IntN(50), words[r.IntN(len(words))])] = randValue(r, depth)
	}
	return m
}

// randTool returns a valid tool with a random definition.
func randTool(r *rand.Rand, name string) *tooldexv1.Tool {
	t := &tooldexv1.Tool{Name: name, Description: randWords(r, 1+r.IntN(30)) + "\nsecond line " + randWords(r, 3)}
	if r.IntN(3) == 0 {
		t.SearchHint = randWords(r, 2)
	}
	if r.IntN(2) == 0 {
		props := map[string]any{}
		for i := range r.IntN(6) {
			p := map[string]any{"type": []string{"string", "number", "integer", "boolean", "object", "array"}[r.IntN(6)], "description": randWords(r, 4)}
			if r.IntN(3) == 0 {
				p["enum"] = []any{"a", "b", randWords(r, 1)}
			}
			if r.IntN(3) == 0 {
				p["x-extra"] = randValue(r, 3) // any JSON: schemas may carry vendor keywords
			}
			props[fmt.Sprintf("p%d", i)] = p
		}
		schema := map[string]any{"type": "object", "properties": props}
		if len(props) > 0 && r.IntN(2) == 0 {
			schema["required"] = []any{"p0"}
		}
		if r.IntN(4) == 0 {
			schema["$defs"] = map[string]any{"d": randObject(r, 3)}
		}
		s, err := structpb.NewStruct(schema)
		if err != nil {
			panic(err)
		}
		t.InputSchema = s
	} else if r.IntN(2) == 0 {
		t.InputSchema = &structpb.Struct{} // present but empty
	}
	if r.IntN(3) == 0 {
		t.Annotations = &tooldexv1.ToolAnnotations{Title: randWords(r, 2), ReadOnly: r.IntN(2) == 0, Idempotent: r.IntN(2) == 0}
	}
	if r.IntN(3) == 0 {
		t.Source = &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_CATALOG, Id: "cat"}
	}
	if r.IntN(4) == 0 {
		t.Aliases = []string{name + "_alias"}
	}
	t.AlwaysLoad = r.IntN(10) == 0
	return t
}

// TestLightToolsEqualStandard checks, over random catalogs and queries,
// that a client decodes the same Search, Discover, Prefetch and ListTools
// responses, in random schema views, from the fast registration as from
// the standard one and from the in-process methods, and that every tool in
// them is the registered one (in the JSON view, its schema as JSON text
// that decodes to the registered schema, as protojson and encoding/json
// write it).
func TestLightToolsEqualStandard(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			s := New(Config{Logger: zaptest.NewLogger(t), Policy: Policy{Core: []string{"core_0", "core_1"}}})
			standard, fast := twoPaths(t, s)
			ctx := t.Context()
			registered := map[string]*tooldexv1.Tool{}
			var names []string
			seen := 0 // tools checked, so the test cannot pass vacuously
			for round := range 3 {
				var batch []*tooldexv1.Tool
				for i := range 40 {
					name := fmt.Sprintf("%s_%d", []string{"tool", "core", "mcp__srv_", "send_message"}[i%4], r.IntN(60))
					if _, dup := registered[name]; dup && round == 0 {
						continue
					}
					dupInBatch := false
					for _, b := range batch {
						dupInBatch = dupInBatch || b.Name == name
					}
					if dupInBatch {
						continue
					}
					tl := randTool(r, name)
					batch = append(batch, tl)
				}
				if _, err := fast.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: batch}); err != nil {
					t.Fatal(err)
				}
				for _, tl := range batch {
					if _, ok := registered[tl.Name]; !ok {
						names = append(names, tl.Name)
					}
					registered[tl.Name] = tl
				}
				// check checks a tool of a response for view (view.go):
				// the registered tool, its schema as the view has it.
				check := func(what string, view tooldexv1.SchemaView, got *tooldexv1.Tool) {
					t.Helper()
					want := proto.CloneOf(registered[got.GetName()])
					if want == nil {
						t.Fatalf("%s: unknown tool %q", what, got.GetName())
					}
					want.Loading = got.GetLoading()
					if want.Source == nil {
						want.Source = got.GetSource()
					}
					seen++
					if view == viewJSON || view == viewNone {
						checkToolView(t, what, view, got, want)
						return
					}
					if !proto.Equal(want, got) {
						t.Fatalf("%s: tool differs from the registered one:\n got %v\nwant %v", what, got, want)
					}
				}
				views := []tooldexv1.SchemaView{tooldexv1.SchemaView_SCHEMA_VIEW_UNSPECIFIED, viewStruct, viewJSON, viewNone}
				queries := []string{"select:" + names[r.IntN(len(names))] + "," + names[r.IntN(len(names))] + ",nope", "mcp__srv", names[r.IntN(len(names))]}
				for range 30 {
					queries = append(queries, randWords(r, 1+r.IntN(4)))
				}
				for _, q := range queries {
					view := views[r.IntN(len(views))]
					req := &tooldexv1.SearchRequest{Query: q, MaxResults: int32(r.IntN(12)), Provider: []string{"", "anthropic", "openai"}[r.IntN(3)], SchemaView: view}
					a, err := standard.Search(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					b, err := fast.Search(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					c, err := s.Search(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					if !proto.Equal(a, b) || !proto.Equal(a, c) {
						t.Fatalf("Search(%q) differs:\nstandard %v\nfast %v\nin-process %v", q, a, b, c)
					}
					for _, res := range b.GetResults() {
						check("Search "+q, view, res.GetTool())
					}
					dview := views[r.IntN(len(views))]
					dreq := &tooldexv1.DiscoverRequest{Query: q, MaxResults: req.MaxResults, SchemaView: dview}
					da, err := standard.Discover(ctx, dreq)
					if err != nil {
						t.Fatal(err)
					}
					db, err := fast.Discover(ctx, dreq)
					if err != nil {
						t.Fatal(err)
					}
					dc, err := s.Discover(ctx, dreq)
					if err != nil {
						t.Fatal(err)
					}
					if !proto.Equal(da, db) || !proto.Equal(da, dc) {
						t.Fatalf("Discover(%q) differs:\nstandard %v\nfast %v\nin-process %v", q, da, db, dc)
					}
					for _, res := range db.GetResults() {
						check("Discover "+q, dview, res.GetTool())
					}
					// The JSON a grpcurl user sees is the same too.
					ja, _ := protojson.Marshal(da)
					jb, _ := protojson.Marshal(db)
					if string(ja) != string(jb) {
						t.Fatalf("Discover(%q) JSON differs", q)
					}
				}
				for i := range 10 {
					msg := randWords(r, 2+r.IntN(6))
					pview := views[r.IntN(len(views))]
					pa, err := standard.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: msg, SessionId: fmt.Sprint("a", round, i), SchemaView: pview})
					if err != nil {
						t.Fatal(err)
					}
					pb, err := fast.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: msg, SessionId: fmt.Sprint("b", round, i), SchemaView: pview})
					if err != nil {
						t.Fatal(err)
					}
					if !proto.Equal(pa, pb) {
						t.Fatalf("Prefetch(%q) differs:\nstandard %v\nfast %v", msg, pa, pb)
					}
					for _, res := range pb.GetResults() {
						check("Prefetch "+msg, pview, res.GetTool())
					}
				}
				for _, lreq := range []*tooldexv1.ListToolsRequest{{}, {NamePrefix: "core"}, {Loading: tooldexv1.Loading_LOADING_CORE}} {
					la, err := standard.ListTools(ctx, lreq)
					if err != nil {
						t.Fatal(err)
					}
					lb, err := fast.ListTools(ctx, lreq)
					if err != nil {
						t.Fatal(err)
					}
					if !proto.Equal(la, lb) {
						t.Fatalf("ListTools(%v) differs", lreq)
					}
					// The JSON a grpcurl user sees is the same too.
					ja, _ := protojson.Marshal(la)
					jb, _ := protojson.Marshal(lb)
					if string(ja) != string(jb) {
						t.Fatalf("ListTools JSON differs")
					}
					for _, tl := range lb.GetTools() {
						check("ListTools", viewStruct, tl)
					}
				}
			}
			if seen < 500 {
				t.Errorf("only %d tools checked", seen)
			}
		})
	}
}

// TestRegisterUnchangedWithLightTools checks that re-registering the same
// definition, with schema keys in another order, is UNCHANGED, and a
// changed schema is UPDATED.
func TestRegisterUnchangedWithLightTools(t *testing.T) {
	c := newTestEnv(t)
	a := &tooldexv1.Tool{Name: "x", Description: "d", InputSchema: mustStruct(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}`)}
	b := &tooldexv1.Tool{Name: "x", Description: "d", InputSchema: mustStruct(t, `{"properties":{"b":{"type":"number"},"a":{"type":"string"}},"type":"object"}`)}
	d := &tooldexv1.Tool{Name: "x", Description: "d", InputSchema: mustStruct(t, `{"type":"object","properties":{"a":{"type":"string"}}}`)}
	for i, want := range []tooldexv1.RegisterOutcome{
		tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED,
		tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED,
		tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED,
	} {
		tl := []*tooldexv1.Tool{a, b, d}[i]
		if got := register(t, c, tl).GetResults()[0].GetOutcome(); got != want {
			t.Errorf("registration %d: %v, want %v", i, got, want)
		}
	}
}

// TestLightToolKeepsUnknownFields checks that fields a newer client sends
// (unknown here) survive storage, both ways out.
func TestLightToolKeepsUnknownFields(t *testing.T) {
	s := New(Config{Logger: zaptest.NewLogger(t)})
	standard, fast := twoPaths(t, s)
	tl := &tooldexv1.Tool{Name: "future_tool", Description: "d", InputSchema: mustStruct(t, `{"type":"object","properties":{"a":{"type":"string"}}}`)}
	future := protowire.AppendVarint(protowire.AppendTag(nil, 100, protowire.VarintType), 7)
	tl.ProtoReflect().SetUnknown(future)
	if _, err := s.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{tl}}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]tooldexv1.DiscoveryServiceClient{"standard": standard, "fast": fast} {
		resp, err := c.ListTools(t.Context(), &tooldexv1.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got := resp.GetTools()[0]
		if string(got.ProtoReflect().GetUnknown()) != string(future) {
			t.Errorf("%s: unknown fields %x, want %x", name, got.ProtoReflect().GetUnknown(), future)
		}
		if !proto.Equal(got.GetInputSchema(), tl.GetInputSchema()) || got.GetDescription() != "d" {
			t.Errorf("%s: got %v", name, got)
		}
	}
}

// storedToolCases are tools of every shape the catalog stores differently:
// no schema, an empty one, fields only extra holds, unknown fields (the
// tool's and its source's), a schema only an in-process caller can send
// (invalid UTF-8: kept as a Struct), a description cut for Search.
func storedToolCases(t *testing.T) []*tooldexv1.Tool {
	t.Helper()
	future := protowire.AppendVarint(protowire.AppendTag(nil, 100, protowire.VarintType), 7)
	withUnknown := &tooldexv1.Tool{Name: "unknown_fields", Description: "has fields from the future",
		InputSchema: mustStruct(t, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)}
	withUnknown.ProtoReflect().SetUnknown(future)
	unknownNoSchema := &tooldexv1.Tool{Name: "unknown_no_schema", Description: "future, no schema"}
	unknownNoSchema.ProtoReflect().SetUnknown(future)
	src := &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_MCP, Id: "srv"}
	src.ProtoReflect().SetUnknown(future)
	badUTF8 := mustStruct(t, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)
	badUTF8.Fields["description"] = structpb.NewStringValue("bad \xff utf-8")
	return []*tooldexv1.Tool{
		{Name: "no_schema", Description: "takes nothing"},
		{Name: "no_description", InputSchema: mustStruct(t, `{"type":"object"}`)},
		{Name: "empty_schema", Description: "d", InputSchema: &structpb.Struct{}},
		withUnknown,
		unknownNoSchema,
		{Name: "source_unknown", Description: "d", Source: src},
		{Name: "bad_utf8", Description: "in-process only", InputSchema: badUTF8},
		{Name: "extras", Description: "  \n  lead\tspace\nsecond", SearchHint: "hint words", AlwaysLoad: true,
			Annotations: &tooldexv1.ToolAnnotations{Title: "T", Idempotent: true}, Aliases: []string{"extras_alias"},
			Source: &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_CATALOG, Id: "cat"}},
		{Name: "long", Description: strings.Repeat("word ", 100) + "\nmore", InputSchema: mustStruct(t, `{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":["string","null"]}},"required":["n"]}`)},
	}
}

// TestStoredTools registers tools of every stored shape in-process, then
// checks ListTools gives each back as registered, that re-registering is
// UNCHANGED, replacing UPDATED (and Execute validates against the new
// schema), and removing takes the tool out of listings and search.
func TestStoredTools(t *testing.T) {
	s := New(Config{Logger: zaptest.NewLogger(t)})
	ctx := t.Context()
	tools := storedToolCases(t)
	want := func(tl *tooldexv1.Tool) *tooldexv1.Tool {
		w := proto.CloneOf(tl)
		if w.Source == nil {
			w.Source = &tooldexv1.ToolSource{}
		}
		if w.Source.Origin == tooldexv1.Origin_ORIGIN_UNSPECIFIED {
			w.Source.Origin = tooldexv1.Origin_ORIGIN_FRONTEND
		}
		w.Loading = s.policy.loading(tl)
		return w
	}
	check := func(what string, tools []*tooldexv1.Tool) {
		t.Helper()
		resp, err := s.ListTools(ctx, &tooldexv1.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got := make(map[string]*tooldexv1.Tool)
		for _, tl := range resp.GetTools() {
			got[tl.GetName()] = tl
		}
		if len(got) != len(tools) {
			t.Fatalf("%s: %d tools listed, want %d", what, len(got), len(tools))
		}
		for _, tl := range tools {
			if g := got[tl.GetName()]; !proto.Equal(g, want(tl)) {
				t.Errorf("%s: %s listed as\n%v\nwant\n%v", what, tl.GetName(), g, want(tl))
			}
		}
	}
	outcomes := func(resp *tooldexv1.RegisterToolsResponse, err error) []tooldexv1.RegisterOutcome {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []tooldexv1.RegisterOutcome
		for _, r := range resp.GetResults() {
			out = append(out, r.GetOutcome())
		}
		return out
	}
	for _, o := range outcomes(s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: tools})) {
		if o != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED {
			t.Fatalf("first registration: %v", o)
		}
	}
	check("registered", tools)
	for i, o := range outcomes(s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: tools})) {
		// bad_utf8's Struct compares unequal to itself only if it held NaN.
		if o != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED {
			t.Errorf("again: %s %v, want UNCHANGED", tools[i].GetName(), o)
		}
	}

	// Execute checks parameters against the stored schema (valid ones are
	// OK here; Execute would then forward them to a host).
	exec := func(name, params string) codes.Code {
		_, err := checkParams(ctx, s.lookup(auth.DefaultTenant, name), &tooldexv1.ExecuteRequest{ToolName: name, ParamsJson: params})
		return status.Code(s.toStatus(err))
	}
	if c := exec("long", `{"n":1}`); c != codes.OK {
		t.Errorf("long {n:1}: %v, want OK", c)
	}
	if c := exec("long", `{"n":"x"}`); c != codes.InvalidArgument {
		t.Errorf("long {n:x}: %v, want InvalidArgument", c)
	}
	if c := exec("bad_utf8", `{}`); c != codes.InvalidArgument {
		t.Errorf("bad_utf8 {}: %v, want InvalidArgument (a is required)", c)
	}

	// Replace every tool with a changed definition.
	changed := make([]*tooldexv1.Tool, len(tools))
	for i, tl := range tools {
		c := proto.CloneOf(tl)
		c.Description += " (v2)"
		if c.GetName() == "long" {
			c.InputSchema = mustStruct(t, `{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}`)
		}
		changed[i] = c
	}
	for i, o := range outcomes(s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: changed})) {
		if o != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED {
			t.Errorf("changed: %s %v, want UPDATED", changed[i].GetName(), o)
		}
	}
	check("replaced", changed)
	if c := exec("long", `{"n":"x"}`); c != codes.OK {
		t.Errorf("replaced long {n:x}: %v, want OK", c)
	}
	if c := exec("long", `{"n":1}`); c != codes.InvalidArgument {
		t.Errorf("replaced long {n:1}: %v, want InvalidArgument", c)
	}
	resp, err := s.Search(ctx, &tooldexv1.SearchRequest{Query: "select:long,no_schema,extras"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.GetText(), `"n":{"type":"string"}`) || strings.Contains(resp.GetText(), `"integer"`) {
		t.Errorf("select: text after replacing long:\n%s", resp.GetText())
	}

	// Remove half.
	var names []string
	for _, tl := range changed[:len(changed)/2] {
		names = append(names, tl.GetName())
	}
	if _, err := s.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: names}); err != nil {
		t.Fatal(err)
	}
	check("removed", changed[len(changed)/2:])
	resp, err = s.Search(ctx, &tooldexv1.SearchRequest{Query: "select:" + strings.Join(names, ",")})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetResults()) != 0 || len(resp.GetNotFound()) != len(names) {
		t.Errorf("select: of removed tools: %d results, not found %q", len(resp.GetResults()), resp.GetNotFound())
	}
}

// TestStoredToolsOverGRPC checks that the light tools the fast handlers
// send decode to the registered tools, for every stored shape gRPC can
// carry (not invalid UTF-8), in every schema view.
func TestStoredToolsOverGRPC(t *testing.T) {
	s := New(Config{Logger: zaptest.NewLogger(t)})
	standard, fast := twoPaths(t, s)
	var tools []*tooldexv1.Tool
	var names []string
	for _, tl := range storedToolCases(t) {
		if tl.GetName() != "bad_utf8" {
			tl.AlwaysLoad = false // select: lists deferred tools only
			tools = append(tools, tl)
			names = append(names, tl.GetName())
		}
	}
	if _, err := s.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		t.Fatal(err)
	}
	for _, view := range []tooldexv1.SchemaView{viewStruct, viewJSON, viewNone} {
		var texts []string
		for _, c := range []tooldexv1.DiscoveryServiceClient{standard, fast} {
			resp, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: "select:" + strings.Join(names, ","), SchemaView: view})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetResults()) != len(tools) {
				t.Fatalf("view %v: %d results, want %d", view, len(resp.GetResults()), len(tools))
			}
			for i, r := range resp.GetResults() {
				w := proto.CloneOf(tools[i])
				w.Source = r.GetTool().GetSource()
				w.Loading = tooldexv1.Loading_LOADING_DEFERRED
				checkToolView(t, "select:", view, r.GetTool(), w)
				if view == viewStruct && !proto.Equal(r.GetTool(), w) {
					t.Errorf("%s: got %v, want %v", w.GetName(), r.GetTool(), w)
				}
			}
			texts = append(texts, resp.GetText())
		}
		if texts[0] != texts[1] {
			t.Errorf("view %v: texts differ between the handlers", view)
		}
	}
}
