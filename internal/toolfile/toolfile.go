// Package toolfile reads tool definition files into tooldex.v1 Tool
// messages. It backs `client register FILE...` and the server's
// `--catalog FILE`.
//
// The format is detected from the content (and, for JSON Lines, also from
// the file name). Accepted formats:
//
//  1. An MCP tools/list result,
//     {"tools": [{"name", "title", "description", "inputSchema",
//     "annotations": {"title", "readOnlyHint", "destructiveHint",
//     "idempotentHint", "openWorldHint"}, "_meta": {...}}], "nextCursor"},
//     or the whole JSON-RPC response {"jsonrpc": "2.0", "id": ...,
//     "result": {"tools": [...]}}. A JSON-RPC error response is reported as
//     an error. _meta["anthropic/alwaysLoad"] = true sets always_load and a
//     string _meta["anthropic/searchHint"] sets search_hint (unless the tool
//     has its own search_hint). A top-level "title" becomes the annotation
//     title. Annotation hints are taken as written: a hint that is absent is
//     false (MCP's defaults of destructiveHint and openWorldHint = true are
//     not applied). nextCursor and outputSchema are ignored.
//
//  2. An OpenAI tools array, in the Chat Completions form
//     [{"type": "function", "function": {"name", "description",
//     "parameters", "strict"}}] or the Responses API form [{"type":
//     "function", "name", "description", "parameters", "strict"}], bare or
//     wrapped as {"tools": [...]}. "strict" is ignored.
//
//  3. An Anthropic tools array, [{"name", "description", "input_schema"}],
//     bare or wrapped as {"tools": [...]}. "cache_control", "defer_loading"
//     and other unknown fields are ignored. An entry whose "type" is neither
//     "custom" nor "function" and which has no schema is a server tool
//     (web_search_20250305, OpenAI's file_search, ...) and is an error: it
//     cannot be registered.
//
//  4. tooldex's own JSON: one Tool object, or an array of them, with the
//     fields protojson uses for tooldex.v1.Tool: name, description,
//     search_hint, input_schema, always_load, annotations {title, read_only,
//     idempotent, destructive, open_world}, source {origin, id}, aliases.
//     The lowerCamelCase names (searchHint, inputSchema, alwaysLoad,
//     readOnly, openWorld) are accepted too. The Claude Code catalog
//     (claude-code-tools.json) is this format; its extra fields (core,
//     short_description, availability, ...) are ignored, and so is a
//     "source" that is a string rather than an object. "core" does not
//     mean always_load: the server keeps its own core list.
//
//  5. JSON Lines: one tool object per line, in any of the element forms
//     above. Used when the file name ends in .jsonl or .ndjson, or when the
//     content is several JSON values and the first one fits on its first
//     line. Blank lines are skipped; errors give the line number.
//
// Elements are told apart one by one: an element with a "function" key is
// OpenAI Chat Completions; otherwise its schema is read from "input_schema"
// (Anthropic, tooldex), "inputSchema" (MCP, protojson camelCase) or
// "parameters" (OpenAI Responses); more than one of them is an error. A JSON
// null field counts as absent.
//
// Input schemas are kept as they are, converted to *structpb.Struct; a
// schema that is not a JSON object is an error. Numbers are decoded
// exactly and then stored as float64, as google.protobuf.Value requires.
// Every tool must have a non-empty name; names are not otherwise checked
// here (the server does that). A file with no tools is an error.
//
// Errors are one line and start with the file name, then the tool's
// position (tool N counts from 1; line N for JSON Lines) and its name when
// known, e.g. `tools.json: tool 3 "Foo": input_schema: not a JSON object`.
package toolfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"

	"github.com/tooldex/tooldex/internal/jsonl"
)

var errNoTools = errors.New("no tools")

