package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"

	"github.com/tooldex/tooldex/internal/toolname"
)

// Options choose the rendering.
type Options struct {
	// Provider whose format to render.
	Provider Provider
	// ToolReference (anthropic only): the frontend supports tool_reference
	// blocks, so the deferred tools are sent with "defer_loading": true.
	ToolReference bool
	// OpenAIAPI (openai only): "chat" (Chat Completions, the default when
	// empty) or "responses".
	OpenAIAPI string
	// Strict (openai and grok): render function tools in strict mode.
	Strict bool
}

// Manifest is the initial tool set, rendered for one provider.
type Manifest struct {
	// ToolsJSON is the provider's tools value, ready to send: for
	// anthropic, openai and grok an array; for gemini one Tool object.
	ToolsJSON []byte
	// DeferredNames are the deferred tools' names as the provider sees
	// them, sorted.
	DeferredNames []string
	// DeferredBlock lists DeferredNames one per line between
	// <available-deferred-tools> tags, for the prompt.
	DeferredBlock string
	// SystemPrompt is the guidance to add to the system prompt.
	SystemPrompt string
	// Mappings lists every name the provider is sent differently from the
	// registered name (gemini only), sorted by provider name.
	Mappings []Mapping
	// SchemaFallbacks names, sorted, the tools whose schema the provider's
	// schema subset cannot express and that were sent in the looser form:
	// strict false for openai and grok in strict mode, parametersJsonSchema
	// instead of parameters for gemini.
	SchemaFallbacks []string
	// Fingerprint is the hex SHA-256 of ToolsJSON, "\n" and SystemPrompt.
	Fingerprint string
}

// Mapping pairs a name sent to a provider with the registered tool name.
type Mapping struct {
	ProviderName string
	ToolName     string
}

// Build renders the initial tool set for opt.Provider: the core tools,
// sorted by name, then ToolSearch and ExecuteTool (EntryTools), and for
// anthropic with ToolReference the deferred tools, sorted by name, marked
// "defer_loading": true. Tools named ToolSearch or ExecuteTool in core or
// deferred are replaced by EntryTools. It fails on an unknown provider or
// OpenAI API, a nil tool, a name that is not ^[a-zA-Z0-9_-]{1,64}$, a name
// listed twice, or a schema that is not valid JSON (NaN or infinite
// numbers).
func Build(core, deferred []*tooldexv1.Tool, opt Options) (*Manifest, error) {
	if !opt.Provider.valid() {
		_, err := ParseProvider(string(opt.Provider))
		return nil, err
	}
	responses := false
	if opt.Provider == OpenAI {
		switch strings.ToLower(strings.TrimSpace(opt.OpenAIAPI)) {
		case "", "chat":
		case "responses":
			responses = true
		default:
			return nil, fmt.Errorf("unknown OpenAI API %q: want chat or responses", opt.OpenAIAPI)
		}
	}
	seen := make(map[string]bool)
	coreTools, err := prepare(core, "core", seen)
	if err != nil {
		return nil, err
	}
	deferredTools, err := prepare(deferred, "deferred", seen)
	if err != nil {
		return nil, err
	}
	loaded := append(coreTools, EntryTools()...)
	toolReference := opt.ToolReference && opt.Provider == Anthropic
	strict := opt.Strict && (opt.Provider == OpenAI || opt.Provider == Grok)

	var r rendered
	switch opt.Provider {
	case Anthropic:
		r = renderAnthropic(loaded, deferredTools, toolReference)
	case OpenAI, Grok:
		r = renderOpenAI(loaded, strict, responses)
	case Gemini:
		r = renderGemini(loaded)
	}
	toolsJSON, err := marshal(r.tools)
	if err != nil {
		return nil, fmt.Errorf("rendering tools: %w", err)
	}

	m := &Manifest{
		ToolsJSON:       toolsJSON,
		DeferredNames:   make([]string, 0, len(deferredTools)),
		SystemPrompt:    systemPrompt(toolReference),
		SchemaFallbacks: r.fallbacks,
	}
	for _, t := range deferredTools {
		m.DeferredNames = append(m.DeferredNames, ProviderName(opt.Provider, t.GetName()))
	}
	sort.Strings(m.DeferredNames)
	m.DeferredBlock = deferredBlock(m.DeferredNames)
	for _, list := range [][]*tooldexv1.Tool{loaded, deferredTools} {
		for _, t := range list {
			if pn := ProviderName(opt.Provider, t.GetName()); pn != t.GetName() {
				m.Mappings = append(m.Mappings, Mapping{ProviderName: pn, ToolName: t.GetName()})
			}
		}
	}
	sort.Slice(m.Mappings, func(i, j int) bool { return m.Mappings[i].ProviderName < m.Mappings[j].ProviderName })
	sort.Strings(m.SchemaFallbacks)
	sum := sha256.Sum256([]byte(string(m.ToolsJSON) + "\n" + m.SystemPrompt))
	m.Fingerprint = hex.EncodeToString(sum[:])
	return m, nil
}

