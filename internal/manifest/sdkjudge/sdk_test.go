package sdkjudge_test

// The official SDKs as judges: ToolsJSON must decode into each provider's
// request types and survive a round trip through them with nothing lost.
// The SDKs are imported here only, never by the package.

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/manifest"
)

// judgeCatalogs returns the tool sets the judges see: the test catalog and
// the repository's demo catalog (88 tools), all of them as core tools and as
// deferred ones.
func judgeCatalogs(t *testing.T) map[string][2][]*tooldexv1.Tool {
	t.Helper()
	core, deferred := catalog(t)
	sets := map[string][2][]*tooldexv1.Tool{"test": {core, deferred}}
	data, err := os.ReadFile("../../demo/catalog.json")
	if err != nil {
		t.Logf("demo catalog not read: %v", err)
		return sets
	}
	var entries []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatalf("demo catalog: %v", err)
	}
	var demo []*tooldexv1.Tool
	for _, e := range entries {
		tl := &tooldexv1.Tool{Name: e.Name, Description: e.Description}
		if e.InputSchema != nil {
			s, err := structpb.NewStruct(e.InputSchema)
			if err != nil {
				t.Fatalf("demo catalog %s: %v", e.Name, err)
			}
			tl.InputSchema = s
		}
		demo = append(demo, tl)
	}
	sets["demo-core"] = [2][]*tooldexv1.Tool{demo, nil}
	sets["demo-deferred"] = [2][]*tooldexv1.Tool{nil, demo}
	return sets
}

// elements splits a JSON array into its elements, decoded generically.
func elements(t *testing.T, data []byte) []any {
	t.Helper()
	var list []any
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatalf("ToolsJSON is not an array: %v", err)
	}
	return list
}

// sameJSON fails unless got (any JSON-marshalable value) equals want.
func sameJSON(t *testing.T, what string, got any, want any) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: marshal: %v", what, err)
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if gs, ws := canon(t, g), canon(t, want); gs != ws {
		t.Errorf("%s: round trip through the SDK changed it:\n got %s\nwant %s", what, gs, ws)
	}
}

// wantTool checks the key fields of one decoded tool against the rendered
// element: name, description, properties and required.
func wantTool(t *testing.T, what string, rendered map[string]any, name, description string, properties any, required []string) {
	t.Helper()
	if rendered["name"] != name {
		t.Errorf("%s: SDK name = %q, want %q", what, name, rendered["name"])
	}
	if d, _ := rendered["description"].(string); d != description {
		t.Errorf("%s: SDK description = %q, want %q", what, description, d)
	}
	var schema map[string]any
	for _, k := range []string{"input_schema", "parameters", "parametersJsonSchema"} {
		if s, ok := rendered[k].(map[string]any); ok {
			schema = s
		}
	}
	if schema == nil {
		return
	}
	if schema["properties"] != nil || properties != nil {
		sameJSON(t, what+" properties", properties, schema["properties"])
	}
	var want []string
	for _, r := range asList(schema["required"]) {
		want = append(want, r.(string))
	}
	if canon(t, required) != canon(t, want) {
		t.Errorf("%s: SDK required = %q, want %q", what, required, want)
	}
}

func TestAnthropicSDKJudge(t *testing.T) {
	for set, tools := range judgeCatalogs(t) {
		for _, ref := range []bool{false, true} {
			m, err := manifest.Build(tools[0], tools[1], manifest.Options{Provider: manifest.Anthropic, ToolReference: ref})
			if err != nil {
				t.Fatal(err)
			}
			var params []anthropic.ToolUnionParam
			if err := json.Unmarshal(m.ToolsJSON, &params); err != nil {
				t.Fatalf("%s: []anthropic.ToolUnionParam: %v", set, err)
			}
			rendered := elements(t, m.ToolsJSON)
			if len(params) != len(rendered) {
				t.Fatalf("%s: SDK decoded %d tools, want %d", set, len(params), len(rendered))
			}
			for i, p := range params {
				r := rendered[i].(map[string]any)
				what := set + "/" + r["name"].(string)
				tp := p.OfTool
				if tp == nil {
					t.Errorf("%s: not decoded as a custom tool (ToolParam)", what)
					continue
				}
				if tp.InputSchema.Type != "object" {
					t.Errorf("%s: input_schema type = %q", what, tp.InputSchema.Type)
				}
				wantTool(t, what, r, tp.Name, tp.Description.Value, tp.InputSchema.Properties, tp.InputSchema.Required)
				if want := r["defer_loading"] == true; tp.DeferLoading.Value != want {
					t.Errorf("%s: defer_loading = %v, want %v", what, tp.DeferLoading.Value, want)
				}
				sameJSON(t, what, p, r)
			}
		}
	}
}