// ReadFile reads the file at path and parses it with Parse, using path as
// the name. It does not treat "-" as standard input; callers do that.
func ReadFile(path string) ([]*tooldexv1.Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes the contents of one tool definition file. name is the
// file's name: it prefixes error messages, and a name ending in .jsonl or
// .ndjson selects JSON Lines. Parse returns at least one tool or an error.
func Parse(name string, data []byte) ([]*tooldexv1.Tool, error) {
	var tools []*tooldexv1.Tool
	err := parse(name, data, func(t *tooldexv1.Tool) error {
		tools = append(tools, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return tools, nil
}

// ReadFileBatches reads the file at path and parses it with Batches,
// using path as the name.
func ReadFileBatches(path string, n int, fn func([]*tooldexv1.Tool) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return Batches(path, data, n, fn)
}

// Batches parses data as Parse does and hands the tools to fn in file
// order, at most n (at least 1) at a time, each batch in a slice of its
// own. JSON Lines are decoded a batch at a time, so that a large catalog
// never exists whole as messages: a server that registers each batch
// before the next is decoded keeps its memory to the catalog it holds
// (the decoded messages are several times the file's size, and objects
// kept among them are left scattered over pages once they are freed).
//
// fn's error stops the parse and is returned unchanged. A parse error
// (or a file with no tools) is returned as Parse would return it, after
// fn has had the full batches before it; the tools of the batch in
// progress are dropped.
func Batches(name string, data []byte, n int, fn func([]*tooldexv1.Tool) error) error {
	n = max(n, 1)
	size := min(n, 1024) // a batch's first capacity: n may be huge
	batch := make([]*tooldexv1.Tool, 0, size)
	var stop error
	err := parse(name, data, func(t *tooldexv1.Tool) error {
		batch = append(batch, t)
		if len(batch) < n {
			return nil
		}
		if stop = fn(batch); stop != nil {
			return stop
		}
		batch = make([]*tooldexv1.Tool, 0, size)
		return nil
	})
	switch {
	case stop != nil:
		return stop
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	case len(batch) > 0:
		return fn(batch)
	}
	return nil
}

// parse decodes data and calls emit with each tool in file order. JSON
// Lines are decoded line by line, so emit sees a tool before the next
// line is read; a whole-file JSON value is decoded whole first. An error
// of emit is returned unchanged.
func parse(name string, data []byte, emit func(*tooldexv1.Tool) error) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 BOM
	if len(bytes.TrimSpace(data)) == 0 {
		return errNoTools
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".ndjson":
		return parseLines(data, emit)
	}

	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return syntaxError(data, 0, err)
	}
	end := int(dec.InputOffset())
	if rest := bytes.TrimSpace(data[end:]); len(rest) > 0 {
		// Several values: JSON Lines if the first value sits on its own
		// line, otherwise garbage after a JSON document.
		start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
		if bytes.IndexByte(data[start:end], '\n') < 0 {
			return parseLines(data, emit)
		}
		off := len(data) - len(rest)
		line, _ := position(data, off)
		return fmt.Errorf("line %d: unexpected data after the top-level JSON value", line)
	}
	tools, err := parseValue(v)
	if err != nil {
		return err
	}
	for i, t := range tools {
		tools[i] = nil // emit's to keep or drop
		if err := emit(t); err != nil {
			return err
		}
	}
	return nil
}

// parseValue handles a whole-file JSON value.
func parseValue(v any) ([]*tooldexv1.Tool, error) {
	switch v := v.(type) {
	case []any:
		return parseArray(v)
	case map[string]any:
		if isJSONRPC(v) {
			return parseJSONRPC(v)
		}
		if tools, ok := v["tools"]; ok {
			return parseToolsField(tools)
		}
		if _, ok := v["name"]; !ok {
			if _, ok := v["function"]; !ok {
				return nil, errors.New(`not a tool file: JSON object has neither "tools" nor "name"`)
			}
		}
		t, err := convertElement(v)
		if err != nil {
			return nil, labelError("", v, err)
		}
		return []*tooldexv1.Tool{t}, nil
	default:
		return nil, fmt.Errorf("not a tool file: want a JSON object or array, got %s", kind(v))
	}
}

func isJSONRPC(m map[string]any) bool {
	if _, ok := m["jsonrpc"]; ok {
		return true
	}
	_, hasName := m["name"]
	_, hasResult := m["result"]
	return hasResult && !hasName
}

func parseJSONRPC(m map[string]any) ([]*tooldexv1.Tool, error) {
	if e, ok := m["error"]; ok && e != nil {
		msg := "JSON-RPC error response"
		if em, ok := e.(map[string]any); ok {
			if code, ok := em["code"].(json.Number); ok {
				msg += " " + code.String()
			}
			if s, ok := em["message"].(string); ok && s != "" {
				msg += ": " + s
			}
		}
		return nil, errors.New(msg)
	}
	res, ok := m["result"].(map[string]any)
	if !ok {
		return nil, errors.New("JSON-RPC response: result: not a JSON object")
	}
	tools, ok := res["tools"]
	if !ok {
		return nil, errors.New(`JSON-RPC response: result has no "tools" (not a tools/list response)`)
	}
	return parseToolsField(tools)
}

func parseToolsField(v any) ([]*tooldexv1.Tool, error) {
	switch v := v.(type) {
	case nil:
		return nil, errNoTools
	case []any:
		return parseArray(v)
	default:
		return nil, fmt.Errorf("tools: want a JSON array, got %s", kind(v))
	}
}

func parseArray(elems []any) ([]*tooldexv1.Tool, error) {
	if len(elems) == 0 {
		return nil, errNoTools
	}
	tools := make([]*tooldexv1.Tool, 0, len(elems))
	for i, e := range elems {
		label := fmt.Sprintf("tool %d", i+1)
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a JSON object, got %s", label, kind(e))
		}
		t, err := convertElement(m)
		if err != nil {
			return nil, labelError(label, m, err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// parseLines parses JSON Lines: one tool object per non-blank line, each
// handed to emit before the next line is read.
func parseLines(data []byte, emit func(*tooldexv1.Tool) error) error {
	count := 0
	err := jsonl.Each(bytes.NewReader(data), func(n int, offset int64, line []byte) error {
		label := fmt.Sprintf("line %d", n)
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return syntaxError(data, int(offset), err)
		}
		if len(bytes.TrimSpace(line[dec.InputOffset():])) > 0 {
			return fmt.Errorf("%s: unexpected data after the JSON value (want one tool object per line)", label)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want a JSON object, got %s", label, kind(v))
		}
		t, err := convertElement(m)
		if err != nil {
			return labelError(label, m, err)
		}
		count++
		return emit(t)
	})
	if err != nil {
		return err
	}
	if count == 0 {
		return errNoTools
	}
	return nil
}

// labelError prefixes err with the element's position and, if it has one,
// its name.
func labelError(label string, m map[string]any, err error) error {
	name := elementName(m)
	switch {
	case label == "" && name == "":
		return fmt.Errorf("tool: %w", err)
	case label == "":
		return fmt.Errorf("tool %q: %w", name, err)
	case name == "":
		return fmt.Errorf("%s: %w", label, err)
	case strings.HasPrefix(label, "line "):
		return fmt.Errorf("%s: tool %q: %w", label, name, err)
	default:
		return fmt.Errorf("%s %q: %w", label, name, err)
	}
}

func elementName(m map[string]any) string {
	if s, ok := m["name"].(string); ok {
		return s
	}
	if f, ok := m["function"].(map[string]any); ok {
		if s, ok := f["name"].(string); ok {
			return s
		}
	}
	return ""
}

// convertElement turns one tool entry of any supported form into a Tool.
func convertElement(m map[string]any) (*tooldexv1.Tool, error) {
	typ, err := getString(m, "type")
	if err != nil {
		return nil, err
	}
	if fn, ok := m["function"]; ok && fn != nil {
		// OpenAI Chat Completions: {"type": "function", "function": {...}}.
		if typ != "" && typ != "function" {
			return nil, fmt.Errorf(`type %q: an entry with "function" must have type "function"`, typ)
		}
		fm, ok := fn.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("function: want a JSON object, got %s", kind(fn))
		}
		t, err := convertTool(fm)
		if err != nil {
			return nil, fmt.Errorf("function: %w", err)
		}
		return t, nil
	}
	if typ != "" && typ != "custom" && typ != "function" && schemaKey(m) == "" {
		return nil, fmt.Errorf("type %q is a server tool and cannot be registered", typ)
	}
	return convertTool(m)
}

var schemaKeys = []string{"input_schema", "inputSchema", "parameters"}

// schemaKey returns the key holding the element's input schema, or "".
func schemaKey(m map[string]any) string {
	for _, k := range schemaKeys {
		if v, ok := m[k]; ok && v != nil {
			return k
		}
	}
	return ""
}

// convertTool reads the union of the MCP, Anthropic, OpenAI Responses and
// tooldex fields from one flat tool object.
func convertTool(m map[string]any) (*tooldexv1.Tool, error) {
	t := &tooldexv1.Tool{}
	var err error

	if t.Name, err = getString(m, "name"); err != nil {
		return nil, err
	}
	if t.Name == "" {
		return nil, errors.New("name: missing or empty")
	}
	if t.Description, err = getString(m, "description"); err != nil {
		return nil, err
	}
	if t.SearchHint, err = getStringAlt(m, "search_hint", "searchHint"); err != nil {
		return nil, err
	}
	if t.AlwaysLoad, err = getBoolAlt(m, "always_load", "alwaysLoad"); err != nil {
		return nil, err
	}

	// Input schema.
	var key string
	for _, k := range schemaKeys {
		if v, ok := m[k]; ok && v != nil {
			if key != "" {
				return nil, fmt.Errorf("both %s and %s are set", key, k)
			}
			key = k
		}
	}
	if key != "" {
		obj, ok := m[key].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: not a JSON object", key)
		}
		s, err := structpb.NewStruct(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		t.InputSchema = s
	}

	// Annotations: tooldex's own and MCP's hint names.
	ann := &tooldexv1.ToolAnnotations{}
	if v, ok := m["annotations"]; ok && v != nil {
		am, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("annotations: want a JSON object, got %s", kind(v))
		}
		if ann, err = convertAnnotations(am); err != nil {
			return nil, fmt.Errorf("annotations: %w", err)
		}
	}
	title, err := getString(m, "title") // MCP Tool.title
	if err != nil {
		return nil, err
	}
	if title != "" {
		ann.Title = title
	}
	if ann.Title != "" || ann.ReadOnly || ann.Idempotent || ann.Destructive || ann.OpenWorld {
		t.Annotations = ann
	}

	// Source: protojson's {origin, id}; a string (the Claude Code catalog's
	// source file path) is ignored.
	if v, ok := m["source"]; ok && v != nil {
		switch v := v.(type) {
		case string:
		case map[string]any:
			src, err := convertSource(v)
			if err != nil {
				return nil, fmt.Errorf("source: %w", err)
			}
			t.Source = src
		default:
			return nil, fmt.Errorf("source: want a JSON object, got %s", kind(v))
		}
	}

	// Aliases.
	if v, ok := m["aliases"]; ok && v != nil {
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("aliases: want a JSON array, got %s", kind(v))
		}
		for i, a := range arr {
			s, ok := a.(string)
			if !ok {
				return nil, fmt.Errorf("aliases: element %d: want a string, got %s", i+1, kind(a))
			}
			t.Aliases = append(t.Aliases, s)
		}
	}

	// MCP _meta.
	if v, ok := m["_meta"]; ok && v != nil {
		meta, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("_meta: want a JSON object, got %s", kind(v))
		}
		always, err := getBool(meta, "anthropic/alwaysLoad")
		if err != nil {
			return nil, fmt.Errorf("_meta: %w", err)
		}
		if always {
			t.AlwaysLoad = true
		}
		hint, err := getString(meta, "anthropic/searchHint")
		if err != nil {
			return nil, fmt.Errorf("_meta: %w", err)
		}
		if t.SearchHint == "" {
			t.SearchHint = hint
		}
	}
	return t, nil
}

