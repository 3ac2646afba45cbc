package service

import (
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/internal/schema"
	"google.golang.org/protobuf/types/known/structpb"
)

// Execute's parameter bounds (docs/LIMITS.md), for execute() to call: the
// cheap ones on the request before anything is decoded, the size of what
// a host would receive once params_json is decoded. Their errors go to
// toStatus as they are (INVALID_ARGUMENT naming params or params_json).

// paramsBoundsBefore checks req's parameters before decoding: params_json
// no longer than limit.MaxParamsBytes, with at most limit.MaxParamsValues
// values, limit.MaxParamsDepth deep (limit.CheckJSON, no allocation); a
// params Struct no larger than limit.MaxParamsBytes, holding no NaN or
// infinity, no invalid UTF-8, nesting at most schema.MaxDepth
// (schema.MeasureStruct).
func paramsBoundsBefore(req *tooldexv1.ExecuteRequest) error {
	if js := req.GetParamsJson(); js != "" {
		return limit.CheckJSON("params_json", js)
	}
	st := req.GetParams()
	if st == nil {
		return nil
	}
	if err := limit.CheckParams(st, ""); err != nil {
		return err
	}
	_, err := schema.MeasureStruct(st)
	return err
}

// paramsBoundsAfter checks what a host would receive once params_json is
// decoded into st (limit.CheckParams): a Struct can be several times its
// JSON text.
func paramsBoundsAfter(st *structpb.Struct, paramsJSON string) error {
	return limit.CheckParams(st, paramsJSON)
}
