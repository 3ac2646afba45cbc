package toolfile

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// schema builds the Struct a JSON object decodes to.
func schema(t *testing.T, js string) *structpb.Struct {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("bad test schema %s: %v", js, err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatalf("bad test schema %s: %v", js, err)
	}
	return s
}

func dump(tools []*tooldexv1.Tool) string {
	var b strings.Builder
	for _, t := range tools {
		b.WriteString("\n\t")
		b.WriteString(protojson.Format(t))
	}
	return b.String()
}

func equalTools(a, b []*tooldexv1.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestParseFormats(t *testing.T) {
	const weather = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city"]}`
	weatherTool := func() *tooldexv1.Tool {
		return &tooldexv1.Tool{Name: "get_weather", Description: "Get the weather.", InputSchema: schema(t, weather)}
	}

	tests := []struct {
		name string
		file string
		data string
		want func() []*tooldexv1.Tool
	}{
		{
			name: "MCP tools/list result",
			file: "tools.json",
			data: `{"tools":[{"name":"get_weather","title":"Weather","description":"Get the weather.","inputSchema":` + weather + `,
				"annotations":{"title":"ignored: top-level title wins","readOnlyHint":true,"idempotentHint":true,"openWorldHint":true,"destructiveHint":false},
				"_meta":{"anthropic/alwaysLoad":true,"anthropic/searchHint":"forecast rain"},"outputSchema":{"type":"object"}},
				{"name":"delete_file","description":"Delete.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true},"_meta":{"other":1}}],
				"nextCursor":"abc"}`,
			want: func() []*tooldexv1.Tool {
				w := weatherTool()
				w.SearchHint = "forecast rain"
				w.AlwaysLoad = true
				w.Annotations = &tooldexv1.ToolAnnotations{Title: "Weather", ReadOnly: true, Idempotent: true, OpenWorld: true}
				return []*tooldexv1.Tool{w, {
					Name: "delete_file", Description: "Delete.", InputSchema: schema(t, `{"type":"object"}`),
					Annotations: &tooldexv1.ToolAnnotations{Destructive: true},
				}}
			},
		},
		{
			name: "MCP JSON-RPC response",
			file: "list.json",
			data: `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"get_weather","description":"Get the weather.","inputSchema":` + weather + `,"_meta":{"anthropic/alwaysLoad":false}}]}}`,
			want: func() []*tooldexv1.Tool { return []*tooldexv1.Tool{weatherTool()} },
		},
		{
			name: "OpenAI Chat Completions",
			file: "openai.json",
			data: `[{"type":"function","function":{"name":"get_weather","description":"Get the weather.","parameters":` + weather + `,"strict":true}},
				{"type":"function","function":{"name":"no_params"}}]`,
			want: func() []*tooldexv1.Tool {
				return []*tooldexv1.Tool{weatherTool(), {Name: "no_params"}}
			},
		},
		{
			name: "OpenAI Chat Completions wrapped",
			file: "openai.json",
			data: `{"tools":[{"type":"function","function":{"name":"get_weather","description":"Get the weather.","parameters":` + weather + `}}]}`,
			want: func() []*tooldexv1.Tool { return []*tooldexv1.Tool{weatherTool()} },
		},
		{
			name: "OpenAI Responses",
			file: "responses.json",
			data: `[{"type":"function","name":"get_weather","description":"Get the weather.","parameters":` + weather + `,"strict":false}]`,
			want: func() []*tooldexv1.Tool { return []*tooldexv1.Tool{weatherTool()} },
		},
		{
			name: "OpenAI Responses wrapped",
			file: "responses.json",
			data: `{"tools":[{"type":"function","name":"get_weather","description":"Get the weather.","parameters":` + weather + `}]}`,
			want: func() []*tooldexv1.Tool { return []*tooldexv1.Tool{weatherTool()} },
		},
		{
			name: "Anthropic",
			file: "anthropic.json",
			data: `[{"name":"get_weather","description":"Get the weather.","input_schema":` + weather + `,"cache_control":{"type":"ephemeral"},"defer_loading":false},
				{"type":"custom","name":"b","input_schema":{"type":"object"},"defer_loading":true}]`,
			want: func() []*tooldexv1.Tool {
				return []*tooldexv1.Tool{weatherTool(), {Name: "b", InputSchema: schema(t, `{"type":"object"}`)}}
			},
		},
		{
			name: "Anthropic wrapped",
			file: "anthropic.json",
			data: `{"tools":[{"name":"get_weather","description":"Get the weather.","input_schema":` + weather + `}]}`,
			want: func() []*tooldexv1.Tool { return []*tooldexv1.Tool{weatherTool()} },
		},
		{
			name: "own single object, snake_case",
			file: "tool.json",
			data: `{"name":"get_weather","description":"Get the weather.","search_hint":"forecast","input_schema":` + weather + `,
				"always_load":true,"annotations":{"title":"W","read_only":true,"idempotent":true,"destructive":true,"open_world":true},
				"source":{"origin":"ORIGIN_CATALOG","id":"cat.json"},"aliases":["weather","wx"],"core":false,"short_description":"x"}`,
			want: func() []*tooldexv1.Tool {
				w := weatherTool()
				w.SearchHint = "forecast"
				w.AlwaysLoad = true
				w.Annotations = &tooldexv1.ToolAnnotations{Title: "W", ReadOnly: true, Idempotent: true, Destructive: true, OpenWorld: true}
				w.Source = &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_CATALOG, Id: "cat.json"}
				w.Aliases = []string{"weather", "wx"}
				return []*tooldexv1.Tool{w}
			},
		},
		{
			name: "own array, camelCase",
			file: "tools.json",
			data: `[{"name":"get_weather","description":"Get the weather.","searchHint":"forecast","inputSchema":` + weather + `,
				"alwaysLoad":true,"annotations":{"readOnly":true,"openWorld":true},"source":{"origin":3}}]`,
			want: func() []*tooldexv1.Tool {
				w := weatherTool()
				w.SearchHint = "forecast"
				w.AlwaysLoad = true
				w.Annotations = &tooldexv1.ToolAnnotations{ReadOnly: true, OpenWorld: true}
				w.Source = &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_HOST}
				return []*tooldexv1.Tool{w}
			},
		},
		{
			name: "Claude Code catalog entry: core and string source ignored",
			file: "claude-code-tools.json",
			data: `[{"name":"Agent","search_hint":"delegate","description":"d","input_schema":{"type":"object"},"core":true,"aliases":["Task"],
				"short_description":"s","description_length":1,"description_truncated":false,"should_defer_flag":false,"availability":"always","source":"packages/x.ts"}]`,
			want: func() []*tooldexv1.Tool {
				return []*tooldexv1.Tool{{Name: "Agent", SearchHint: "delegate", Description: "d", InputSchema: schema(t, `{"type":"object"}`), Aliases: []string{"Task"}}}
			},
		},
		{
			name: "null fields are empty",
			file: "synthetic.json",
			data: `[{"name":"a","description":null,"search_hint":null,"input_schema":null,"always_load":null,"annotations":null,"source":null,"aliases":null,"_meta":null}]`,
			want: func() []*tooldexv1.Tool { return []*tooldexv1.Tool{{Name: "a"}} },
		},
		{
			name: "JSONL by extension, blank and CRLF lines",
			file: "tools.jsonl",
			data: "\n{\"name\":\"a\",\"search_hint\":\"h\"}\r\n   \r\n{\"name\":\"get_weather\",\"description\":\"Get the weather.\",\"input_schema\":" + weather + "}\n\n",
			want: func() []*tooldexv1.Tool {
				return []*tooldexv1.Tool{{Name: "a", SearchHint: "h"}, weatherTool()}
			},
		},
		{
			name: "JSONL with .ndjson extension, single line",
			file: "TOOLS.NDJSON",
			data: `{"name":"a"}`,
			want: func() []*tooldexv1.Tool { return []*tooldexv1.Tool{{Name: "a"}} },
		},
		{
			name: "JSONL by content",
			file: "tools.json",
			data: "{\"name\":\"a\"}\n{\"name\":\"b\",\"alwaysLoad\":true}\n",
			want: func() []*tooldexv1.Tool {
				return []*tooldexv1.Tool{{Name: "a"}, {Name: "b", AlwaysLoad: true}}
			},
		},
		{
			name: "UTF-8 BOM",
			file: "bom.json",
			data: "\xef\xbb\xbf[{\"name\":\"a\"}]",
			want: func() []*tooldexv1.Tool { return []*tooldexv1.Tool{{Name: "a"}} },
		},
		{
			name: "schema kept unchanged",
			file: "tools.json",
			data: `[{"name":"a","input_schema":{"type":"object","properties":{"x":{"enum":[1,"two",null,true,[3]],"default":{"k":[]}}},"$defs":{},"additionalProperties":false}}]`,
			want: func() []*tooldexv1.Tool {
				return []*tooldexv1.Tool{{Name: "a", InputSchema: schema(t, `{"type":"object","properties":{"x":{"enum":[1,"two",null,true,[3]],"default":{"k":[]}}},"$defs":{},"additionalProperties":false}`)}}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.file, []byte(tc.data))
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tc.file, err)
			}
			if want := tc.want(); !equalTools(got, want) {
				t.Errorf("Parse(%q):\ngot:%s\nwant:%s", tc.file, dump(got), dump(want))
			}
		})
	}
}

