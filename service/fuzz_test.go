package service

import (
	"encoding/json"
	"errors"
	"go.uber.org/zap"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/schema"
)

// hostileSchemas are fuzz seeds that have broken schema compilers: deep
// nesting, huge keyword arrays and reference cycles.
func hostileSchemas() []string {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 200) + `{}` + strings.Repeat(`}}`, 200)
	atLimit := strings.Repeat(`{"properties":{"a":`, schema.MaxDepth/2-1) + `{}` + strings.Repeat(`}}`, schema.MaxDepth/2-1)
	deepAllOf := strings.Repeat(`{"allOf":[`, 200) + `{}` + strings.Repeat(`]}`, 200)
	enum := make([]string, 10000)
	for i := range enum {
		enum[i] = strconv.Itoa(i)
	}
	hugeEnum := `{"type":"object","properties":{"n":{"enum":[` + strings.Join(enum, ",") + `]}}}`
	return []string{
		`{}`,
		`{"type":"object"}`,
		`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		deep,
		atLimit,
		deepAllOf,
		hugeEnum,
		`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"$ref":"#"}`,
		`{"type":"object","properties":{"self":{"$ref":"#"}}}`,
		`{"$ref":"https://example.com/schema.json"}`,
		`{"$ref":"file:///etc/passwd"}`,
		`{"$id":"https://example.com/root","$ref":"other.json"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"}`,
		`{"$schema":"https://example.com/unknown"}`,
		`{"$schema":7}`,
		`{"$ref":7}`,
		`{"type":"string"}`,
		`{"type":["object"]}`,
		`{"type":"object","properties":{"a":{"minimum":"x"}}}`,
		`{"type":"object","properties":{"a":{"pattern":"("}}}`,
		`{"type":"object","patternProperties":{"(?=x)":{}}}`,
		`{"type":"object","properties":{"a":{"format":"date-time","minLength":-1}}}`,
		`{"$dynamicRef":"#meta","$dynamicAnchor":"meta"}`,
		`{"$anchor":"x","$ref":"#x"}`,
		`{"$vocabulary":{"https://example.com/v":true}}`,
		`{"properties":null,"items":[],"required":{}}`,
	}
}

// FuzzRegisterSchema registers a tool whose input schema is arbitrary JSON.
// Registering must never panic and must either succeed or fail with a
// *ValidationError.
func FuzzRegisterSchema(f *testing.F) {
	for _, s := range hostileSchemas() {
		f.Add(s)
	}
	s := New(Config{})
	f.Fuzz(func(t *testing.T, js string) {
		var v any
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		schema, err := structpb.NewStruct(m)
		if err != nil {
			return
		}
		req := &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "FuzzTool", Description: "fuzzed", InputSchema: schema}}}
		resp, err := s.register(t.Context(), req)
		if err != nil {
			var ve *catalog.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("register: got error %T %v, want a *ValidationError", err, err)
			}
			if len(ve.Violations) == 0 {
				t.Fatalf("register: ValidationError without violations")
			}
			for _, v := range ve.Violations {
				if v.Field != "tools[0].input_schema" {
					t.Errorf("register: violation on %q (%s), want tools[0].input_schema", v.Field, v.Description)
				}
			}
			return
		}
		if got := len(resp.GetResults()); got != 1 {
			t.Fatalf("register: got %d results, want 1", got)
		}
		// A registered schema must also survive indexing and rendering.
		r, err := s.Search(t.Context(), &tooldexv1.SearchRequest{Query: "select:FuzzTool"})
		if err != nil || len(r.GetResults()) != 1 || !strings.Contains(r.GetText(), "Schema: {") {
			t.Fatalf("select:FuzzTool after register: got %v, err %v", r, err)
		}
	})
}

// FuzzValidateParams executes hostile parameters against hostile schemas:
// validation must answer (accept, or INVALID_ARGUMENT with violations that
// name params fields) and never panic or hang.
func FuzzValidateParams(f *testing.F) {
	params := []string{`{}`, `{"a":1}`, `{"self":{"self":{"self":{}}}}`, `{"n":9999}`, `{"path":"x"}`,
		`{"a":` + strings.Repeat(`[`, 500) + strings.Repeat(`]`, 500) + `}`, `{"x":{"y":{"z":[1,"2",{"q":null}]}}}`}
	for _, s := range hostileSchemas() {
		for _, p := range params {
			f.Add(s, p)
		}
	}
	f.Fuzz(func(t *testing.T, schemaJSON, paramsJSON string) {
		var doc map[string]any
		if json.Unmarshal([]byte(schemaJSON), &doc) != nil {
			return
		}
		if len(schemaJSON) > catalog.MaxSchemaBytes || schema.Nesting(doc, schema.MaxDepth+1) > schema.MaxDepth {
			return // registration refuses these before compiling
		}
		sch, err := schema.New(doc, schema.DefaultLimits)
		if err != nil {
			return
		}
		req := &tooldexv1.ExecuteRequest{ParamsJson: paramsJSON}
		_, instance, err := decodeParams(req)
		if err != nil {
			return
		}
		if verr := sch.Validate(t.Context(), instance); verr != nil {
			for _, field := range violationFields(status.Convert(statusOf(zap.NewNop(), verr))) {
				if !strings.HasPrefix(field, "params") {
					t.Errorf("violation field %q does not start with params", field)
				}
			}
		}
	})
}
