package sdkjudge_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/manifest"
)

// obj parses a JSON object.
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("parsing %s: %v", s, err)
	}
	return m
}

// canon returns v as JSON with sorted keys, for comparisons.
func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// asList returns v as a JSON array, or nil.
func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// tool returns a tool with a JSON input schema ("" for none).
func tool(t *testing.T, name, description, schema string) *tooldexv1.Tool {
	t.Helper()
	tl := &tooldexv1.Tool{Name: name, Description: description}
	if schema != "" {
		s, err := structpb.NewStruct(obj(t, schema))
		if err != nil {
			t.Fatalf("struct: %v", err)
		}
		tl.InputSchema = s
	}
	return tl
}

// optName names a set of options in subtest names.
func optName(o manifest.Options) string {
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
// cares about (the same shapes as manifest_test.go's catalog).
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
