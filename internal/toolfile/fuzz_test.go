package toolfile

import (
	"testing"

	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

func FuzzParse(f *testing.F) {
	seeds := []struct{ name, data string }{
		// MCP tools/list result and JSON-RPC response.
		{"mcp.json", `{"tools":[{"name":"get_weather","title":"W","description":"d","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}},"annotations":{"readOnlyHint":true,"destructiveHint":false},"_meta":{"anthropic/alwaysLoad":true,"anthropic/searchHint":"rain"}}],"nextCursor":"c"}`},
		{"rpc.json", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`},
		{"rpc.json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}`},
		// OpenAI Chat Completions and Responses.
		{"openai.json", `[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}},"strict":true}}]`},
		{"openai.json", `{"tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object"}}]}`},
		{"openai.json", `[{"type":"web_search_preview"}]`},
		// Anthropic.
		{"anthropic.json", `[{"name":"a","description":"d","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"},"defer_loading":false},{"type":"web_search_20250305","name":"web_search"}]`},
		// tooldex's own JSON.
		{"tool.json", `{"name":"a","search_hint":"h","input_schema":{"type":"object"},"always_load":true,"annotations":{"title":"t","read_only":true,"open_world":true},"source":{"origin":"ORIGIN_CATALOG","id":"x"},"aliases":["b"]}`},
		{"tools.json", `[{"name":"a","searchHint":"h","inputSchema":{},"alwaysLoad":true,"annotations":{"readOnly":true},"source":{"origin":2}}]`},
		{"claude-code-tools.json", `[{"name":"Agent","search_hint":"s","description":"d","input_schema":{"type":"object"},"core":true,"aliases":["Task"],"source":"x.ts"}]`},
		{"synthetic.json", `[{"name":"mcp__a__b","description":"d","search_hint":null}]`},
		// JSON Lines.
		{"tools.jsonl", "{\"name\":\"a\"}\n\n{\"name\":\"b\",\"input_schema\":{\"type\":\"object\"}}\r\n"},
		{"tools.json", "{\"name\":\"a\"}\n{\"name\":\"b\"}\n"},
		{"tools.ndjson", "{\"name\":\"a\"} {\"name\":\"b\"}"},
		// Odd and broken input.
		{"tools.json", ""},
		{"tools.json", "[]"},
		{"tools.json", "\xef\xbb\xbf[{\"name\":\"\xff\"}]"},
		{"tools.json", "[\n{\"name\":\"a\",}\n]"},
		{"tools.json", `[{"name":"a","input_schema":{"x":1e999}}]`},
		{"tools.json", `null`},
	}
	for _, s := range seeds {
		f.Add(s.name, []byte(s.data))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		tools, err := Parse(name, data)
		if err != nil {
			if tools != nil {
				t.Fatalf("Parse returned %d tools and error %v", len(tools), err)
			}
			berr := Batches(name, data, 2, func([]*tooldexv1.Tool) error { return nil })
			if berr == nil || berr.Error() != err.Error() {
				t.Fatalf("Batches error %v, want Parse's %v", berr, err)
			}
			return
		}
		if len(tools) == 0 {
			t.Fatal("Parse returned no tools and no error")
		}
		for i, tool := range tools {
			if tool == nil {
				t.Fatalf("tool %d is nil", i)
			}
			if tool.GetName() == "" {
				t.Fatalf("tool %d has an empty name", i)
			}
			if _, err := proto.Marshal(tool); err != nil {
				t.Fatalf("tool %d (%q) does not marshal: %v", i, tool.GetName(), err)
			}
		}
		// Batches hands over the same tools, in order, at most n at a
		// time; on a parse error it fails as Parse does.
		var got []*tooldexv1.Tool
		berr := Batches(name, data, 2, func(b []*tooldexv1.Tool) error {
			if len(b) == 0 || len(b) > 2 {
				t.Fatalf("batch of %d tools, want 1 or 2", len(b))
			}
			got = append(got, b...)
			return nil
		})
		if berr != nil || !equalTools(got, tools) {
			t.Fatalf("Batches: %d tools, error %v; want the %d tools Parse returns", len(got), berr, len(tools))
		}
	})
}
