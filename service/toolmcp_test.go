package service

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
)

// TestToolMCPFieldsRoundTrip registers a tool with every MCP field and
// reads it back unchanged from ListTools and select:; a change to one of
// them is an update, re-registering it unchanged is not.
func TestToolMCPFieldsRoundTrip(t *testing.T) {
	c := newTestEnv(t)
	want := &tooldexv1.Tool{
		Name:         "mcp__srv__get_weather",
		Description:  "Weather for a city.",
		InputSchema:  mustStruct(t, `{"type":"object","properties":{"city":{"type":"string"}}}`),
		OutputSchema: mustStruct(t, `{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`),
		Title:        "Get the weather",
		Icons: []*tooldexv1.Icon{
			{Src: "https://example.com/w.png", MimeType: "image/png", Sizes: []string{"48x48", "96x96"}, Theme: "light"},
			{Src: "data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=", Sizes: []string{"any"}},
		},
		Meta:        mustStruct(t, `{"vendor.example/x":{"a":[1,2]}}`),
		Annotations: &tooldexv1.ToolAnnotations{Title: "Weather", ReadOnly: true, OpenWorld: true},
		Source:      &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_MCP, Id: "srv"},
	}
	if got := register(t, c, want).GetResults()[0].GetOutcome(); got != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED {
		t.Fatalf("outcome = %v, want CREATED", got)
	}
	resp, err := c.ListTools(t.Context(), &tooldexv1.ListToolsRequest{NamePrefix: "mcp__srv"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetTools()) != 1 {
		t.Fatalf("ListTools: %d tools, want 1", len(resp.GetTools()))
	}
	got := resp.GetTools()[0]
	if diff := cmp.Diff(want, got, protocmp.Transform(), protocmp.IgnoreFields(&tooldexv1.Tool{}, "loading")); diff != "" {
		t.Errorf("ListTools tool (-registered +listed):\n%s", diff)
	}
	sel := search(t, c, "select:mcp__srv__get_weather").GetResults()
	if len(sel) != 1 || !proto.Equal(sel[0].GetTool().GetOutputSchema(), want.OutputSchema) || sel[0].GetTool().GetTitle() != want.Title {
		t.Errorf("select: tool = %v, want output_schema and title kept", sel)
	}
	if got := register(t, c, want).GetResults()[0].GetOutcome(); got != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED {
		t.Errorf("same tool again: outcome = %v, want UNCHANGED", got)
	}
	changed := proto.CloneOf(want)
	changed.Icons[0].Theme = "dark"
	if got := register(t, c, changed).GetResults()[0].GetOutcome(); got != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED {
		t.Errorf("icon theme changed: outcome = %v, want UPDATED", got)
	}
}

func TestToolMCPFieldsInvalid(t *testing.T) {
	c := newTestEnv(t)
	manyIcons := make([]*tooldexv1.Icon, catalog.MaxIcons+1)
	for i := range manyIcons {
		manyIcons[i] = &tooldexv1.Icon{Src: "https://example.com/i.png"}
	}
	tests := []struct {
		name string
		tool *tooldexv1.Tool
		want []string
	}{
		{"title too long", &tooldexv1.Tool{Name: "a", Title: strings.Repeat("t", catalog.MaxTitle+1)}, []string{"tools[0].title"}},
		{"output schema not an object schema", &tooldexv1.Tool{Name: "a", OutputSchema: mustStruct(t, `{"type":"array"}`)}, []string{"tools[0].output_schema"}},
		{"output schema external ref", &tooldexv1.Tool{Name: "a", OutputSchema: mustStruct(t, `{"type":"object","$ref":"https://example.com/s.json"}`)}, []string{"tools[0].output_schema"}},
		{"too many icons", &tooldexv1.Tool{Name: "a", Icons: manyIcons}, []string{"tools[0].icons"}},
		{"icon without src", &tooldexv1.Tool{Name: "a", Icons: []*tooldexv1.Icon{{MimeType: "image/png"}}}, []string{"tools[0].icons[0].src"}},
		{"icon javascript src", &tooldexv1.Tool{Name: "a", Icons: []*tooldexv1.Icon{{Src: "javascript:alert(1)"}}}, []string{"tools[0].icons[0].src"}},
		{"icon bad theme and size", &tooldexv1.Tool{Name: "a", Icons: []*tooldexv1.Icon{{Src: "https://e/i", Theme: "blue", Sizes: []string{""}}}}, []string{"tools[0].icons[0].sizes[0]", "tools[0].icons[0].theme"}},
		{"meta too large", &tooldexv1.Tool{Name: "a", Meta: mustStruct(t, `{"k":"`+strings.Repeat("m", catalog.MaxMetaBytes)+`"}`)}, []string{"tools[0].meta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{tt.tool}})
			got := badFields(t, err)
			if !slices.Equal(got, tt.want) {
				t.Errorf("bad fields = %v, want %v", got, tt.want)
			}
		})
	}
}