func TestParseLargeNumbers(t *testing.T) {
	data := `[{"name":"n","input_schema":{"type":"integer","maximum":9007199254740993,"minimum":-12345678901234567890,"multipleOf":0.1}}]`
	got, err := Parse("n.json", []byte(data))
	if err != nil {
		t.Fatalf("Parse error: %v", err)
	}
	f := got[0].GetInputSchema().GetFields()
	if g, w := f["maximum"].GetNumberValue(), 9007199254740993.0; g != w {
		t.Errorf("maximum = %v, want %v", g, w)
	}
	if g, w := f["minimum"].GetNumberValue(), -12345678901234567890.0; g != w {
		t.Errorf("minimum = %v, want %v", g, w)
	}
	if g, w := f["multipleOf"].GetNumberValue(), 0.1; g != w {
		t.Errorf("multipleOf = %v, want %v", g, w)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		data string
		want string // exact error message, or a prefix if it ends in "..."
	}{
		{"empty file", "tools.json", "", "tools.json: no tools"},
		{"whitespace only", "tools.json", " \n\t\n", "tools.json: no tools"},
		{"empty array", "tools.json", "[]", "tools.json: no tools"},
		{"empty tools", "tools.json", `{"tools":[]}`, "tools.json: no tools"},
		{"null tools", "tools.json", `{"tools":null}`, "tools.json: no tools"},
		{"empty JSON-RPC tools", "tools.json", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, "tools.json: no tools"},
		{"blank JSONL", "tools.jsonl", "\n\n  \n", "tools.jsonl: no tools"},
		{
			"schema not an object", "tools.json",
			`[{"name":"a"},{"name":"b"},{"name":"Foo","input_schema":"string"}]`,
			`tools.json: tool 3 "Foo": input_schema: not a JSON object`,
		},
		{
			"MCP schema an array", "tools.json",
			`{"tools":[{"name":"m","inputSchema":[]}]}`,
			`tools.json: tool 1 "m": inputSchema: not a JSON object`,
		},
		{
			"OpenAI parameters not an object", "o.json",
			`[{"type":"function","function":{"name":"f","parameters":true}}]`,
			`o.json: tool 1 "f": function: parameters: not a JSON object`,
		},
		{
			"single object schema not an object", "t.json",
			`{"name":"s","inputSchema":1}`,
			`t.json: tool "s": inputSchema: not a JSON object`,
		},
		{
			"server tool", "tools.json",
			`[{"name":"a","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search","max_uses":5}]`,
			`tools.json: tool 2 "web_search": type "web_search_20250305" is a server tool and cannot be registered`,
		},
		{
			"OpenAI built-in tool", "tools.json",
			`{"tools":[{"type":"file_search","vector_store_ids":["v"]}]}`,
			`tools.json: tool 1: type "file_search" is a server tool and cannot be registered`,
		},
		{"missing name", "tools.json", `[{"description":"x"}]`, "tools.json: tool 1: name: missing or empty"},
		{"empty name", "tools.json", `[{"name":""}]`, "tools.json: tool 1: name: missing or empty"},
		{"name not a string", "tools.json", `[{"name":5}]`, "tools.json: tool 1: name: want a string, got a number"},
		{"OpenAI chat missing name", "o.json", `[{"type":"function","function":{"description":"d"}}]`, "o.json: tool 1: function: name: missing or empty"},
		{"OpenAI chat wrong type", "o.json", `[{"type":"custom","function":{"name":"f"}}]`, `o.json: tool 1 "f": type "custom": an entry with "function" must have type "function"`},
		{"element not an object", "tools.json", `[{"name":"a"},"b"]`, "tools.json: tool 2: want a JSON object, got a string"},
		{"top-level number", "tools.json", `42`, "tools.json: not a tool file: want a JSON object or array, got a number"},
		{"top-level null", "tools.json", `null`, "tools.json: not a tool file: want a JSON object or array, got null"},
		{"object without tools or name", "tools.json", `{"foo":1}`, `tools.json: not a tool file: JSON object has neither "tools" nor "name"`},
		{"tools not an array", "tools.json", `{"tools":{}}`, "tools.json: tools: want a JSON array, got an object"},
		{"JSON-RPC error", "r.json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, "r.json: JSON-RPC error response -32601: Method not found"},
		{"JSON-RPC without tools", "r.json", `{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`, `r.json: JSON-RPC response: result has no "tools" (not a tools/list response)`},
		{"JSON-RPC result not an object", "r.json", `{"jsonrpc":"2.0","id":1,"result":[]}`, "r.json: JSON-RPC response: result: not a JSON object"},
		{"two schema fields", "t.json", `[{"name":"a","input_schema":{},"parameters":{}}]`, `t.json: tool 1 "a": both input_schema and parameters are set`},
		{"aliases not strings", "t.json", `[{"name":"a","aliases":["x",1]}]`, `t.json: tool 1 "a": aliases: element 2: want a string, got a number`},
		{"aliases not an array", "t.json", `[{"name":"a","aliases":"x"}]`, `t.json: tool 1 "a": aliases: want a JSON array, got a string`},
		{"annotation not a bool", "t.json", `{"tools":[{"name":"a","annotations":{"readOnlyHint":"yes"}}]}`, `t.json: tool 1 "a": annotations: readOnlyHint: want a boolean, got a string`},
		{"always_load not a bool", "t.json", `[{"name":"a","always_load":1}]`, `t.json: tool 1 "a": always_load: want a boolean, got a number`},
		{"meta alwaysLoad not a bool", "t.json", `{"tools":[{"name":"a","_meta":{"anthropic/alwaysLoad":"true"}}]}`, `t.json: tool 1 "a": _meta: anthropic/alwaysLoad: want a boolean, got a string`},
		{"meta not an object", "t.json", `{"tools":[{"name":"a","_meta":[]}]}`, `t.json: tool 1 "a": _meta: want a JSON object, got an array`},
		{"unknown origin", "t.json", `[{"name":"a","source":{"origin":"ORIGIN_NOPE"}}]`, `t.json: tool 1 "a": source: origin: unknown value "ORIGIN_NOPE"`},
		{"source a number", "t.json", `[{"name":"a","source":1}]`, `t.json: tool 1 "a": source: want a JSON object, got a number`},
		{"number out of range", "t.json", `[{"name":"a","input_schema":{"maximum":1e999}}]`, `t.json: tool 1 "a": input_schema: ...`},
		{"syntax error", "t.json", "[\n  {\"name\": \"a\",}\n]", "t.json: line 2, column 17: invalid JSON: ..."},
		{"truncated", "t.json", "[\n{\"name\":\"a\"}", "t.json: line 2: invalid JSON: unexpected end of input"},
		{"garbage after document", "t.json", "[\n{\"name\":\"a\"}\n]\n]", "t.json: line 4: unexpected data after the top-level JSON value"},
		{"JSONL bad line", "t.jsonl", "{\"name\":\"a\"}\n\n{\"name\":\"b\",\"input_schema\":1}\n", `t.jsonl: line 3: tool "b": input_schema: not a JSON object`},
		{"JSONL syntax error", "t.jsonl", "{\"name\":\"a\"}\n{\"name\":\n", "t.jsonl: line 2: invalid JSON: unexpected end of input"},
		{"JSONL not an object", "t.jsonl", "{\"name\":\"a\"}\n[1]\n", "t.jsonl: line 2: want a JSON object, got an array"},
		{"JSONL two values on a line", "t.jsonl", "{\"name\":\"a\"} {\"name\":\"b\"}\n", "t.jsonl: line 1: unexpected data after the JSON value (want one tool object per line)"},
		{"JSONL by content, missing name", "t.json", "{\"name\":\"a\"}\n{\"title\":\"b\"}\n", "t.json: line 2: name: missing or empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.file, []byte(tc.data))
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want error %q", tc.file, dump(got), tc.want)
			}
			if got != nil {
				t.Errorf("Parse(%q) returned tools with an error: %s", tc.file, dump(got))
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if prefix, ok := strings.CutSuffix(tc.want, "..."); ok {
				if !strings.HasPrefix(msg, prefix) || len(msg) == len(prefix) {
					t.Errorf("error:\ngot:  %s\nwant: %s", msg, tc.want)
				}
			} else if msg != tc.want {
				t.Errorf("error:\ngot:  %s\nwant: %s", msg, tc.want)
			}
		})
	}
}

