package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"go.uber.org/zap/zaptest"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/schema"
)

// newTestEnv starts a Server with the default configuration behind a real
// gRPC server on an in-memory listener and returns a client for it.
func newTestEnv(t *testing.T) tooldexv1.DiscoveryServiceClient {
	t.Helper()
	return newTestEnvConfig(t, Config{})
}

// newTestEnvConfig is newTestEnv with a server configuration. Cleanups run
// in reverse: the client connection closes first, then the server stops,
// then the listener closes.
func newTestEnvConfig(t *testing.T, cfg Config) tooldexv1.DiscoveryServiceClient {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = zaptest.NewLogger(t)
	}
	lis := bufconn.Listen(1 << 20)
	t.Cleanup(func() { lis.Close() })

	srv := grpc.NewServer(grpc.UnaryInterceptor(UnaryInterceptor(zaptest.NewLogger(t))))
	RegisterDiscoveryService(srv, New(cfg))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	)
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return tooldexv1.NewDiscoveryServiceClient(conn)
}

// structOf parses a JSON object into a Struct; nil when js is not one (a
// fuzz target skips such input).
func structOf(js string) *structpb.Struct {
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil || m == nil {
		return nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil
	}
	return s
}

// mustStruct parses a JSON object into a Struct.
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

func tool(name, desc string) *tooldexv1.Tool {
	return &tooldexv1.Tool{Name: name, Description: desc}
}

func register(t *testing.T, c tooldexv1.DiscoveryServiceClient, tools ...*tooldexv1.Tool) *tooldexv1.RegisterToolsResponse {
	t.Helper()
	resp, err := c.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools})
	if err != nil {
		t.Fatalf("RegisterTools: %v", err)
	}
	return resp
}

func search(t *testing.T, c tooldexv1.DiscoveryServiceClient, query string) *tooldexv1.SearchResponse {
	t.Helper()
	resp, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: query})
	if err != nil {
		t.Fatalf("Search(%q): %v", query, err)
	}
	return resp
}

func listNames(t *testing.T, c tooldexv1.DiscoveryServiceClient, req *tooldexv1.ListToolsRequest) []string {
	t.Helper()
	resp, err := c.ListTools(t.Context(), req)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	names := []string{}
	for _, tl := range resp.GetTools() {
		names = append(names, tl.GetName())
	}
	return names
}

func resultNames(rs []*tooldexv1.SearchResult) []string {
	names := []string{}
	for _, r := range rs {
		names = append(names, r.GetTool().GetName())
	}
	return names
}

// badFields checks that err is INVALID_ARGUMENT and returns the sorted
// fields of its google.rpc.BadRequest.
func badFields(t *testing.T, err error) []string {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument {
		t.Fatalf("error = %v, want code InvalidArgument", err)
	}
	var fields []string
	found := false
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			found = true
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	if !found {
		t.Fatalf("error %v has no google.rpc.BadRequest detail (details: %v)", err, st.Details())
	}
	slices.Sort(fields)
	return fields
}

func TestRegisterToolsOutcomes(t *testing.T) {
	c := newTestEnv(t)
	type want struct {
		name    string
		outcome tooldexv1.RegisterOutcome
		loading tooldexv1.Loading
	}
	const (
		created   = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED
		updated   = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED
		unchanged = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED
		core      = tooldexv1.Loading_LOADING_CORE
		deferred  = tooldexv1.Loading_LOADING_DEFERRED
	)
	// The steps run in order against one server.
	steps := []struct {
		name  string
		tools []*tooldexv1.Tool
		want  []want
	}{
		{
			name:  "new tools",
			tools: []*tooldexv1.Tool{tool("CronCreate", "Schedule a prompt"), tool("Read", "Read a file")},
			want:  []want{{"CronCreate", created, deferred}, {"Read", created, core}},
		},
		{
			name:  "same definitions",
			tools: []*tooldexv1.Tool{tool("CronCreate", "Schedule a prompt"), tool("Read", "Read a file")},
			want:  []want{{"CronCreate", unchanged, deferred}, {"Read", unchanged, core}},
		},
		{
			name:  "changed description and a new tool",
			tools: []*tooldexv1.Tool{tool("CronCreate", "Schedule a recurring prompt"), tool("CronDelete", "Delete a schedule")},
			want:  []want{{"CronCreate", updated, deferred}, {"CronDelete", created, deferred}},
		},
		{
			name:  "always_load turns a deferred tool core",
			tools: []*tooldexv1.Tool{{Name: "CronDelete", Description: "Delete a schedule", AlwaysLoad: true}},
			want:  []want{{"CronDelete", updated, core}},
		},
		{
			name: "explicit frontend origin equals the filled-in default",
			tools: []*tooldexv1.Tool{{Name: "CronCreate", Description: "Schedule a recurring prompt",
				Source: &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_FRONTEND}}},
			want: []want{{"CronCreate", unchanged, deferred}},
		},
		{
			name:  "caller-set loading is ignored",
			tools: []*tooldexv1.Tool{{Name: "CronCreate", Description: "Schedule a recurring prompt", Loading: core}},
			want:  []want{{"CronCreate", unchanged, deferred}},
		},
	}
	for _, s := range steps {
		resp := register(t, c, s.tools...)
		var got []want
		for _, r := range resp.GetResults() {
			got = append(got, want{r.GetName(), r.GetOutcome(), r.GetLoading()})
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: got results %v, want %v", s.name, got, s.want)
		}
	}
	if got, want := listNames(t, c, &tooldexv1.ListToolsRequest{}), []string{"CronCreate", "CronDelete", "Read"}; !slices.Equal(got, want) {
		t.Errorf("ListTools: got %v, want %v", got, want)
	}
}

