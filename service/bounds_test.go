package service

import (
	"errors"
	"math"
	"strings"
	"testing"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/limit"
)

func TestParamsBounds(t *testing.T) {
	nan := &structpb.Struct{Fields: map[string]*structpb.Value{"n": structpb.NewNumberValue(math.NaN())}}
	big, _ := structpb.NewStruct(map[string]any{"s": strings.Repeat("x", limit.MaxParamsBytes)})
	zeros := `{"a":[` + strings.TrimSuffix(strings.Repeat("0,", 3<<19), ",") + `]}`
	tests := []struct {
		name  string
		req   *tooldexv1.ExecuteRequest
		field string // "" means within the bounds
	}{
		{"none", &tooldexv1.ExecuteRequest{}, ""},
		{"small json", &tooldexv1.ExecuteRequest{ParamsJson: `{"a":[1,2]}`}, ""},
		{"3 MiB of zeros", &tooldexv1.ExecuteRequest{ParamsJson: zeros}, "params_json"},
		{"NaN in a Struct", &tooldexv1.ExecuteRequest{Params: nan}, "params"},
		{"Struct too large", &tooldexv1.ExecuteRequest{Params: big}, "params"},
	}
	for _, tt := range tests {
		err := paramsBoundsBefore(tt.req)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		st := status.Convert(statusOf(zap.NewNop(), err))
		if st.Code() != codes.InvalidArgument || len(violationFields(st)) == 0 || violationFields(st)[0] != tt.field {
			t.Errorf("%s: %v (fields %v), want INVALID_ARGUMENT on %s", tt.name, err, violationFields(st), tt.field)
		}
	}
	// Decoded, params_json can be larger than its text: the Struct is
	// what a host receives.
	var se *limit.SizeError
	if err := paramsBoundsAfter(big, `{"s":"…"}`); !errors.As(err, &se) || se.Field != "params_json" {
		t.Errorf("a decoded Struct past the bound: %v, want a SizeError on params_json", err)
	}
	if err := paramsBoundsAfter(nan, `{}`); err != nil {
		t.Errorf("a small decoded Struct: %v", err)
	}
}