func TestParseErrorWraps(t *testing.T) {
	_, err := Parse("t.json", []byte(`[{"name":"a",}]`))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("syntax error %v (%T) does not wrap *json.SyntaxError", err, err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tools.jsonl")
	if err := os.WriteFile(path, []byte("{\"name\":\"a\"}\n{\"name\":\"b\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	if want := []*tooldexv1.Tool{{Name: "a"}, {Name: "b"}}; !equalTools(got, want) {
		t.Errorf("ReadFile:\ngot:%s\nwant:%s", dump(got), dump(want))
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"name":"a","input_schema":[]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": tool 1 ") {
		t.Errorf("ReadFile(bad) error = %v, want one starting %q", err, bad+": tool 1 ")
	}

	_, err = ReadFile(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) error = %v, want fs.ErrNotExist", err)
	}
}

const catalogDir = "../../../shared/catalogs"

func readCatalog(t *testing.T, file string) []*tooldexv1.Tool {
	t.Helper()
	path := filepath.Join(catalogDir, file)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("catalog not available: %v", err)
	}
	tools, err := ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	return tools
}

func TestClaudeCodeCatalog(t *testing.T) {
	tools := readCatalog(t, "claude-code-tools.json")
	if got, want := len(tools), 56; got != want {
		t.Fatalf("got %d tools, want %d", got, want)
	}
	byName := map[string]*tooldexv1.Tool{}
	for i, tool := range tools {
		if tool.GetName() == "" {
			t.Errorf("tool %d has no name", i+1)
		}
		if tool.GetAlwaysLoad() {
			t.Errorf("tool %s: always_load = true, want false (core must not map to always_load)", tool.GetName())
		}
		if tool.GetSource() != nil {
			t.Errorf("tool %s: source = %v, want nil (string source is ignored)", tool.GetName(), tool.GetSource())
		}
		byName[tool.GetName()] = tool
	}

	cron := byName["CronCreate"]
	if cron == nil {
		t.Fatal("no CronCreate tool")
	}
	if got, want := cron.GetSearchHint(), "schedule a recurring or one-shot prompt"; got != want {
		t.Errorf("CronCreate search_hint = %q, want %q", got, want)
	}
	if cron.GetInputSchema() == nil {
		t.Fatal("CronCreate input_schema is nil")
	}
	if got, want := cron.GetInputSchema().GetFields()["type"].GetStringValue(), "object"; got != want {
		t.Errorf("CronCreate input_schema type = %q, want %q", got, want)
	}
	if _, ok := cron.GetInputSchema().GetFields()["properties"].GetStructValue().GetFields()["cron"]; !ok {
		t.Errorf("CronCreate input_schema has no properties.cron: %v", cron.GetInputSchema())
	}
	if !strings.HasPrefix(cron.GetDescription(), "Schedule") {
		t.Errorf("CronCreate description = %.40q..., want it to start with \"Schedule\"", cron.GetDescription())
	}

	agent := byName["Agent"]
	if got, want := strings.Join(agent.GetAliases(), ","), "Task"; got != want {
		t.Errorf("Agent aliases = %q, want %q", got, want)
	}
	if got, want := strings.Join(byName["TaskOutput"].GetAliases(), ","), "AgentOutputTool,BashOutputTool"; got != want {
		t.Errorf("TaskOutput aliases = %q, want %q", got, want)
	}
}

