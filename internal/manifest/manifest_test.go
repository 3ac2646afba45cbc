package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// allOptions is every rendering Build offers.
var allOptions = []Options{
	{Provider: Anthropic},
	{Provider: Anthropic, ToolReference: true},
	{Provider: OpenAI},
	{Provider: OpenAI, Strict: true},
	{Provider: OpenAI, OpenAIAPI: "responses"},
	{Provider: OpenAI, OpenAIAPI: "responses", Strict: true},
	{Provider: Gemini},
	{Provider: Grok},
	{Provider: Grok, Strict: true},
}

func optName(o Options) string {
	s := string(o.Provider)
	if o.ToolReference {
		s += "+ref"
	}
	if o.OpenAIAPI != "" {
		s += "+" + o.OpenAIAPI
	}
	if o.Strict {
		s += "+strict"
	}
	return s
}

// catalog returns core and deferred tools covering the shapes rendering
// cares about.
func catalog(t *testing.T) (core, deferred []*tooldexv1.Tool) {
	core = []*tooldexv1.Tool{
		tool(t, "Read", "Reads a file.", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"file_path":{"type":"string","description":"Absolute path."},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer","exclusiveMinimum":0}},"required":["file_path"],"additionalProperties":false}`),
		tool(t, "Bash", "Runs a <shell> command & returns output.", `{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":["integer","null"]},"mode":{"type":"string","enum":["fg","bg"],"default":"fg"}},"required":["command"]}`),
		tool(t, "Sleep", "Waits.", ""),
		tool(t, "1st_core", "Starts with a digit.", `{"type":"object","properties":{"x":{"type":"string"}}}`),
		tool(t, "Config", "Free-form settings.", `{"type":"object","properties":{"settings":{"type":"object","description":"Any keys."}},"required":["settings"]}`),
		// Catalog copies of the entry tools are replaced by EntryTools.
		tool(t, "ToolSearch", "an old ToolSearch", `{"type":"object"}`),
	}
	deferred = []*tooldexv1.Tool{
		tool(t, "mcp__github__create_issue", "Creates an issue.", `{"type":"object","properties":{"title":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}}},"required":["title"]}`),
		tool(t, "CronCreate", "Schedules a job.", `{"type":"object","properties":{"cron":{"type":"string"}},"required":["cron"]}`),
		tool(t, "-weird", "Starts with a dash.", ""),
		tool(t, "9lives", "Starts with a digit.", `{"type":"object","properties":{"n":{"type":"integer","enum":[1,9]}}}`),
		tool(t, "ExecuteTool", "an old ExecuteTool", ""),
	}
	return core, deferred
}

func shuffled(tools []*tooldexv1.Tool, r *rand.Rand) []*tooldexv1.Tool {
	out := make([]*tooldexv1.Tool, len(tools))
	for i, t := range tools {
		out[i] = proto.Clone(t).(*tooldexv1.Tool)
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func TestBuildDeterministic(t *testing.T) {
	core, deferred := catalog(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, o := range allOptions {
		t.Run(optName(o), func(t *testing.T) {
			want, err := Build(core, deferred, o)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if !json.Valid(want.ToolsJSON) {
				t.Fatalf("ToolsJSON is not valid JSON: %s", want.ToolsJSON)
			}
			for i := 0; i < 20; i++ {
				got, err := Build(shuffled(core, r), shuffled(deferred, r), o)
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				if string(got.ToolsJSON) != string(want.ToolsJSON) {
					t.Fatalf("shuffled input changed ToolsJSON:\n got %s\nwant %s", got.ToolsJSON, want.ToolsJSON)
				}
				if got.Fingerprint != want.Fingerprint || got.DeferredBlock != want.DeferredBlock ||
					!slices.Equal(got.DeferredNames, want.DeferredNames) || !slices.Equal(got.Mappings, want.Mappings) ||
					!slices.Equal(got.SchemaFallbacks, want.SchemaFallbacks) || got.SystemPrompt != want.SystemPrompt {
					t.Fatalf("shuffled input changed the manifest:\n got %+v\nwant %+v", got, want)
				}
			}
			sum := sha256.Sum256([]byte(string(want.ToolsJSON) + "\n" + want.SystemPrompt))
			if fp := hex.EncodeToString(sum[:]); want.Fingerprint != fp {
				t.Errorf("Fingerprint = %s, want %s", want.Fingerprint, fp)
			}
		})
	}
}

// TestDeferredChurn: deferred tools coming and going change only the
// deferred list, except for Anthropic with tool_reference.
func TestDeferredChurn(t *testing.T) {
	core, deferred := catalog(t)
	for _, o := range allOptions {
		t.Run(optName(o), func(t *testing.T) {
			a, err := Build(core, deferred, o)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Build(core, deferred[:2], o)
			if err != nil {
				t.Fatal(err)
			}
			changed := string(a.ToolsJSON) != string(b.ToolsJSON) || a.Fingerprint != b.Fingerprint
			if wantChanged := o.ToolReference && o.Provider == Anthropic; changed != wantChanged {
				t.Errorf("removing deferred tools changed ToolsJSON/Fingerprint: %v, want %v", changed, wantChanged)
			}
			if a.DeferredBlock == b.DeferredBlock || slices.Equal(a.DeferredNames, b.DeferredNames) {
				t.Error("removing deferred tools left the deferred list unchanged")
			}
		})
	}
}

// toolNames returns the tool names of a ToolsJSON in order.
func toolNames(t *testing.T, p Provider, toolsJSON []byte) []string {
	t.Helper()
	var names []string
	if p == Gemini {
		var g struct {
			FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
		}
		if err := json.Unmarshal(toolsJSON, &g); err != nil {
			t.Fatal(err)
		}
		for _, f := range g.FunctionDeclarations {
			names = append(names, f.Name)
		}
		return names
	}
	var list []map[string]any
	if err := json.Unmarshal(toolsJSON, &list); err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if f, ok := x["function"].(map[string]any); ok {
			x = f
		}
		names = append(names, x["name"].(string))
	}
	return names
}

func TestBuildOrderAndNames(t *testing.T) {
	core, deferred := catalog(t)
	tests := []struct {
		opt           Options
		wantTools     []string
		wantDeferred  []string
		wantMappings  []Mapping
		wantFallbacks []string
	}{
		{
			opt:          Options{Provider: Anthropic},
			wantTools:    []string{"1st_core", "Bash", "Config", "Read", "Sleep", "ToolSearch", "ExecuteTool"},
			wantDeferred: []string{"-weird", "9lives", "CronCreate", "mcp__github__create_issue"},
		},
		{
			opt:          Options{Provider: Anthropic, ToolReference: true},
			wantTools:    []string{"1st_core", "Bash", "Config", "Read", "Sleep", "ToolSearch", "ExecuteTool", "-weird", "9lives", "CronCreate", "mcp__github__create_issue"},
			wantDeferred: []string{"-weird", "9lives", "CronCreate", "mcp__github__create_issue"},
		},
		{
			opt:           Options{Provider: OpenAI, Strict: true},
			wantTools:     []string{"1st_core", "Bash", "Config", "Read", "Sleep", "ToolSearch", "ExecuteTool"},
			wantDeferred:  []string{"-weird", "9lives", "CronCreate", "mcp__github__create_issue"},
			wantFallbacks: []string{"Config", "ExecuteTool"},
		},
		{
			opt:          Options{Provider: Gemini},
			wantTools:    []string{"t.1st_core", "Bash", "Config", "Read", "Sleep", "ToolSearch", "ExecuteTool"},
			wantDeferred: []string{"CronCreate", "mcp__github__create_issue", "t.-weird", "t.9lives"},
			wantMappings: []Mapping{
				{ProviderName: "t.-weird", ToolName: "-weird"},
				{ProviderName: "t.1st_core", ToolName: "1st_core"},
				{ProviderName: "t.9lives", ToolName: "9lives"},
			},
			wantFallbacks: []string{"Config", "ExecuteTool"},
		},
	}
	for _, tt := range tests {
		t.Run(optName(tt.opt), func(t *testing.T) {
			m, err := Build(core, deferred, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(t, tt.opt.Provider, m.ToolsJSON); !slices.Equal(got, tt.wantTools) {
				t.Errorf("tools = %q, want %q", got, tt.wantTools)
			}
			if !slices.Equal(m.DeferredNames, tt.wantDeferred) {
				t.Errorf("DeferredNames = %q, want %q", m.DeferredNames, tt.wantDeferred)
			}
			wantBlock := "<available-deferred-tools>\n" + strings.Join(tt.wantDeferred, "\n") + "\n</available-deferred-tools>"
			if m.DeferredBlock != wantBlock {
				t.Errorf("DeferredBlock = %q, want %q", m.DeferredBlock, wantBlock)
			}
			if !slices.Equal(m.Mappings, tt.wantMappings) {
				t.Errorf("Mappings = %+v, want %+v", m.Mappings, tt.wantMappings)
			}
			if !slices.Equal(m.SchemaFallbacks, tt.wantFallbacks) {
				t.Errorf("SchemaFallbacks = %q, want %q", m.SchemaFallbacks, tt.wantFallbacks)
			}
			if strings.Contains(string(m.ToolsJSON), "an old ") {
				t.Error("ToolsJSON holds the catalog's ToolSearch/ExecuteTool instead of EntryTools")
			}
		})
	}
}

func TestBuildEmptyDeferred(t *testing.T) {
	m, err := Build(nil, nil, Options{Provider: OpenAI})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<available-deferred-tools>\n</available-deferred-tools>"; m.DeferredBlock != want {
		t.Errorf("DeferredBlock = %q, want %q", m.DeferredBlock, want)
	}
	if m.DeferredNames == nil || len(m.DeferredNames) != 0 {
		t.Errorf("DeferredNames = %#v, want empty, non-nil", m.DeferredNames)
	}
	if got := toolNames(t, OpenAI, m.ToolsJSON); !slices.Equal(got, []string{"ToolSearch", "ExecuteTool"}) {
		t.Errorf("tools = %q, want the two entry tools", got)
	}
}

// TestBuildRendering checks the exact JSON of one small tool per rendering.
func TestBuildRendering(t *testing.T) {
	core := []*tooldexv1.Tool{tool(t, "Echo", "Says <it> back & more.", `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}`)}
	deferred := []*tooldexv1.Tool{tool(t, "Later", "", "")}
	const (
		echoSchema   = `{"properties":{"n":{"type":"integer"},"text":{"type":"string"}},"required":["text"],"type":"object"}`
		echoStrict   = `{"additionalProperties":false,"properties":{"n":{"type":["integer","null"]},"text":{"type":"string"}},"required":["n","text"],"type":"object"}`
		echoGemini   = `{"properties":{"n":{"type":"INTEGER"},"text":{"type":"STRING"}},"required":["text"],"type":"OBJECT"}`
		echoDesc     = `"Says <it> back & more."`
		laterEmpty   = `{"type":"object"}`
		anthropicOne = `{"name":"Echo","description":` + echoDesc + `,"input_schema":` + echoSchema + `}`
	)
	tests := []struct {
		opt   Options
		first string // the first element of the tools array (the whole value for gemini, up to the entry tools)
		last  string // for anthropic+ref, the last element
	}{
		{opt: Options{Provider: Anthropic}, first: anthropicOne},
		{opt: Options{Provider: Anthropic, ToolReference: true}, first: anthropicOne, last: `{"name":"Later","input_schema":` + laterEmpty + `,"defer_loading":true}`},
		{opt: Options{Provider: OpenAI}, first: `{"type":"function","function":{"name":"Echo","description":` + echoDesc + `,"parameters":` + echoSchema + `}}`},
		{opt: Options{Provider: OpenAI, OpenAIAPI: "chat", Strict: true}, first: `{"type":"function","function":{"name":"Echo","description":` + echoDesc + `,"parameters":` + echoStrict + `,"strict":true}}`},
		{opt: Options{Provider: OpenAI, OpenAIAPI: "Responses"}, first: `{"type":"function","name":"Echo","description":` + echoDesc + `,"parameters":` + echoSchema + `,"strict":false}`},
		{opt: Options{Provider: OpenAI, OpenAIAPI: "responses", Strict: true}, first: `{"type":"function","name":"Echo","description":` + echoDesc + `,"parameters":` + echoStrict + `,"strict":true}`},
		{opt: Options{Provider: Grok, OpenAIAPI: "responses", Strict: true}, first: `{"type":"function","function":{"name":"Echo","description":` + echoDesc + `,"parameters":` + echoStrict + `,"strict":true}}`},
		{opt: Options{Provider: Gemini, Strict: true, ToolReference: true}, first: `{"functionDeclarations":[{"name":"Echo","description":` + echoDesc + `,"parameters":` + echoGemini + `}`},
	}
	for _, tt := range tests {
		t.Run(optName(tt.opt), func(t *testing.T) {
			m, err := Build(core, deferred, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			got := string(m.ToolsJSON)
			prefix := tt.first
			if tt.opt.Provider != Gemini {
				prefix = "[" + tt.first + ","
			} else {
				prefix += ","
			}
			if !strings.HasPrefix(got, prefix) {
				t.Errorf("ToolsJSON = %s\nwant it to start %s", got, prefix)
			}
			if tt.last != "" && !strings.HasSuffix(got, ","+tt.last+"]") {
				t.Errorf("ToolsJSON = %s\nwant it to end %s", got, tt.last)
			}
			if tt.last == "" && strings.Contains(got, "defer_loading") {
				t.Errorf("ToolsJSON has defer_loading without tool_reference: %s", got)
			}
		})
	}
}

func TestBuildGeminiParameters(t *testing.T) {
	core := []*tooldexv1.Tool{
		tool(t, "NoArgs", "No parameters.", `{"type":"object","properties":{}}`),
		tool(t, "Nothing", "No schema.", ""),
		tool(t, "Map", "Free keys at the root.", `{"type":"object","additionalProperties":{"type":"string"}}`),
		tool(t, "Tree", "Deep recursion.", `{"type":"object","$id":"urn:tree","$defs":{"n":{"type":"object","properties":{"c":{"$ref":"#/$defs/n"}}}},"properties":{"root":{"$ref":"#/$defs/n"}}}`),
	}
	m, err := Build(core, nil, Options{Provider: Gemini})
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		FunctionDeclarations []map[string]json.RawMessage `json:"functionDeclarations"`
	}
	if err := json.Unmarshal(m.ToolsJSON, &g); err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]map[string]json.RawMessage)
	for _, f := range g.FunctionDeclarations {
		var name string
		json.Unmarshal(f["name"], &name)
		byName[name] = f
	}
	tests := []struct {
		name       string
		wantKey    string // parameters, parametersJsonSchema or "" for neither
		wantSchema string
	}{
		{"NoArgs", "", ""},
		{"Nothing", "", ""},
		{"Map", "parametersJsonSchema", `{"type":"object","additionalProperties":{"type":"string"}}`},
		{"Tree", "parametersJsonSchema", `{"type":"object","$defs":{"n":{"type":"object","properties":{"c":{"$ref":"#/$defs/n"}}}},"properties":{"root":{"$ref":"#/$defs/n"}}}`},
		{"ToolSearch", "parameters", ""},
		{"ExecuteTool", "parametersJsonSchema", ""},
	}
	for _, tt := range tests {
		f, ok := byName[tt.name]
		if !ok {
			t.Errorf("%s: not rendered", tt.name)
			continue
		}
		_, hasP := f["parameters"]
		_, hasJ := f["parametersJsonSchema"]
		if hasP && hasJ {
			t.Errorf("%s: both parameters and parametersJsonSchema", tt.name)
		}
		got := ""
		switch {
		case hasP:
			got = "parameters"
		case hasJ:
			got = "parametersJsonSchema"
		}
		if got != tt.wantKey {
			t.Errorf("%s: rendered with %q, want %q", tt.name, got, tt.wantKey)
		}
		if tt.wantSchema != "" {
			var s map[string]any
			json.Unmarshal(f[tt.wantKey], &s)
			if g, w := canon(t, s), canon(t, obj(t, tt.wantSchema)); g != w {
				t.Errorf("%s: %s = %s, want %s", tt.name, tt.wantKey, g, w)
			}
		}
	}
	if want := []string{"ExecuteTool", "Map", "Tree"}; !slices.Equal(m.SchemaFallbacks, want) {
		t.Errorf("SchemaFallbacks = %q, want %q", m.SchemaFallbacks, want)
	}
}

func TestBuildErrors(t *testing.T) {
	ok := tool(t, "Ok", "", "")
	tests := []struct {
		name     string
		core     []*tooldexv1.Tool
		deferred []*tooldexv1.Tool
		opt      Options
		wantErr  string
	}{
		{"unknown provider", nil, nil, Options{Provider: "claude"}, `unknown provider "claude"`},
		{"empty provider", nil, nil, Options{}, `unknown provider ""`},
		{"unknown OpenAI API", nil, nil, Options{Provider: OpenAI, OpenAIAPI: "assistants"}, `unknown OpenAI API "assistants"`},
		{"nil tool", []*tooldexv1.Tool{ok, nil}, nil, Options{Provider: OpenAI}, "core tool 1 is nil"},
		{"bad name", nil, []*tooldexv1.Tool{tool(t, "a.b", "", "")}, Options{Provider: Gemini}, `deferred tool "a.b": name must match`},
		{"empty name", []*tooldexv1.Tool{tool(t, "", "", "")}, nil, Options{Provider: Gemini}, `core tool "": name must match`},
		{"too long", []*tooldexv1.Tool{tool(t, strings.Repeat("x", 65), "", "")}, nil, Options{Provider: Anthropic}, "name must match"},
		{"twice in core", []*tooldexv1.Tool{ok, ok}, nil, Options{Provider: Anthropic}, `core tool "Ok" is listed twice`},
		{"core and deferred", []*tooldexv1.Tool{ok}, []*tooldexv1.Tool{ok}, Options{Provider: Anthropic}, `deferred tool "Ok" is listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Build(tt.core, tt.deferred, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Build = %v, %v; want error containing %q", m, err, tt.wantErr)
			}
		})
	}
	// The OpenAI API is checked for OpenAI only.
	if _, err := Build(nil, nil, Options{Provider: Gemini, OpenAIAPI: "assistants"}); err != nil {
		t.Errorf("Build(gemini, OpenAIAPI: assistants) = %v, want no error", err)
	}
}

func TestBuildDoesNotModifyInput(t *testing.T) {
	core, deferred := catalog(t)
	before := make([]*tooldexv1.Tool, 0, len(core)+len(deferred))
	for _, tl := range append(append([]*tooldexv1.Tool{}, core...), deferred...) {
		before = append(before, proto.Clone(tl).(*tooldexv1.Tool))
	}
	order := make([]string, len(core))
	for i, tl := range core {
		order[i] = tl.GetName()
	}
	for _, o := range allOptions {
		if _, err := Build(core, deferred, o); err != nil {
			t.Fatal(err)
		}
	}
	for i, tl := range append(append([]*tooldexv1.Tool{}, core...), deferred...) {
		if !proto.Equal(tl, before[i]) {
			t.Errorf("Build modified tool %q", tl.GetName())
		}
	}
	for i, tl := range core {
		if tl.GetName() != order[i] {
			t.Errorf("Build reordered its core slice")
			break
		}
	}
}

func TestSystemPrompt(t *testing.T) {
	for _, o := range allOptions {
		m, err := Build(nil, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"ToolSearch", "<available-deferred-tools>", "select:", "discover:", "+slack", "mcp__", "ExecuteTool"} {
			if !strings.Contains(m.SystemPrompt, want) {
				t.Errorf("%s: SystemPrompt lacks %q", optName(o), want)
			}
		}
		direct := strings.Contains(m.SystemPrompt, "call them directly")
		if want := o.ToolReference && o.Provider == Anthropic; direct != want {
			t.Errorf("%s: SystemPrompt says found tools are called directly: %v, want %v", optName(o), direct, want)
		}
	}
}

func TestEntryTools(t *testing.T) {
	a, b := EntryTools(), EntryTools()
	if len(a) != 2 || a[0].GetName() != ToolSearchName || a[1].GetName() != ExecuteToolName {
		t.Fatalf("EntryTools = %v, want ToolSearch, ExecuteTool", a)
	}
	a[0].Description = "changed"
	if b[0].GetDescription() == "changed" || EntryTools()[0].GetDescription() == "changed" {
		t.Error("EntryTools returns shared values")
	}
	search := EntryTools()[0]
	for _, want := range []string{"select:", "discover:", "+slack", "mcp__", "ExecuteTool", "<available-deferred-tools>"} {
		if !strings.Contains(search.GetDescription(), want) {
			t.Errorf("ToolSearch description lacks %q", want)
		}
	}
	props := search.GetInputSchema().AsMap()["properties"].(map[string]any)
	if _, ok := props["query"]; !ok {
		t.Error("ToolSearch schema has no query")
	}
	exec := EntryTools()[1].GetInputSchema().AsMap()
	if got := requiredSet(exec); !got["tool_name"] || !got["params"] {
		t.Errorf("ExecuteTool required = %v, want tool_name and params", exec["required"])
	}
}

func TestSearchContent(t *testing.T) {
	tests := []struct {
		name    string
		p       Provider
		ref     bool
		names   []string
		text    string
		want    string
		wantErr bool
	}{
		{"anthropic references", Anthropic, true, []string{"B", "A"}, "", `[{"type":"tool_reference","tool_name":"B"},{"type":"tool_reference","tool_name":"A"}]`, false},
		{"anthropic references and text", Anthropic, true, []string{"A", "", "A"}, "Found 1 <tool>.", `[{"type":"tool_reference","tool_name":"A"},{"type":"text","text":"Found 1 <tool>."}]`, false},
		{"anthropic text only", Anthropic, true, nil, "No matching deferred tools found.", `[{"type":"text","text":"No matching deferred tools found."}]`, false},
		{"anthropic nothing", Anthropic, true, nil, "", "", true},
		{"anthropic without references", Anthropic, false, []string{"A"}, "schemas", `[{"type":"text","text":"schemas"}]`, false},
		{"openai", OpenAI, true, []string{"A"}, "Found A.", `[{"type":"text","text":"Found A."}]`, false},
		{"gemini", Gemini, false, []string{"9x"}, "t", `[{"type":"text","text":"t"}]`, false},
		{"grok empty text", Grok, false, nil, "", `[{"type":"text","text":""}]`, false},
		{"unknown provider", "mistral", false, nil, "x", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SearchContent(tt.p, tt.ref, tt.names, tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("SearchContent error = %v, want error %v", err, tt.wantErr)
			}
			if string(got) != tt.want {
				t.Errorf("SearchContent = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDeferredBlockBounded(t *testing.T) {
	names := make([]string, MaxBlockNames+5)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%05d", i)
	}
	b := deferredBlock(names)
	if got := strings.Count(b, "tool_"); got != MaxBlockNames {
		t.Errorf("block lists %d names, want %d", got, MaxBlockNames)
	}
	if !strings.Contains(b, "(and 5 more: find them with ToolSearch)\n</available-deferred-tools>") {
		t.Errorf("block does not say how many more: ...%s", b[len(b)-80:])
	}
	if b := deferredBlock(names[:3]); b != "<available-deferred-tools>\ntool_00000\ntool_00001\ntool_00002\n</available-deferred-tools>" {
		t.Errorf("short block = %q", b)
	}
}