func TestAnthropicSDKJudgeSearchContent(t *testing.T) {
	data, err := manifest.SearchContent(manifest.Anthropic, true, []string{"CronCreate", "mcp__github__create_issue"}, "Found 2 tools.")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []anthropic.ToolResultBlockParamContentUnion
	if err := json.Unmarshal(data, &blocks); err != nil {
		t.Fatalf("[]anthropic.ToolResultBlockParamContentUnion: %v", err)
	}
	if len(blocks) != 3 || blocks[0].OfToolReference == nil || blocks[1].OfToolReference == nil || blocks[2].OfText == nil {
		t.Fatalf("decoded %s as %+v; want two tool_reference blocks and a text block", data, blocks)
	}
	if blocks[0].OfToolReference.ToolName != "CronCreate" || blocks[2].OfText.Text != "Found 2 tools." {
		t.Errorf("decoded %s as %+v", data, blocks)
	}
	sameJSON(t, "search content", blocks, elements(t, data))
}

func TestOpenAISDKJudgeChat(t *testing.T) {
	for set, tools := range judgeCatalogs(t) {
		for _, o := range []manifest.Options{{Provider: manifest.OpenAI}, {Provider: manifest.OpenAI, Strict: true}, {Provider: manifest.Grok, Strict: true}} {
			m, err := manifest.Build(tools[0], tools[1], o)
			if err != nil {
				t.Fatal(err)
			}
			var params []openai.ChatCompletionToolUnionParam
			if err := json.Unmarshal(m.ToolsJSON, &params); err != nil {
				t.Fatalf("%s: []openai.ChatCompletionToolUnionParam: %v", set, err)
			}
			rendered := elements(t, m.ToolsJSON)
			if len(params) != len(rendered) {
				t.Fatalf("%s: SDK decoded %d tools, want %d", set, len(params), len(rendered))
			}
			for i, p := range params {
				r := rendered[i].(map[string]any)
				fn := r["function"].(map[string]any)
				what := optName(o) + "/" + set + "/" + fn["name"].(string)
				if p.OfFunction == nil {
					t.Errorf("%s: not decoded as a function tool", what)
					continue
				}
				f := p.OfFunction.Function
				props := f.Parameters["properties"]
				var required []string
				for _, x := range asList(f.Parameters["required"]) {
					required = append(required, x.(string))
				}
				wantTool(t, what, fn, f.Name, f.Description.Value, props, required)
				if want := fn["strict"] == true; f.Strict.Value != want {
					t.Errorf("%s: strict = %v, want %v", what, f.Strict.Value, want)
				}
				sameJSON(t, what, p, r)
			}
		}
	}
}

func TestOpenAISDKJudgeResponses(t *testing.T) {
	for set, tools := range judgeCatalogs(t) {
		for _, strict := range []bool{false, true} {
			o := manifest.Options{Provider: manifest.OpenAI, OpenAIAPI: "responses", Strict: strict}
			m, err := manifest.Build(tools[0], tools[1], o)
			if err != nil {
				t.Fatal(err)
			}
			var params []responses.ToolUnionParam
			if err := json.Unmarshal(m.ToolsJSON, &params); err != nil {
				t.Fatalf("%s: []responses.ToolUnionParam: %v", set, err)
			}
			rendered := elements(t, m.ToolsJSON)
			if len(params) != len(rendered) {
				t.Fatalf("%s: SDK decoded %d tools, want %d", set, len(params), len(rendered))
			}
			for i, p := range params {
				r := rendered[i].(map[string]any)
				what := optName(o) + "/" + set + "/" + r["name"].(string)
				f := p.OfFunction
				if f == nil {
					t.Errorf("%s: not decoded as a function tool", what)
					continue
				}
				var required []string
				for _, x := range asList(f.Parameters["required"]) {
					required = append(required, x.(string))
				}
				wantTool(t, what, r, f.Name, f.Description.Value, f.Parameters["properties"], required)
				if !f.Strict.Valid() {
					t.Errorf("%s: strict missing; the Responses API treats that as true", what)
				}
				if want := r["strict"] == true; f.Strict.Value != want {
					t.Errorf("%s: strict = %v, want %v", what, f.Strict.Value, want)
				}
				sameJSON(t, what, p, r)
			}
		}
	}
}