func TestSyntheticMCPCatalog(t *testing.T) {
	tools := readCatalog(t, "synthetic-mcp-tools.json")
	if got, want := len(tools), 8; got != want {
		t.Fatalf("got %d tools, want %d", got, want)
	}
	for i, tool := range tools {
		if !strings.HasPrefix(tool.GetName(), "mcp__") {
			t.Errorf("tool %d name = %q, want an mcp__ name", i+1, tool.GetName())
		}
		if tool.GetDescription() == "" {
			t.Errorf("tool %s has no description", tool.GetName())
		}
		if tool.GetSearchHint() != "" || tool.GetInputSchema() != nil {
			t.Errorf("tool %s: search_hint = %q, input_schema = %v; want both empty", tool.GetName(), tool.GetSearchHint(), tool.GetInputSchema())
		}
	}
	if got, want := tools[0].GetName(), "mcp__slack__send_message"; got != want {
		t.Errorf("first tool = %q, want %q", got, want)
	}
}

func TestBatches(t *testing.T) {
	lines := "{\"name\":\"a\"}\n{\"name\":\"b\"}\n\n{\"name\":\"c\"}\n{\"name\":\"d\"}\n{\"name\":\"e\"}\n"
	array := `[{"name":"a"},{"name":"b"},{"name":"c"}]`
	errStop := errors.New("stop")
	for _, tc := range []struct {
		desc, name, data string
		n                int
		stopAt           int // fn fails on this batch (1-based); 0: never
		wantSizes        []int
		wantErr          string // "" or the error's text; "stop" for errStop
	}{
		{desc: "JSON Lines", name: "c.jsonl", data: lines, n: 2, wantSizes: []int{2, 2, 1}},
		{desc: "exact multiple", name: "c.jsonl", data: lines, n: 5, wantSizes: []int{5}},
		{desc: "n below 1 means 1", name: "c.jsonl", data: lines, n: 0, wantSizes: []int{1, 1, 1, 1, 1}},
		{desc: "huge n", name: "c.jsonl", data: lines, n: math.MaxInt, wantSizes: []int{5}},
		{desc: "detected JSON Lines", name: "c.json", data: lines, n: 3, wantSizes: []int{3, 2}},
		{desc: "array", name: "c.json", data: array, n: 2, wantSizes: []int{2, 1}},
		{desc: "fn stops", name: "c.jsonl", data: lines, n: 2, stopAt: 2, wantSizes: []int{2, 2}, wantErr: "stop"},
		{desc: "bad line after a batch", name: "c.jsonl", data: "{\"name\":\"a\"}\n{\"name\":\"b\"}\n{\"name\":\"c\"}\n{\"name\":\n",
			n: 2, wantSizes: []int{2}, wantErr: "c.jsonl: line 4"},
		{desc: "no tools", name: "c.jsonl", data: "\n\n", n: 2, wantErr: "c.jsonl: no tools"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			var sizes []int
			var got []*tooldexv1.Tool
			err := Batches(tc.name, []byte(tc.data), tc.n, func(b []*tooldexv1.Tool) error {
				sizes = append(sizes, len(b))
				got = append(got, b...)
				if len(sizes) == tc.stopAt {
					return errStop
				}
				return nil
			})
			switch {
			case tc.wantErr == "stop":
				if err != errStop {
					t.Errorf("error %v, want fn's error unchanged", err)
				}
			case tc.wantErr != "":
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want it to start with %q", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("error %v, want none", err)
			}
			if !slices.Equal(sizes, tc.wantSizes) {
				t.Errorf("batch sizes %v, want %v", sizes, tc.wantSizes)
			}
			if tc.wantErr == "" {
				want, err := Parse(tc.name, []byte(tc.data))
				if err != nil {
					t.Fatal(err)
				}
				if !equalTools(got, want) {
					t.Errorf("tools:%s\nwant (Parse):%s", dump(got), dump(want))
				}
			}
		})
	}
}