func TestRegisterToolsValidateOnly(t *testing.T) {
	c := newTestEnv(t)
	register(t, c, tool("CronCreate", "Schedule a prompt"))

	req := &tooldexv1.RegisterToolsRequest{
		ValidateOnly: true,
		Tools:        []*tooldexv1.Tool{tool("CronCreate", "Something else entirely"), tool("CronList", "List schedules")},
	}
	resp, err := c.RegisterTools(t.Context(), req)
	if err != nil {
		t.Fatalf("RegisterTools(validate_only): %v", err)
	}
	var got []tooldexv1.RegisterOutcome
	for _, r := range resp.GetResults() {
		got = append(got, r.GetOutcome())
	}
	want := []tooldexv1.RegisterOutcome{tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED, tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED}
	if !slices.Equal(got, want) {
		t.Errorf("validate_only outcomes: got %v, want %v", got, want)
	}

	list, err := c.ListTools(t.Context(), &tooldexv1.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if got, want := len(list.GetTools()), 1; got != want {
		t.Fatalf("after validate_only: got %d tools, want %d", got, want)
	}
	if got, want := list.GetTools()[0].GetDescription(), "Schedule a prompt"; got != want {
		t.Errorf("after validate_only: description = %q, want %q", got, want)
	}
	if got := search(t, c, "select:CronList").GetNotFound(); !slices.Equal(got, []string{"CronList"}) {
		t.Errorf("after validate_only: select:CronList not_found = %v, want [CronList]", got)
	}
	// Registering for real afterwards still reports UPDATED: nothing was
	// stored by the validate_only call.
	if got, want := register(t, c, tool("CronCreate", "Something else entirely")).GetResults()[0].GetOutcome(), tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED; got != want {
		t.Errorf("register after validate_only: got %v, want %v", got, want)
	}
}

func TestRegisterToolsInvalidBatch(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name       string
		tools      []*tooldexv1.Tool
		wantFields []string
	}{
		{name: "empty batch", tools: nil, wantFields: []string{"tools"}},
		{
			name:       "one bad tool among good ones",
			tools:      []*tooldexv1.Tool{tool("Good", "ok"), tool("bad name", "has a space"), tool("AlsoGood", "ok")},
			wantFields: []string{"tools[1].name"},
		},
		{
			name: "every bad tool is reported",
			tools: []*tooldexv1.Tool{
				tool("Good", "ok"),
				tool("", "no name"),
				{Name: "BadSchema", InputSchema: mustStruct(t, `{"type":"string"}`)},
				{Name: "BadAlias", Aliases: []string{"ok_alias", "not ok"}},
				tool("Good", "duplicate"),
				tool(long(65), "too long a name"),
				tool("LongDescription", long(catalog.MaxDescription+1)),
				{Name: "LongHint", SearchHint: long(catalog.MaxSearchHint + 1)},
				{Name: "ManyAliases", Aliases: slices.Repeat([]string{"a"}, catalog.MaxAliases+1)},
			},
			wantFields: []string{
				"tools[1].name",
				"tools[2].input_schema",
				"tools[3].aliases[1]",
				"tools[4].name",
				"tools[5].name",
				"tools[6].description",
				"tools[7].search_hint",
				"tools[8].aliases",
			},
		},
		{
			name: "several schema errors at once",
			tools: []*tooldexv1.Tool{
				{Name: "NotObject", InputSchema: mustStruct(t, `{"type":"array"}`)},
				{Name: "Invalid", InputSchema: mustStruct(t, `{"type":"object","properties":{"a":{"minimum":"x"}}}`)},
				{Name: "Remote", InputSchema: mustStruct(t, `{"type":"object","properties":{"a":{"$ref":"https://example.com/schema.json"}}}`)},
			},
			wantFields: []string{"tools[0].input_schema", "tools[1].input_schema", "tools[2].input_schema"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestEnv(t)
			_, err := c.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: tt.tools})
			if got := badFields(t, err); !slices.Equal(got, tt.wantFields) {
				t.Errorf("violations: got %q, want %q", got, tt.wantFields)
			}
			if got := listNames(t, c, &tooldexv1.ListToolsRequest{}); len(got) != 0 {
				t.Errorf("after a rejected batch: got tools %v, want none", got)
			}
		})
	}
}

