package catalog

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/schema"
)

// Limits on a tool's MCP fields (output_schema, title, icons, meta),
// documented in the proto.
const (
	MaxTitle       = 512
	MaxIcons       = 16
	MaxIconSrc     = 64 << 10
	MaxIconSizes   = 16
	maxIconText    = 64 // an icon's mime_type, theme and each size
	MaxMetaBytes   = 64 << 10
	maxOutputBytes = MaxSchemaBytes
)

// checkToolMCPFields checks the fields a tool carries for MCP clients:
// output_schema (a JSON Schema object, like input_schema), title, icons and
// meta, each bounded. It adds one violation per bad field.
func checkToolMCPFields(ve *ValidationError, field string, t *tooldexv1.Tool) {
	if n := len(t.GetTitle()); n > MaxTitle {
		ve.Add(field+".title", "is %d bytes, at most %d", n, MaxTitle)
	}
	if out := t.GetOutputSchema(); out != nil {
		if n := proto.Size(out); n > maxOutputBytes {
			ve.Add(field+".output_schema", "is %d bytes, at most %d", n, maxOutputBytes)
		} else if doc := out.AsMap(); doc["type"] != "object" {
			ve.Add(field+".output_schema", `must be an object schema ("type": "object"), as MCP requires`)
		} else if err := schema.Check(doc); err != nil {
			ve.Add(field+".output_schema", "%v", err)
		}
	}
	if m := t.GetMeta(); m != nil {
		if n := proto.Size(m); n > MaxMetaBytes {
			ve.Add(field+".meta", "is %d bytes, at most %d", n, MaxMetaBytes)
		}
	}
	icons := t.GetIcons()
	if len(icons) > MaxIcons {
		ve.Add(field+".icons", "has %d entries, at most %d", len(icons), MaxIcons)
		return
	}
	for i, ic := range icons {
		f := fmt.Sprintf("%s.icons[%d]", field, i)
		switch src := ic.GetSrc(); {
		case src == "":
			ve.Add(f+".src", "is empty")
		case len(src) > MaxIconSrc:
			ve.Add(f+".src", "is %d bytes, at most %d", len(src), MaxIconSrc)
		case !strings.HasPrefix(src, "https://") && !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "data:"):
			ve.Add(f+".src", "must be an http(s): or data: URI")
		}
		if n := len(ic.GetMimeType()); n > maxIconText {
			ve.Add(f+".mime_type", "is %d bytes, at most %d", n, maxIconText)
		}
		switch ic.GetTheme() {
		case "", "light", "dark":
		default:
			ve.Add(f+".theme", `must be "light", "dark" or empty`)
		}
		if n := len(ic.GetSizes()); n > MaxIconSizes {
			ve.Add(f+".sizes", "has %d entries, at most %d", n, MaxIconSizes)
			continue
		}
		for j, s := range ic.GetSizes() {
			if s == "" || len(s) > maxIconText {
				ve.Add(fmt.Sprintf("%s.sizes[%d]", f, j), "must be 1 to %d bytes", maxIconText)
			}
		}
	}
}
