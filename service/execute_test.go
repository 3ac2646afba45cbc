package service

import (
	"testing"

	"go.uber.org/zap"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/schema"
)

func TestParamViolationsListEveryLeaf(t *testing.T) {
	sch, err := schema.New(map[string]any{
		"type":     "object",
		"required": []any{"a"},
		"properties": map[string]any{
			"a": map[string]any{"type": "integer"},
			"b": map[string]any{"type": "object", "properties": map[string]any{"c": map[string]any{"type": "string"}}},
			"l": map[string]any{"type": "array", "items": map[string]any{"type": "number"}},
		},
	}, schema.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	verr := sch.Validate(t.Context(), map[string]any{"a": "x", "b": map[string]any{"c": 1.0}, "l": []any{1.0, "two"}})
	if verr == nil {
		t.Fatal("Validate accepted invalid params")
	}
	st := status.Convert(statusOf(zap.NewNop(), verr))
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code = %v, want InvalidArgument", st.Code())
	}
	fields := map[string]bool{}
	for _, f := range violationFields(st) {
		fields[f] = true
	}
	for _, want := range []string{"params.a", "params.b.c", "params.l[1]"} {
		if !fields[want] {
			t.Errorf("violations %v lack %q", fields, want)
		}
	}
}

func TestDecodeParams(t *testing.T) {
	st, _ := structpb.NewStruct(map[string]any{"n": 1.0})
	tests := []struct {
		name     string
		req      *tooldexv1.ExecuteRequest
		wantErr  bool
		wantJSON string
	}{
		{name: "none", req: &tooldexv1.ExecuteRequest{}},
		{name: "struct", req: &tooldexv1.ExecuteRequest{Params: st}},
		{name: "json keeps big ints", req: &tooldexv1.ExecuteRequest{ParamsJson: `{"id": 9007199254740993}`}, wantJSON: `{"id": 9007199254740993}`},
		{name: "both", req: &tooldexv1.ExecuteRequest{Params: st, ParamsJson: `{}`}, wantErr: true},
		{name: "not an object", req: &tooldexv1.ExecuteRequest{ParamsJson: `[1]`}, wantErr: true},
		{name: "two values", req: &tooldexv1.ExecuteRequest{ParamsJson: `{} {}`}, wantErr: true},
		{name: "garbage", req: &tooldexv1.ExecuteRequest{ParamsJson: `{`}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _, err := decodeParams(tt.req)
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeParams() error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if status.Code(err) != codes.InvalidArgument {
					t.Errorf("decodeParams() code = %v, want InvalidArgument", status.Code(err))
				}
				return
			}
			if p.json != tt.wantJSON {
				t.Errorf("decodeParams().json = %q, want %q", p.json, tt.wantJSON)
			}
			if p.structured == nil {
				t.Error("decodeParams().structured is nil")
			}
		})
	}
}

func TestExecuteUnknownToolIsNotFound(t *testing.T) {
	s := New(Config{})
	_, err := s.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: "nope"})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("Execute(unknown) code = %v (%v), want NotFound", status.Code(err), err)
	}
}

func violationFields(st *status.Status) []string {
	var out []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out = append(out, v.GetField())
			}
		}
	}
	return out
}