// A long error message is cut at a rune boundary: a message cut inside a
// multi-byte character would make the status unmarshalable and the
// BadRequest detail would be lost on the wire.
func TestRegisterToolsLongMessageKeepsDetails(t *testing.T) {
	for _, pad := range []string{"a", "aa"} {
		t.Run(pad, func(t *testing.T) {
			c := newTestEnv(t)
			name := pad + strings.Repeat("é", 600)
			_, err := c.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{tool(name, ""), tool(name, "")}})
			want := []string{"tools[0].name", "tools[1].name", "tools[1].name"}
			if got := badFields(t, err); !slices.Equal(got, want) {
				t.Errorf("violations: got %q, want %q", got, want)
			}
			if msg := status.Convert(err).Message(); !utf8.ValidString(msg) || strings.ContainsRune(msg, utf8.RuneError) {
				t.Errorf("message is not clean UTF-8: %q", msg)
			}
		})
	}
}

// nested returns an object schema with properties nested levels deep: it
// nests JSON objects 2*levels+1 deep.
func nested(levels int) string {
	return strings.Repeat(`{"properties":{"a":`, levels) + `{}` + strings.Repeat(`}}`, levels)
}

func TestRegisterToolsSchemas(t *testing.T) {
	tests := []struct {
		name   string
		schema string // "" for no schema
		wantOK bool
	}{
		{name: "no schema", schema: "", wantOK: true},
		{name: "empty object", schema: `{}`, wantOK: true},
		{name: "plain object", schema: `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, wantOK: true},
		{name: "type not object", schema: `{"type":"string"}`, wantOK: false},
		{name: "type list", schema: `{"type":["object","null"]}`, wantOK: false},
		{name: "invalid keyword value", schema: `{"type":"object","properties":{"a":{"minimum":"x"}}}`, wantOK: false},
		{name: "remote $ref", schema: `{"type":"object","properties":{"a":{"$ref":"https://example.com/schema.json"}}}`, wantOK: false},
		{name: "unknown $schema", schema: `{"$schema":"https://example.com/my-draft","type":"object"}`, wantOK: false},
		{name: "dangling local $ref", schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, wantOK: false},
		{
			name:   "draft-07 with $schema",
			schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":0}},"definitions":{"x":{"type":"string"}}}`,
			wantOK: true,
		},
		{
			name:   "recursive local $ref",
			schema: `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			wantOK: true,
		},
		{name: "self $ref", schema: `{"type":"object","properties":{"self":{"$ref":"#"}}}`, wantOK: true},
		// Each level is two JSON containers: {"properties": {"a": ...}}.
		{name: "nested at the depth limit", schema: nested(schema.MaxDepth/2 - 1), wantOK: true},
		{name: "nested beyond the depth limit", schema: nested(schema.MaxDepth / 2), wantOK: false},
		{name: "nested 200 levels", schema: nested(200), wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestEnv(t)
			tl := tool("Tool", "")
			if tt.schema != "" {
				tl.InputSchema = mustStruct(t, tt.schema)
			}
			_, err := c.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{tl}})
			if tt.wantOK {
				if err != nil {
					t.Fatalf("RegisterTools: got error %v, want success", err)
				}
				return
			}
			if got, want := badFields(t, err), []string{"tools[0].input_schema"}; !slices.Equal(got, want) {
				t.Errorf("violations: got %q, want %q", got, want)
			}
		})
	}
}

func TestPolicy(t *testing.T) {
	const (
		core     = tooldexv1.Loading_LOADING_CORE
		deferred = tooldexv1.Loading_LOADING_DEFERRED
		excluded = tooldexv1.Loading_LOADING_EXCLUDED
	)
	tests := []struct {
		name   string
		policy Policy
		tool   *tooldexv1.Tool
		want   tooldexv1.Loading
	}{
		{name: "default core list", tool: tool("Read", "Read a file"), want: core},
		{name: "not in the default core list", tool: tool("CronCreate", "Schedule"), want: deferred},
		{name: "always_load", tool: &tooldexv1.Tool{Name: "CronCreate", AlwaysLoad: true}, want: core},
		{name: "exclude by name", policy: Policy{Exclude: []string{"CronCreate"}}, tool: tool("CronCreate", "Schedule"), want: excluded},
		{name: "exclude by pattern", policy: Policy{Exclude: []string{"mcp__x__*"}}, tool: tool("mcp__x__delete_repo", "Delete"), want: excluded},
		{name: "pattern does not match another server", policy: Policy{Exclude: []string{"mcp__x__*"}}, tool: tool("mcp__y__delete_repo", "Delete"), want: deferred},
		{name: "exclude beats always_load", policy: Policy{Exclude: []string{"CronCreate"}}, tool: &tooldexv1.Tool{Name: "CronCreate", AlwaysLoad: true}, want: excluded},
		{name: "exclude beats include", policy: Policy{Exclude: []string{"Read"}, IncludeForce: []string{"Read"}}, tool: tool("Read", "Read a file"), want: excluded},
		{name: "include forces a core name deferred", policy: Policy{IncludeForce: []string{"Read"}}, tool: tool("Read", "Read a file"), want: deferred},
		{name: "include pattern beats always_load", policy: Policy{IncludeForce: []string{"Cron*"}}, tool: &tooldexv1.Tool{Name: "CronCreate", AlwaysLoad: true}, want: deferred},
		{name: "custom core list", policy: Policy{Core: []string{"CronCreate"}}, tool: tool("CronCreate", "Schedule"), want: core},
		{name: "custom core list replaces the default", policy: Policy{Core: []string{"CronCreate"}}, tool: tool("Read", "Read a file"), want: deferred},
		{name: "empty core list", policy: Policy{Core: []string{}}, tool: tool("Read", "Read a file"), want: deferred},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestEnvConfig(t, Config{Policy: tt.policy})
			name := tt.tool.GetName()
			// A second tool so that searches run over a non-empty catalog.
			resp := register(t, c, tt.tool, tool("Other", "Something unrelated"))
			if got := resp.GetResults()[0].GetLoading(); got != tt.want {
				t.Errorf("RegisterTools loading = %v, want %v", got, tt.want)
			}
			list, err := c.ListTools(t.Context(), &tooldexv1.ListToolsRequest{NamePrefix: name})
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			if len(list.GetTools()) != 1 || list.GetTools()[0].GetLoading() != tt.want {
				t.Errorf("ListTools(%q) = %v, want one tool with loading %v", name, list.GetTools(), tt.want)
			}

			sel := search(t, c, "select:"+name)
			var gotResults, gotLoaded, gotNotFound []string = resultNames(sel.GetResults()), sel.GetAlreadyLoaded(), sel.GetNotFound()
			var wantResults, wantLoaded, wantNotFound []string = []string{}, nil, nil
			switch tt.want {
			case core:
				wantLoaded = []string{name}
			case deferred:
				wantResults = []string{name}
			case excluded:
				wantNotFound = []string{name}
			}
			if !slices.Equal(gotResults, wantResults) || !slices.Equal(gotLoaded, wantLoaded) || !slices.Equal(gotNotFound, wantNotFound) {
				t.Errorf("select:%s: got results %v, already_loaded %v, not_found %v; want %v, %v, %v",
					name, gotResults, gotLoaded, gotNotFound, wantResults, wantLoaded, wantNotFound)
			}

			// Keyword, name and prefix searches never return an excluded or
			// core tool among the results.
			queries := []string{name}
			if d := tt.tool.GetDescription(); d != "" {
				queries = append(queries, d)
			}
			if strings.HasPrefix(name, "mcp__x__") {
				queries = append(queries, "mcp__x")
			}
			for _, q := range queries {
				r := search(t, c, q)
				found := slices.Contains(resultNames(r.GetResults()), name)
				if want := tt.want == deferred; found != want {
					t.Errorf("Search(%q): tool %s in results = %v, want %v (results %v)", q, name, found, want, resultNames(r.GetResults()))
				}
			}
		})
	}
}

func TestListTools(t *testing.T) {
	c := newTestEnv(t)
	register(t, c,
		tool("mcp__github__list_pulls", "List pull requests"),
		tool("Read", "Read a file"),
		tool("CronCreate", "Schedule a prompt"),
		tool("mcp__github__create_issue", "Create an issue"),
		tool("Bash", "Run a shell command"),
		tool("mcp__slack__post", "Post a message"),
	)
	tests := []struct {
		name string
		req  *tooldexv1.ListToolsRequest
		want []string
	}{
		{name: "all, sorted", req: &tooldexv1.ListToolsRequest{}, want: []string{"Bash", "CronCreate", "Read", "mcp__github__create_issue", "mcp__github__list_pulls", "mcp__slack__post"}},
		{name: "prefix", req: &tooldexv1.ListToolsRequest{NamePrefix: "mcp__github__"}, want: []string{"mcp__github__create_issue", "mcp__github__list_pulls"}},
		{name: "prefix is case-sensitive", req: &tooldexv1.ListToolsRequest{NamePrefix: "MCP__"}, want: []string{}},
		{name: "core", req: &tooldexv1.ListToolsRequest{Loading: tooldexv1.Loading_LOADING_CORE}, want: []string{"Bash", "Read"}},
		{name: "deferred", req: &tooldexv1.ListToolsRequest{Loading: tooldexv1.Loading_LOADING_DEFERRED}, want: []string{"CronCreate", "mcp__github__create_issue", "mcp__github__list_pulls", "mcp__slack__post"}},
		{name: "excluded", req: &tooldexv1.ListToolsRequest{Loading: tooldexv1.Loading_LOADING_EXCLUDED}, want: []string{}},
		{name: "prefix and loading", req: &tooldexv1.ListToolsRequest{NamePrefix: "mcp__", Loading: tooldexv1.Loading_LOADING_CORE}, want: []string{}},
		{name: "no match", req: &tooldexv1.ListToolsRequest{NamePrefix: "Nope"}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := listNames(t, c, tt.req); !slices.Equal(got, tt.want) {
				t.Errorf("ListTools(%v): got %v, want %v", tt.req, got, tt.want)
			}
		})
	}

	list, err := c.ListTools(t.Context(), &tooldexv1.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	for _, tl := range list.GetTools() {
		if tl.GetLoading() == tooldexv1.Loading_LOADING_UNSPECIFIED {
			t.Errorf("ListTools: %s has no loading", tl.GetName())
		}
		if got, want := tl.GetSource().GetOrigin(), tooldexv1.Origin_ORIGIN_FRONTEND; got != want {
			t.Errorf("ListTools: %s origin = %v, want %v", tl.GetName(), got, want)
		}
	}
}

func TestUnregisterTools(t *testing.T) {
	c := newTestEnv(t)
	register(t, c,
		tool("CronCreate", "Schedule a recurring prompt with a cron expression"),
		tool("CronDelete", "Delete a scheduled cron job"),
		tool("Read", "Read a file"),
	)
	resp, err := c.UnregisterTools(t.Context(), &tooldexv1.UnregisterToolsRequest{Names: []string{"CronCreate", "Nope", "Read"}})
	if err != nil {
		t.Fatalf("UnregisterTools: %v", err)
	}
	if got, want := resp.GetRemoved(), []string{"CronCreate", "Read"}; !slices.Equal(got, want) {
		t.Errorf("removed: got %v, want %v", got, want)
	}
	if got, want := resp.GetNotFound(), []string{"Nope"}; !slices.Equal(got, want) {
		t.Errorf("not_found: got %v, want %v", got, want)
	}
	if got, want := listNames(t, c, &tooldexv1.ListToolsRequest{}), []string{"CronDelete"}; !slices.Equal(got, want) {
		t.Errorf("ListTools after unregister: got %v, want %v", got, want)
	}

	tests := []struct {
		query       string
		wantResults []string
	}{
		{query: "select:CronCreate", wantResults: []string{}},
		// BM25F's idf is positive even for a term every tool has, so
		// the remaining cron tool is a fair answer; the removed one is not.
		{query: "CronCreate", wantResults: []string{"CronDelete"}},
		{query: "recurring prompt", wantResults: []string{}},
		{query: "cron", wantResults: []string{"CronDelete"}},
		{query: "Read", wantResults: []string{}},
	}
	for _, tt := range tests {
		r := search(t, c, tt.query)
		if got := resultNames(r.GetResults()); !slices.Equal(got, tt.wantResults) {
			t.Errorf("Search(%q) after unregister: got %v, want %v", tt.query, got, tt.wantResults)
		}
		if len(r.GetAlreadyLoaded()) != 0 {
			t.Errorf("Search(%q) after unregister: already_loaded %v, want none", tt.query, r.GetAlreadyLoaded())
		}
	}

	// Unregistering again reports everything as not found.
	resp, err = c.UnregisterTools(t.Context(), &tooldexv1.UnregisterToolsRequest{Names: []string{"CronCreate"}})
	if err != nil {
		t.Fatalf("UnregisterTools: %v", err)
	}
	if len(resp.GetRemoved()) != 0 || !slices.Equal(resp.GetNotFound(), []string{"CronCreate"}) {
		t.Errorf("second UnregisterTools: got removed %v, not_found %v; want none, [CronCreate]", resp.GetRemoved(), resp.GetNotFound())
	}

	_, err = c.UnregisterTools(t.Context(), &tooldexv1.UnregisterToolsRequest{Names: make([]string, catalog.MaxBatch+1)})
	if got, want := badFields(t, err), []string{"names"}; !slices.Equal(got, want) {
		t.Errorf("oversized UnregisterTools: violations %q, want %q", got, want)
	}
}

// searchCatalog is a small catalog for Search and Discover tests.
func searchCatalog(t *testing.T) []*tooldexv1.Tool {
	return []*tooldexv1.Tool{
		{
			Name:        "CronCreate",
			Description: "Schedule a recurring prompt with a cron expression.",
			SearchHint:  "schedule cron job",
			InputSchema: mustStruct(t, `{"type":"object","properties":{"cron":{"type":"string"},"prompt":{"type":"string"}},"required":["cron"]}`),
		},
		{
			Name:        "CronDelete",
			Description: "Delete a scheduled cron job.",
			InputSchema: mustStruct(t, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
		},
		{
			Name:        "mcp__github__create_issue",
			Description: "Create an issue in a GitHub repository.",
			InputSchema: mustStruct(t, `{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string"}}}`),
		},
		{
			Name:        "mcp__github__list_pulls",
			Description: "List pull requests of a GitHub repository.",
			InputSchema: mustStruct(t, `{"type":"object","properties":{"repo":{"type":"string"}}}`),
		},
		{
			Name:        "mcp__slack__post_message",
			Description: "Post a message to a Slack channel.",
			InputSchema: mustStruct(t, `{"type":"object","properties":{"channel":{"type":"string"},"text":{"type":"string"}}}`),
		},
		{Name: "NotebookRun", Description: "Run every cell of a Jupyter notebook."},
		{Name: "Read", Description: "Read a file from the local filesystem."},
	}
}

func checkScores(t *testing.T, what string, rs []*tooldexv1.SearchResult) {
	t.Helper()
	for _, r := range rs {
		for _, f := range []struct {
			name string
			v    float64
		}{{"score", r.GetScore()}, {"keyword_score", r.GetKeywordScore()}, {"tfidf_score", r.GetTfidfScore()}} {
			if f.v < 0 || f.v > 1 {
				t.Errorf("%s: %s %s = %v, want within [0, 1]", what, r.GetTool().GetName(), f.name, f.v)
			}
		}
		if r.GetKeywordPoints() < 0 {
			t.Errorf("%s: %s keyword_points = %d, want >= 0", what, r.GetTool().GetName(), r.GetKeywordPoints())
		}
	}
}

func TestSearch(t *testing.T) {
	c := newTestEnv(t)
	catalog := searchCatalog(t)
	register(t, c, catalog...)
	byName := make(map[string]*tooldexv1.Tool)
	for _, tl := range catalog {
		byName[tl.GetName()] = tl
	}

	tests := []struct {
		query       string
		wantMode    tooldexv1.QueryMode
		wantResults []string // nil: any, checked only for non-emptiness by wantSome
		wantSome    bool
		wantLoaded  []string
		wantNotFnd  []string
		wantText    []string
		wantNoText  []string
		wantMatch   tooldexv1.MatchKind
	}{
		{
			query:       "select:CronCreate,mcp__slack__post_message",
			wantMode:    tooldexv1.QueryMode_QUERY_MODE_SELECT,
			wantResults: []string{"CronCreate", "mcp__slack__post_message"},
			wantText:    []string{"Schema: {", `"cron"`, "ExecuteTool"},
			wantNoText:  []string{"Params:"},
			wantMatch:   tooldexv1.MatchKind_MATCH_KIND_SELECT,
		},
		{
			query:       "select:CronCreate,Nope,Read",
			wantMode:    tooldexv1.QueryMode_QUERY_MODE_SELECT,
			wantResults: []string{"CronCreate"},
			wantLoaded:  []string{"Read"},
			wantNotFnd:  []string{"Nope"},
			wantText:    []string{"Schema: {", "Not found: Nope", "Already loaded"},
		},
		{
			query:       "xyzzy plugh",
			wantMode:    tooldexv1.QueryMode_QUERY_MODE_KEYWORD,
			wantResults: []string{},
			wantText:    []string{"No matching deferred tools found", "discover:"},
		},
		{
			query:       "Read",
			wantMode:    tooldexv1.QueryMode_QUERY_MODE_KEYWORD,
			wantResults: []string{},
			wantLoaded:  []string{"Read"},
			wantText:    []string{"Already loaded", "Read"},
			wantNoText:  []string{"No matching deferred tools found"},
		},
		{
			query:       "CronDelete",
			wantMode:    tooldexv1.QueryMode_QUERY_MODE_KEYWORD,
			wantSome:    true,
			wantText:    []string{"CronDelete", "Params: id (string, required)", "select:"},
			wantNoText:  []string{"Schema:"},
			wantMatch:   tooldexv1.MatchKind_MATCH_KIND_EXACT,
			wantResults: nil,
		},
		{
			query:    "cron schedule",
			wantMode: tooldexv1.QueryMode_QUERY_MODE_KEYWORD,
			wantSome: true,
			wantText: []string{"CronCreate", "Params: cron (string, required), prompt (string)"},
		},
		{
			query:       "mcp__github",
			wantMode:    tooldexv1.QueryMode_QUERY_MODE_PREFIX,
			wantResults: []string{"mcp__github__create_issue", "mcp__github__list_pulls"},
			wantMatch:   tooldexv1.MatchKind_MATCH_KIND_PREFIX,
		},
		{
			query:    "discover:post a note to a chat channel",
			wantMode: tooldexv1.QueryMode_QUERY_MODE_DISCOVER,
			wantSome: true,
			wantText: []string{"mcp__slack__post_message"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := search(t, c, tt.query)
			if got := r.GetMode(); got != tt.wantMode {
				t.Errorf("mode: got %v, want %v", got, tt.wantMode)
			}
			got := resultNames(r.GetResults())
			if tt.wantResults != nil && !slices.Equal(got, tt.wantResults) {
				t.Errorf("results: got %v, want %v", got, tt.wantResults)
			}
			if tt.wantSome && len(got) == 0 {
				t.Errorf("results: got none, want some")
			}
			if !slices.Equal(r.GetAlreadyLoaded(), tt.wantLoaded) {
				t.Errorf("already_loaded: got %v, want %v", r.GetAlreadyLoaded(), tt.wantLoaded)
			}
			if !slices.Equal(r.GetNotFound(), tt.wantNotFnd) {
				t.Errorf("not_found: got %v, want %v", r.GetNotFound(), tt.wantNotFnd)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(r.GetText(), s) {
					t.Errorf("text does not contain %q:\n%s", s, r.GetText())
				}
			}
			for _, s := range tt.wantNoText {
				if strings.Contains(r.GetText(), s) {
					t.Errorf("text contains %q:\n%s", s, r.GetText())
				}
			}
			if got, want := r.GetTotalDeferredTools(), int32(6); got != want {
				t.Errorf("total_deferred_tools: got %d, want %d", got, want)
			}
			if tt.wantMatch != tooldexv1.MatchKind_MATCH_KIND_UNSPECIFIED && len(r.GetResults()) > 0 {
				if got := r.GetResults()[0].GetMatch(); got != tt.wantMatch {
					t.Errorf("first result match: got %v, want %v", got, tt.wantMatch)
				}
			}
			checkScores(t, tt.query, r.GetResults())
			for _, res := range r.GetResults() {
				reg := byName[res.GetTool().GetName()]
				if !proto.Equal(res.GetTool().GetInputSchema(), reg.GetInputSchema()) {
					t.Errorf("%s: input_schema %v, want %v", reg.GetName(), res.GetTool().GetInputSchema(), reg.GetInputSchema())
				}
				if res.GetTool().GetDescription() != reg.GetDescription() {
					t.Errorf("%s: description %q, want %q", reg.GetName(), res.GetTool().GetDescription(), reg.GetDescription())
				}
				if got, want := res.GetTool().GetLoading(), tooldexv1.Loading_LOADING_DEFERRED; got != want {
					t.Errorf("%s: loading %v, want %v", reg.GetName(), got, want)
				}
			}
		})
	}
}

func TestSearchMaxResults(t *testing.T) {
	c := newTestEnv(t)
	var tools []*tooldexv1.Tool
	for i := range 120 {
		tools = append(tools, tool(fmt.Sprintf("FileTool%03d", i), "Manage a file on disk."))
	}
	register(t, c, tools...)
	tests := []struct {
		max       int32
		query     string
		wantCount int
	}{
		{max: 0, query: "file disk", wantCount: 5},
		{max: 1, query: "file disk", wantCount: 1},
		{max: 7, query: "file disk", wantCount: 7},
		{max: 1000, query: "file disk", wantCount: 100},
		{max: 0, query: "mcp__none", wantCount: 0},
		// select: returns every named tool regardless of max_results.
		{max: 1, query: "select:FileTool000,FileTool001,FileTool002", wantCount: 3},
	}
	for _, tt := range tests {
		r, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: tt.query, MaxResults: tt.max})
		if err != nil {
			t.Fatalf("Search(%q, %d): %v", tt.query, tt.max, err)
		}
		if got := len(r.GetResults()); got != tt.wantCount {
			t.Errorf("Search(%q, max_results %d): got %d results, want %d", tt.query, tt.max, got, tt.wantCount)
		}
		checkScores(t, tt.query, r.GetResults())
	}
}

