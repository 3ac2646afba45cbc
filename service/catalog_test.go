package service

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// twoPaths serves one Server both ways: with the standard generated
// registration (every message marshalled by the proto codec from full
// tools) and with RegisterDiscoveryService (light tools, schemas as stored
// bytes).
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

// FuzzLightTool checks that a tool stored light decodes to the tool as
// registered, whatever the schema, and that its JSON schema view decodes
// to the registered schema.
func FuzzLightTool(f *testing.F) {
	for _, s := range hostileSchemas() {
		f.Add(s, "description")
	}
	f.Fuzz(func(t *testing.T, js, desc string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(js), &m); err != nil || m == nil {
			return
		}
		s, err := structpb.NewStruct(m)
		if err != nil {
			return
		}
		tl := &tooldexv1.Tool{Name: "t", Description: desc, InputSchema: s, Loading: tooldexv1.Loading_LOADING_DEFERRED}
		l := lightTool(tl)
		if l.InputSchema != nil && proto.Size(s) > 0 {
			if _, err := proto.Marshal(s); err == nil {
				t.Fatal("light tool keeps an encodable Struct")
			}
		}
		if got := fullTool(l); !proto.Equal(got, tl) {
			t.Fatalf("full(light(t)) != t")
		}
		if got := inputSchema(l); !proto.Equal(got, s) {
			t.Fatalf("inputSchema(light(t)) != schema")
		}
		for _, view := range []tooldexv1.SchemaView{viewJSON, viewNone} {
			res := []*tooldexv1.SearchResult{{Tool: l}}
			applyView(res, []*entry{{tool: l}}, view)
			checkToolView(t, "light tool", view, res[0].GetTool(), tl)
		}
	})
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