// prepare checks tools, drops the entry tools and returns the rest sorted
// by name. seen collects names across calls to catch duplicates.
func prepare(tools []*tooldexv1.Tool, kind string, seen map[string]bool) ([]*tooldexv1.Tool, error) {
	out := make([]*tooldexv1.Tool, 0, len(tools))
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("%s tool %d is nil", kind, i)
		}
		name := t.GetName()
		if !toolname.Valid(name) {
			return nil, fmt.Errorf("%s tool %q: name must match ^[a-zA-Z0-9_-]{1,64}$", kind, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s tool %q is listed twice", kind, name)
		}
		seen[name] = true
		if name == ToolSearchName || name == ExecuteToolName {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}

// rendered is a provider's tools value and the tools that fell back to a
// looser schema form.
type rendered struct {
	tools     any
	fallbacks []string
}

type anthropicTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InputSchema  map[string]any `json:"input_schema"`
	DeferLoading bool           `json:"defer_loading,omitempty"`
}

func renderAnthropic(loaded, deferred []*tooldexv1.Tool, toolReference bool) rendered {
	tools := make([]anthropicTool, 0, len(loaded)+len(deferred))
	for _, t := range loaded {
		tools = append(tools, anthropicTool{Name: t.GetName(), Description: t.GetDescription(), InputSchema: inputSchema(t)})
	}
	if toolReference {
		for _, t := range deferred {
			tools = append(tools, anthropicTool{Name: t.GetName(), Description: t.GetDescription(), InputSchema: inputSchema(t), DeferLoading: true})
		}
	}
	return rendered{tools: tools}
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Strict      bool           `json:"strict,omitempty"`
}

type responsesTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Strict      bool           `json:"strict"`
}

func renderOpenAI(loaded []*tooldexv1.Tool, strict, responses bool) rendered {
	var r rendered
	chat := make([]chatTool, 0, len(loaded))
	resp := make([]responsesTool, 0, len(loaded))
	for _, t := range loaded {
		params := inputSchema(t)
		isStrict := false
		if strict {
			if s, ok := strictSchema(params); ok {
				params, isStrict = s, true
			} else {
				r.fallbacks = append(r.fallbacks, t.GetName())
			}
		}
		chat = append(chat, chatTool{Type: "function", Function: chatFunction{
			Name: t.GetName(), Description: t.GetDescription(), Parameters: params, Strict: isStrict,
		}})
		resp = append(resp, responsesTool{
			Type: "function", Name: t.GetName(), Description: t.GetDescription(), Parameters: params, Strict: isStrict,
		})
	}
	if responses {
		r.tools = resp
	} else {
		r.tools = chat
	}
	return r
}

type geminiTool struct {
	FunctionDeclarations []geminiFunction `json:"functionDeclarations"`
}

type geminiFunction struct {
	Name                 string         `json:"name"`
	Description          string         `json:"description,omitempty"`
	Parameters           map[string]any `json:"parameters,omitempty"`
	ParametersJSONSchema map[string]any `json:"parametersJsonSchema,omitempty"`
}