func convertAnnotations(m map[string]any) (*tooldexv1.ToolAnnotations, error) {
	a := &tooldexv1.ToolAnnotations{}
	var err error
	if a.Title, err = getString(m, "title"); err != nil {
		return nil, err
	}
	if a.ReadOnly, err = getBoolAlt(m, "read_only", "readOnly", "readOnlyHint"); err != nil {
		return nil, err
	}
	if a.Idempotent, err = getBoolAlt(m, "idempotent", "idempotentHint"); err != nil {
		return nil, err
	}
	if a.Destructive, err = getBoolAlt(m, "destructive", "destructiveHint"); err != nil {
		return nil, err
	}
	if a.OpenWorld, err = getBoolAlt(m, "open_world", "openWorld", "openWorldHint"); err != nil {
		return nil, err
	}
	return a, nil
}

func convertSource(m map[string]any) (*tooldexv1.ToolSource, error) {
	src := &tooldexv1.ToolSource{}
	var err error
	if src.Id, err = getString(m, "id"); err != nil {
		return nil, err
	}
	switch v := m["origin"].(type) {
	case nil:
	case string:
		o, ok := tooldexv1.Origin_value[v]
		if !ok {
			return nil, fmt.Errorf("origin: unknown value %q", v)
		}
		src.Origin = tooldexv1.Origin(o)
	case json.Number:
		n, err := v.Int64()
		if err != nil || n < -1<<31 || n > 1<<31-1 {
			return nil, fmt.Errorf("origin: invalid enum number %s", v)
		}
		src.Origin = tooldexv1.Origin(n)
	default:
		return nil, fmt.Errorf("origin: want a string or number, got %s", kind(v))
	}
	return src, nil
}

