package service

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

func TestJSONView(t *testing.T) {
	sc := mustStruct(t, `{"b":[1,"x",null],"a":{"n":1.5}}`)
	block := &tooldexv1.Content{Kind: &tooldexv1.Content_Json{Json: structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewBoolValue(true)}})}}
	text := &tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: "hi"}}
	host := []*tooldexv1.Content{text, block}
	resp := &tooldexv1.ExecuteResponse{Content: host, StructuredContent: sc}
	jsonView(resp)
	if got, want := resp.GetStructuredContentJson(), `{"a":{"n":1.5},"b":[1,"x",null]}`; got != want {
		t.Errorf("structured_content_json = %s, want %s", got, want)
	}
	if resp.GetStructuredContent() != nil {
		t.Error("structured_content kept beside its JSON text")
	}
	if got := resp.GetContent()[1].GetJsonText(); got != `[true]` {
		t.Errorf("json block as text = %q, want [true]", got)
	}
	if resp.GetContent()[0] != text || host[1] != block {
		t.Error("the host's content was changed in place, or a non-JSON block replaced")
	}
}

func TestResultViewInvalid(t *testing.T) {
	s := New(Config{})
	_, err := s.Execute(context.Background(), &tooldexv1.ExecuteRequest{ToolName: "x", ResultView: 9})
	if status.Code(err) != codes.InvalidArgument || !slices.Contains(badFields(t, err), "result_view") {
		t.Errorf("result_view 9: %v, want INVALID_ARGUMENT naming result_view", err)
	}
}

func TestResultViewOverAHost(t *testing.T) {
	s := hostedServer(t, Config{}, tool("echo_tool", "echoes its caller"))
	for _, v := range []tooldexv1.ResultView{tooldexv1.ResultView_RESULT_VIEW_UNSPECIFIED, tooldexv1.ResultView_RESULT_VIEW_JSON} {
		resp, err := s.Execute(context.Background(), &tooldexv1.ExecuteRequest{ToolName: "echo_tool", ResultView: v})
		if err != nil || resp.GetContent()[0].GetText() != "caller=anonymous" {
			t.Errorf("view %v: %v, %v", v, resp, err)
		}
	}
}
