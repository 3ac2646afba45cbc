package manifest

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
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
	b, err := marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
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