func renderGemini(loaded []*tooldexv1.Tool) rendered {
	var r rendered
	decls := make([]geminiFunction, 0, len(loaded))
	for _, t := range loaded {
		f := geminiFunction{Name: ProviderName(Gemini, t.GetName()), Description: t.GetDescription()}
		schema := inputSchema(t)
		proj := ProjectGeminiSchema(schema)
		props, _ := proj["properties"].(map[string]any)
		switch {
		case proj["type"] == "OBJECT" && len(props) == 0 && !freeKeys(schema):
			// No parameters: Gemini refuses an OBJECT without properties.
		case proj["type"] == "OBJECT" && len(props) > 0 && geminiExpressible(proj, true):
			f.Parameters = proj
		default:
			delete(schema, "$id")
			f.ParametersJSONSchema = schema
			r.fallbacks = append(r.fallbacks, t.GetName())
		}
		decls = append(decls, f)
	}
	r.tools = geminiTool{FunctionDeclarations: decls}
	return r
}

// freeKeys reports whether an object schema admits keys beyond its
// properties by additionalProperties or patternProperties.
func freeKeys(s map[string]any) bool {
	if ap, ok := s["additionalProperties"]; ok && ap != false {
		return true
	}
	pp, _ := s["patternProperties"].(map[string]any)
	return len(pp) > 0
}

// marshal encodes v as compact JSON with sorted map keys, without escaping
// <, > and &.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MaxBlockNames bounds the names the <available-deferred-tools> block
// lists: past it the block says how many more there are (ToolSearch finds
// them). A prompt of 100,000 names (2.4 MB) helps no model.
const MaxBlockNames = 1000

func deferredBlock(names []string) string {
	var b strings.Builder
	b.WriteString("<available-deferred-tools>\n")
	for i, n := range names {
		if i == MaxBlockNames {
			fmt.Fprintf(&b, "(and %d more: find them with ToolSearch)\n", len(names)-i)
			break
		}
		b.WriteString(n)
		b.WriteByte('\n')
	}
	b.WriteString("</available-deferred-tools>")
	return b.String()
}

const promptSearch = `You have more tools than the ones in your tool list. The others are deferred: <available-deferred-tools> lists their names, and you can call one only after finding it with ToolSearch, which also tells you its parameters. Before you conclude that you lack a capability, search for it:
- "select:Name1,Name2" loads tools you know by name;
- "discover:<what you want to do>" finds tools for a task;
- keywords, such as "slack send message"; "+slack send" requires slack;
- "mcp__<server>" lists every tool of one MCP server.
`

const promptExecute = `Then call the tool you found with ExecuteTool {"tool_name": "<name>", "params": {...}}, with params matching its schema. Call the tools in your tool list directly.`

const promptReference = `The tools ToolSearch finds are added to your tool list: call them directly. ExecuteTool {"tool_name": "<name>", "params": {...}} calls any deferred tool too.`

// systemPrompt returns the guidance text; with tool_reference found tools
// become directly callable.
func systemPrompt(toolReference bool) string {
	if toolReference {
		return promptSearch + promptReference
	}
	return promptSearch + promptExecute
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolReferenceBlock struct {
	Type     string `json:"type"`
	ToolName string `json:"tool_name"`
}

// SearchContent renders a search result as the content of the tool_result
// that answers a ToolSearch call, as JSON. names are the found tools,
// registered names or provider names alike (ProviderName maps them and
// leaves an already mapped name as it is). For anthropic with toolReference
// the content is one {"type": "tool_reference", "tool_name"} block per name
// (empty and repeated names skipped), then a text block carrying text when
// text is not empty; the API expands each reference into the tool's
// definition, so every name must be among the deferred tools Build sent. It
// fails when there is neither a name nor text, since the API refuses empty
// text blocks. For every other provider, or without toolReference, it is
// [{"type": "text", "text": text}], text already holding whatever schemas
// the model needs.
func SearchContent(p Provider, toolReference bool, names []string, text string) ([]byte, error) {
	if !p.valid() {
		_, err := ParseProvider(string(p))
		return nil, err
	}
	if p != Anthropic || !toolReference {
		return marshal([]textBlock{{Type: "text", Text: text}})
	}
	blocks := make([]any, 0, len(names)+1)
	seen := make(map[string]bool)
	for _, n := range names {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		blocks = append(blocks, toolReferenceBlock{Type: "tool_reference", ToolName: ProviderName(p, n)})
	}
	if text != "" {
		blocks = append(blocks, textBlock{Type: "text", Text: text})
	}
	if len(blocks) == 0 {
		return nil, errors.New("search content: no tool names and no text")
	}
	return marshal(blocks)
}