func TestGeminiSDKJudge(t *testing.T) {
	for set, tools := range judgeCatalogs(t) {
		m, err := manifest.Build(tools[0], tools[1], manifest.Options{Provider: manifest.Gemini})
		if err != nil {
			t.Fatal(err)
		}
		var tool genai.Tool
		dec := json.NewDecoder(bytes.NewReader(m.ToolsJSON))
		dec.DisallowUnknownFields() // every field must be one genai knows
		if err := dec.Decode(&tool); err != nil {
			t.Fatalf("%s: genai.Tool: %v", set, err)
		}
		var rendered struct {
			FunctionDeclarations []map[string]any `json:"functionDeclarations"`
		}
		if err := json.Unmarshal(m.ToolsJSON, &rendered); err != nil {
			t.Fatal(err)
		}
		if len(tool.FunctionDeclarations) != len(rendered.FunctionDeclarations) {
			t.Fatalf("%s: SDK decoded %d declarations, want %d", set, len(tool.FunctionDeclarations), len(rendered.FunctionDeclarations))
		}
		for i, fd := range tool.FunctionDeclarations {
			r := rendered.FunctionDeclarations[i]
			what := set + "/" + fd.Name
			if fd.Parameters != nil && fd.ParametersJsonSchema != nil {
				t.Errorf("%s: both parameters and parametersJsonSchema", what)
			}
			var props any
			var required []string
			switch {
			case fd.Parameters != nil:
				if fd.Parameters.Type != genai.TypeObject {
					t.Errorf("%s: parameters type = %q, want %q", what, fd.Parameters.Type, genai.TypeObject)
				}
				if fd.Parameters.Properties != nil {
					props = fd.Parameters.Properties
				}
				required = fd.Parameters.Required
				checkGeminiSchema(t, what, fd.Parameters, true)
			case fd.ParametersJsonSchema != nil:
				s := fd.ParametersJsonSchema.(map[string]any)
				props = s["properties"]
				for _, x := range asList(s["required"]) {
					required = append(required, x.(string))
				}
			}
			wantTool(t, what, r, fd.Name, fd.Description, props, required)
			sameJSON(t, what, fd, r)
		}
		sameJSON(t, set, tool, mustDecode(t, m.ToolsJSON))
	}
}

// checkGeminiSchema checks what manifest.Gemini's parameters field demands of every
// node: a known type (or anyOf), properties only on OBJECT (and not empty
// below the root), items on every ARRAY, string enums on STRING only, and
// required naming existing properties.
func checkGeminiSchema(t *testing.T, path string, s *genai.Schema, root bool) {
	t.Helper()
	known := map[genai.Type]bool{genai.TypeString: true, genai.TypeNumber: true, genai.TypeInteger: true,
		genai.TypeBoolean: true, genai.TypeArray: true, genai.TypeObject: true, genai.TypeNULL: true}
	if len(s.AnyOf) > 0 {
		for _, b := range s.AnyOf {
			checkGeminiSchema(t, path+"|", b, false)
		}
		return
	}
	if !known[s.Type] {
		t.Errorf("%s: type %q", path, s.Type)
	}
	if len(s.Properties) > 0 && s.Type != genai.TypeObject {
		t.Errorf("%s: properties on %s", path, s.Type)
	}
	if s.Type == genai.TypeObject && len(s.Properties) == 0 && !root {
		t.Errorf("%s: OBJECT without properties", path)
	}
	if s.Type == genai.TypeArray && s.Items == nil {
		t.Errorf("%s: ARRAY without items", path)
	}
	if len(s.Enum) > 0 && s.Type != genai.TypeString {
		t.Errorf("%s: enum on %s", path, s.Type)
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			t.Errorf("%s: required %q is not a property", path, r)
		}
	}
	for name, p := range s.Properties {
		checkGeminiSchema(t, path+"."+name, p, false)
	}
	if s.Items != nil {
		checkGeminiSchema(t, path+"[]", s.Items, false)
	}
}

func mustDecode(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
