package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// searchJSON is the part of a Search response printed as protojson (by the
// client's --json and by grpcurl) that these tests read.
type searchJSON struct {
	Results []struct {
		Tool struct {
			Name            string          `json:"name"`
			InputSchema     json.RawMessage `json:"inputSchema"`
			InputSchemaJSON string          `json:"inputSchemaJson"`
		} `json:"tool"`
	} `json:"results"`
	Text string `json:"text"`
}

func decodeSearchJSON(t *testing.T, what, out string) searchJSON {
	t.Helper()
	var r searchJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", what, err, out)
	}
	if len(r.Results) == 0 {
		t.Fatalf("%s: no results:\n%s", what, out)
	}
	return r
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

// TestSchemaViewJSON runs the server on loopback and checks the JSON
// schema view (SearchRequest.schema_view) through the tooldex client,
// grpcurl (reflection) and a Go client: each tool's input_schema_json is
// compact JSON text holding the same value as its input_schema in the
// default view, NONE carries neither, and an unknown view is
// INVALID_ARGUMENT naming schema_view.
func TestSchemaViewJSON(t *testing.T) {
	s := startServer(t, "--demo-catalog", "--demo-host=false")
	const sel = "select:mcp__slack__send_message,mcp__github__create_issue,CronCreate,mcp__postgres__query,mcp__serena__find_symbol"

	// The tooldex client.
	client := func(args ...string) searchJSON {
		t.Helper()
		out, err := s.client(t, nil, args...)
		if err != nil {
			t.Fatalf("tooldex %v: %v\n%s", args, err, out)
		}
		return decodeSearchJSON(t, strings.Join(args, " "), out)
	}
	for _, q := range []string{sel, "slack send message"} {
		st := client("search", "--json", q)
		js := client("search", "--json", "--schema", "json", q)
		none := client("search", "--json", "--schema", "none", q)
		if len(js.Results) != len(st.Results) || len(none.Results) != len(st.Results) || js.Text != st.Text || none.Text != st.Text {
			t.Fatalf("%q: views differ in results or text", q)
		}
		withSchema := 0
		for i, r := range js.Results {
			want := st.Results[i].Tool
			if r.Tool.Name != want.Name || r.Tool.InputSchema != nil || want.InputSchemaJSON != "" {
				t.Fatalf("%q: result %d: JSON view %+v, Struct view %+v", q, i, r.Tool, want)
			}
			if len(want.InputSchema) == 0 {
				if r.Tool.InputSchemaJSON != "" {
					t.Errorf("%s: input_schema_json %q for a tool without a schema", r.Tool.Name, r.Tool.InputSchemaJSON)
				}
				continue
			}
			withSchema++
			if strings.ContainsAny(r.Tool.InputSchemaJSON, "\n\t") || !sameJSON(t, r.Tool.InputSchemaJSON, string(want.InputSchema)) {
				t.Errorf("%s: input_schema_json %s, want compact JSON equal to %s", r.Tool.Name, r.Tool.InputSchemaJSON, want.InputSchema)
			}
			if n := none.Results[i].Tool; n.Name != want.Name || n.InputSchema != nil || n.InputSchemaJSON != "" {
				t.Errorf("%s: NONE view carries a schema: %+v", n.Name, n)
			}
		}
		if withSchema < 3 {
			t.Errorf("%q: only %d results with schemas", q, withSchema)
		}
	}
	if out, err := s.client(t, nil, "search", "--schema", "xml", "slack"); err == nil || !strings.Contains(out, "--schema") {
		t.Errorf("tooldex search --schema xml: err %v, output %q; want a usage error", err, out)
	}

	// grpcurl, through reflection.
	grpcurl := filepath.Join(binaries(t), "grpcurl")
	run := func(args ...string) (string, error) {
		out, err := exec.Command(grpcurl, append([]string{"-plaintext"}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := run(s.addr, "describe", "tooldex.v1.SearchRequest"); err != nil || !strings.Contains(out, "SchemaView schema_view") {
		t.Errorf("grpcurl describe SearchRequest: %v\n%s", err, out)
	}
	if out, err := run(s.addr, "describe", "tooldex.v1.Tool"); err != nil || !strings.Contains(out, "input_schema_json") {
		t.Errorf("grpcurl describe Tool: %v\n%s", err, out)
	}
	out, err := run("-d", `{"query": "`+sel+`", "schema_view": "SCHEMA_VIEW_JSON"}`, s.addr, "tooldex.v1.DiscoveryService/Search")
	if err != nil {
		t.Fatalf("grpcurl Search JSON view: %v\n%s", err, out)
	}
	gj := decodeSearchJSON(t, "grpcurl JSON view", out)
	st := client("search", "--json", sel)
	for i, r := range gj.Results {
		if r.Tool.InputSchema != nil || !sameJSON(t, r.Tool.InputSchemaJSON, string(st.Results[i].Tool.InputSchema)) {
			t.Errorf("grpcurl: %s: input_schema_json %q, want %s", r.Tool.Name, r.Tool.InputSchemaJSON, st.Results[i].Tool.InputSchema)
		}
	}
	out, err = run("-d", `{"query": "slack", "schema_view": 9}`, s.addr, "tooldex.v1.DiscoveryService/Search")
	if err == nil || !strings.Contains(out, "InvalidArgument") || !strings.Contains(out, `"field": "schema_view"`) {
		t.Errorf("grpcurl Search with schema_view 9: err %v, want InvalidArgument on schema_view:\n%s", err, out)
	}

	// A Go client: Search, Discover and Prefetch.
	c := s.conn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	check := func(what string, got, want []*tooldexv1.SearchResult) {
		t.Helper()
		if len(got) == 0 || len(got) != len(want) {
			t.Fatalf("%s: %d results in the JSON view, %d in the Struct view", what, len(got), len(want))
		}
		for i, r := range got {
			w := want[i].GetTool()
			if r.GetTool().GetName() != w.GetName() || r.GetTool().GetInputSchema() != nil {
				t.Fatalf("%s: result %d: %v, want %s without input_schema", what, i, r.GetTool(), w.GetName())
			}
			if w.GetInputSchema() == nil {
				continue
			}
			pj, err := protojson.Marshal(w.GetInputSchema())
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, r.GetTool().GetInputSchemaJson(), string(pj)) {
				t.Errorf("%s: %s: input_schema_json %s, want %s", what, w.GetName(), r.GetTool().GetInputSchemaJson(), pj)
			}
		}
	}
	sv, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: "create github issue"})
	if err != nil {
		t.Fatal(err)
	}
	jv, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: "create github issue", SchemaView: tooldexv1.SchemaView_SCHEMA_VIEW_JSON})
	if err != nil {
		t.Fatal(err)
	}
	check("Search", jv.GetResults(), sv.GetResults())
	ds, err := c.Discover(ctx, &tooldexv1.DiscoverRequest{Query: "take a screenshot of a web page"})
	if err != nil {
		t.Fatal(err)
	}
	dj, err := c.Discover(ctx, &tooldexv1.DiscoverRequest{Query: "take a screenshot of a web page", SchemaView: tooldexv1.SchemaView_SCHEMA_VIEW_JSON})
	if err != nil {
		t.Fatal(err)
	}
	check("Discover", dj.GetResults(), ds.GetResults())
	ps, err := c.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: "post the release notes to the slack channel"})
	if err != nil {
		t.Fatal(err)
	}
	pj, err := c.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: "post the release notes to the slack channel", SchemaView: tooldexv1.SchemaView_SCHEMA_VIEW_JSON})
	if err != nil {
		t.Fatal(err)
	}
	check("Prefetch", pj.GetResults(), ps.GetResults())
	for _, call := range []func() error{
		func() error {
			_, err := c.Discover(ctx, &tooldexv1.DiscoverRequest{Query: "x", SchemaView: 42})
			return err
		},
		func() error {
			_, err := c.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: "x y z", SchemaView: -1})
			return err
		},
	} {
		if code := status.Code(call()); code != codes.InvalidArgument {
			t.Errorf("unknown schema_view: code %v, want InvalidArgument", code)
		}
	}
}
