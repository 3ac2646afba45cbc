package mcpconv

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
)

// FuzzContent decodes MCP content JSON the way the SDK does (a tool
// result's content), then checks that conversion never panics and is a
// round trip: MCP → tooldex → MCP → tooldex gives the same message, and
// the wire JSON of the kinds tooldex models is the same after one trip.
func FuzzContent(f *testing.F) {
	for _, c := range contents() {
		b, err := json.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"tool_use","id":"1","name":"n","input":{}}`))
	f.Add([]byte(`{"type":"resource","resource":{"uri":"x","text":"\u00ff"},"_meta":{"a":[null,1e300]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var res mcp.CallToolResult
		if err := json.Unmarshal([]byte(`{"content":[`+string(data)+`]}`), &res); err != nil || len(res.Content) != 1 {
			return
		}
		c := res.Content[0]
		pc := FromContent(c)
		if pc == nil {
			t.Fatalf("FromContent(%s) = nil", data)
		}
		back := ToContent(pc)
		if back == nil {
			t.Fatalf("ToContent(FromContent(%s)) = nil", data)
		}
		again := FromContent(back)
		if pc.GetJson() == nil && !proto.Equal(pc, again) {
			t.Fatalf("second trip differs:\n%v\n%v", pc, again)
		}
		if pc.GetJson() != nil {
			return // not a tool-result kind: text of its JSON, by design
		}
		w1, err1 := json.Marshal(c)
		w2, err2 := json.Marshal(back)
		if err1 != nil || err2 != nil {
			return
		}
		var v1, v2 any
		if json.Unmarshal(w1, &v1) != nil || json.Unmarshal(w2, &v2) != nil {
			return
		}
		if !reflect.DeepEqual(v1, v2) {
			t.Fatalf("wire JSON changed:\n%s\n%s", w1, w2)
		}
	})
}
