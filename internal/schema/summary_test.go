package schema

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestParamSummary(t *testing.T) {
	tests := []struct {
		schema, want string
	}{
		{`{"type":"object"}`, ""},
		{`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["b"]}`, "b (string, required), a (integer)"},
		{`{"properties":{"t":{"type":["string","null"]},"e":{"enum":[1,2]},"x":{}}}`, "e (enum), t (string|null), x (any)"},
	}
	for _, tt := range tests {
		s := &structpb.Struct{}
		if err := protojson.Unmarshal([]byte(tt.schema), s); err != nil {
			t.Fatal(err)
		}
		if got := ParamSummary(s); got != tt.want {
			t.Errorf("ParamSummary(%s) = %q, want %q", tt.schema, got, tt.want)
		}
	}
	if got := ParamSummary(nil); got != "" {
		t.Errorf("ParamSummary(nil) = %q, want empty", got)
	}
}