// getString returns m[key] as a string; absent or null is "".
func getString(m map[string]any, key string) (string, error) {
	switch v := m[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s: want a string, got %s", key, kind(v))
	}
}

// getStringAlt is getString over alternative spellings of one field; the
// first one set wins.
func getStringAlt(m map[string]any, keys ...string) (string, error) {
	for _, k := range keys {
		s, err := getString(m, k)
		if err != nil || s != "" {
			return s, err
		}
	}
	return "", nil
}

// getBool returns m[key] as a bool; absent or null is false.
func getBool(m map[string]any, key string) (bool, error) {
	switch v := m[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("%s: want a boolean, got %s", key, kind(v))
	}
}

// getBoolAlt is getBool over alternative spellings of one field; it is
// true if any of them is true.
func getBoolAlt(m map[string]any, keys ...string) (bool, error) {
	set := false
	for _, k := range keys {
		b, err := getBool(m, k)
		if err != nil {
			return false, err
		}
		set = set || b
	}
	return set, nil
}

// kind names a decoded JSON value's type for error messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// syntaxError reports a JSON decoding error with its line and column. base
// is the offset in data where the decoder's input started.
func syntaxError(data []byte, base int, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col := position(data, base+int(se.Offset))
		return fmt.Errorf("line %d, column %d: invalid JSON: %w", line, col, err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		line, _ := position(data, len(data))
		if base > 0 {
			line, _ = position(data, base)
		}
		return fmt.Errorf("line %d: invalid JSON: unexpected end of input", line)
	default:
		line, _ := position(data, base)
		return fmt.Errorf("line %d: invalid JSON: %w", line, err)
	}
}

// position converts a byte offset in data to a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
