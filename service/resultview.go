package service

import (
	"encoding/json"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// checkResultView validates ExecuteRequest.result_view.
func checkResultView(v tooldexv1.ResultView) error {
	if v >= tooldexv1.ResultView_RESULT_VIEW_UNSPECIFIED && v <= tooldexv1.ResultView_RESULT_VIEW_JSON {
		return nil
	}
	ve := &ValidationError{}
	ve.add("result_view", "is %d; use RESULT_VIEW_STRUCT (the default) or RESULT_VIEW_JSON", v)
	return ve.err()
}

// jsonView puts a response's JSON values as compact JSON text (encoding/
// json's: keys sorted): structured_content_json for structured_content,
// json_text for json content blocks. The host's result is not modified
// (its blocks are replaced, not changed in place).
func jsonView(resp *tooldexv1.ExecuteResponse) {
	if sc := resp.GetStructuredContent(); sc != nil {
		resp.StructuredContentJson = compactJSON(structpb.NewStructValue(sc))
		resp.StructuredContent = nil
	}
	var out []*tooldexv1.Content
	for i, c := range resp.GetContent() {
		j, ok := c.GetKind().(*tooldexv1.Content_Json)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]*tooldexv1.Content(nil), resp.GetContent()...)
		}
		out[i] = &tooldexv1.Content{Kind: &tooldexv1.Content_JsonText{JsonText: compactJSON(j.Json)}}
	}
	if out != nil {
		resp.Content = out
	}
}

// compactJSON renders a Value as compact JSON; a value JSON cannot hold (a
// number that is not finite) renders as null.
func compactJSON(v *structpb.Value) string {
	b, err := json.Marshal(v.AsInterface())
	if err != nil {
		return "null"
	}
	return string(b)
}
