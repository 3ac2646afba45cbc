package service

import (
	"fmt"
	"testing"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/internal/schema"
)

// TestStatusOfLimits: the errors of limit and schema get their codes and
// name their fields.
func TestStatusOfLimits(t *testing.T) {
	tests := []struct {
		err   error
		code  codes.Code
		field string
	}{
		{&limit.SizeError{Field: "params_json", Size: 5, Limit: 4}, codes.InvalidArgument, "params_json"},
		{fmt.Errorf("wrapped: %w", &limit.CountError{Field: "params_json", Limit: 1}), codes.InvalidArgument, "params_json"},
		{&limit.DepthError{Field: "params", Limit: 1}, codes.InvalidArgument, "params"},
		{&limit.LimitError{Key: "k", Err: limit.ErrRate, Limit: 1}, codes.ResourceExhausted, ""},
		{fmt.Errorf("%w: x", schema.ErrTooMuchWork), codes.InvalidArgument, "params"},
		{fmt.Errorf("%w: x", schema.ErrBadParams), codes.InvalidArgument, "params"},
		{&schema.ParamsError{Violations: []schema.Violation{{Path: "params.a", Description: "bad"}}, Total: 3}, codes.InvalidArgument, "params.a"},
	}
	for _, tt := range tests {
		st := status.Convert(statusOf(zap.NewNop(), tt.err))
		if st.Code() != tt.code {
			t.Errorf("%v: code %v, want %v", tt.err, st.Code(), tt.code)
		}
		if tt.field != "" {
			if fs := violationFields(st); len(fs) == 0 || fs[0] != tt.field {
				t.Errorf("%v: fields %v, want %s first", tt.err, fs, tt.field)
			}
		}
	}
}