func TestSearchAndDiscoverInvalid(t *testing.T) {
	c := newTestEnv(t)
	register(t, c, searchCatalog(t)...)
	tests := []struct {
		name      string
		query     string
		max       int32
		wantField string
	}{
		{name: "negative max_results", query: "cron", max: -1, wantField: "max_results"},
		{name: "empty query", query: "", wantField: "query"},
		{name: "blank query", query: " \t\n", wantField: "query"},
		{name: "empty select", query: "select: ,", wantField: "query"},
		{name: "empty discover", query: "discover:  ", wantField: "query"},
		{name: "too long", query: strings.Repeat("a ", 2049), wantField: "query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: tt.query, MaxResults: tt.max})
			if got := badFields(t, err); !slices.Equal(got, []string{tt.wantField}) {
				t.Errorf("Search violations: got %q, want [%q]", got, tt.wantField)
			}
			if tt.name == "empty select" || tt.name == "empty discover" {
				return // Discover runs its text as a task; these are Search syntax.
			}
			_, err = c.Discover(t.Context(), &tooldexv1.DiscoverRequest{Query: tt.query, MaxResults: tt.max})
			if got := badFields(t, err); !slices.Equal(got, []string{tt.wantField}) {
				t.Errorf("Discover violations: got %q, want [%q]", got, tt.wantField)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	c := newTestEnv(t)
	register(t, c, searchCatalog(t)...)
	tests := []struct {
		query    string
		max      int32
		wantSome []string // must be among the results
		wantText []string
	}{
		{query: "schedule a recurring job with cron", wantSome: []string{"CronCreate"}, wantText: []string{"Schema: {", `"cron"`, "ExecuteTool"}},
		{query: "open an issue on a GitHub repository", wantSome: []string{"mcp__github__create_issue"}, wantText: []string{"Schema: {"}},
		// A name is ranked like any other text: no exact-match shortcut.
		{query: "CronDelete", wantText: []string{}},
		{query: "xyzzy plugh", wantText: []string{"No deferred tools match"}},
		{query: "cron job", max: 1, wantText: []string{"Found 1 deferred tool "}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r, err := c.Discover(t.Context(), &tooldexv1.DiscoverRequest{Query: tt.query, MaxResults: tt.max})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			got := resultNames(r.GetResults())
			for _, n := range tt.wantSome {
				if !slices.Contains(got, n) {
					t.Errorf("results %v do not contain %s", got, n)
				}
			}
			if tt.max > 0 && len(got) > int(tt.max) {
				t.Errorf("got %d results, want at most %d", len(got), tt.max)
			}
			for _, res := range r.GetResults() {
				if res.GetKeywordScore() != 0 {
					t.Errorf("%s: keyword_score = %v, want 0", res.GetTool().GetName(), res.GetKeywordScore())
				}
				if res.GetMatch() != tooldexv1.MatchKind_MATCH_KIND_RANKED {
					t.Errorf("%s: match = %v, want %v", res.GetTool().GetName(), res.GetMatch(), tooldexv1.MatchKind_MATCH_KIND_RANKED)
				}
				if res.GetTool().GetLoading() != tooldexv1.Loading_LOADING_DEFERRED {
					t.Errorf("%s: loading = %v, want deferred", res.GetTool().GetName(), res.GetTool().GetLoading())
				}
			}
			checkScores(t, tt.query, r.GetResults())
			for _, s := range tt.wantText {
				if !strings.Contains(r.GetText(), s) {
					t.Errorf("text does not contain %q:\n%s", s, r.GetText())
				}
			}
			if got, want := r.GetTotalDeferredTools(), int32(6); got != want {
				t.Errorf("total_deferred_tools: got %d, want %d", got, want)
			}
		})
	}
}

func TestUnaryInterceptorRecoversPanic(t *testing.T) {
	intercept := UnaryInterceptor(zaptest.NewLogger(t))
	tests := []struct {
		name     string
		method   string
		handler  grpc.UnaryHandler
		wantCode codes.Code
		wantResp any
	}{
		{
			name:     "panic with a string",
			method:   "/tooldex.v1.DiscoveryService/Search",
			handler:  func(context.Context, any) (any, error) { panic("boom") },
			wantCode: codes.Internal,
		},
		{
			name:   "panic with an error",
			method: "/tooldex.v1.DiscoveryService/Search",
			handler: func(context.Context, any) (any, error) {
				var m map[string]int
				m["x"]++ // nil map write: a runtime panic
				return nil, nil
			},
			wantCode: codes.Internal,
		},
		{
			name:     "health check panic is also recovered",
			method:   "/grpc.health.v1.Health/Check",
			handler:  func(context.Context, any) (any, error) { panic("boom") },
			wantCode: codes.Internal,
		},
		{
			name:     "a call after a panic works",
			method:   "/tooldex.v1.DiscoveryService/ListTools",
			handler:  func(context.Context, any) (any, error) { return "ok", nil },
			wantCode: codes.OK,
			wantResp: "ok",
		},
		{
			name:     "handler errors pass through",
			method:   "/tooldex.v1.DiscoveryService/ListTools",
			handler:  func(context.Context, any) (any, error) { return nil, status.Error(codes.NotFound, "nope") },
			wantCode: codes.NotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := intercept(t.Context(), "req", &grpc.UnaryServerInfo{FullMethod: tt.method}, tt.handler)
			if got := status.Code(err); got != tt.wantCode {
				t.Errorf("code: got %v, want %v (err %v)", got, tt.wantCode, err)
			}
			if resp != tt.wantResp {
				t.Errorf("resp: got %v, want %v", resp, tt.wantResp)
			}
			if tt.wantCode == codes.Internal {
				if msg := status.Convert(err).Message(); strings.Contains(msg, "boom") || strings.Contains(msg, "nil map") {
					t.Errorf("message leaks the panic: %q", msg)
				}
			}
		})
	}
}

func TestConcurrentRegisterUnregisterSearch(t *testing.T) {
	c := newTestEnv(t)
	register(t, c, searchCatalog(t)...)
	const (
		workers = 8
		rounds  = 30
	)
	schema := mustStruct(t, `{"type":"object","properties":{"path":{"type":"string"}}}`)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := t.Context()
			for i := range rounds {
				own := fmt.Sprintf("Worker%dTool%d", w, i%5)
				shared := fmt.Sprintf("SharedTool%d", i%3)
				_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{
					{Name: own, Description: fmt.Sprintf("Worker %d tool for files round %d", w, i),
						InputSchema: schema},
					{Name: shared, Description: fmt.Sprintf("Shared file tool written by worker %d", w)},
				}})
				if err != nil {
					t.Errorf("worker %d: RegisterTools: %v", w, err)
					return
				}
				for _, q := range []string{"file tool", "select:" + own + "," + shared, "discover:manage files", "Worker", own} {
					r, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: q})
					if err != nil {
						t.Errorf("worker %d: Search(%q): %v", w, q, err)
						return
					}
					for _, res := range r.GetResults() {
						if res.GetTool() == nil || res.GetTool().GetName() == "" {
							t.Errorf("worker %d: Search(%q): result without a tool", w, q)
						}
					}
				}
				if _, err := c.Discover(ctx, &tooldexv1.DiscoverRequest{Query: "shared file"}); err != nil {
					t.Errorf("worker %d: Discover: %v", w, err)
					return
				}
				if i%2 == 1 {
					if _, err := c.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: []string{own, shared}}); err != nil {
						t.Errorf("worker %d: UnregisterTools: %v", w, err)
						return
					}
				}
				if _, err := c.ListTools(ctx, &tooldexv1.ListToolsRequest{NamePrefix: "Worker"}); err != nil {
					t.Errorf("worker %d: ListTools: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()

	// Every worker's last round (i = rounds-1, odd) unregistered its tools;
	// the catalog still holds what was registered before and is
	// consistent between ListTools and select:.
	list, err := c.ListTools(t.Context(), &tooldexv1.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	for _, tl := range list.GetTools() {
		r := search(t, c, "select:"+tl.GetName())
		switch tl.GetLoading() {
		case tooldexv1.Loading_LOADING_DEFERRED:
			if got := resultNames(r.GetResults()); !slices.Equal(got, []string{tl.GetName()}) {
				t.Errorf("select:%s after concurrent updates: got %v", tl.GetName(), got)
			}
		case tooldexv1.Loading_LOADING_CORE:
			if got := r.GetAlreadyLoaded(); !slices.Equal(got, []string{tl.GetName()}) {
				t.Errorf("select:%s after concurrent updates: already_loaded %v", tl.GetName(), got)
			}
		}
	}
}
