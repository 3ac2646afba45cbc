package service

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/schema"
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
		ve.add(field+".title", "is %d bytes, at most %d", n, MaxTitle)
	}
	if out := t.GetOutputSchema(); out != nil {
		if n := proto.Size(out); n > maxOutputBytes {
			ve.add(field+".output_schema", "is %d bytes, at most %d", n, maxOutputBytes)
		} else if doc := out.AsMap(); doc["type"] != "object" {
			ve.add(field+".output_schema", `must be an object schema ("type": "object"), as MCP requires`)
		} else if err := schema.Check(doc); err != nil {
			ve.add(field+".output_schema", "%v", err)
		}
	}
	if m := t.GetMeta(); m != nil {
		if n := proto.Size(m); n > MaxMetaBytes {
			ve.add(field+".meta", "is %d bytes, at most %d", n, MaxMetaBytes)
		}
	}
	icons := t.GetIcons()
	if len(icons) > MaxIcons {
		ve.add(field+".icons", "has %d entries, at most %d", len(icons), MaxIcons)
		return
	}
	for i, ic := range icons {
		f := fmt.Sprintf("%s.icons[%d]", field, i)
		switch src := ic.GetSrc(); {
		case src == "":
			ve.add(f+".src", "is empty")
		case len(src) > MaxIconSrc:
			ve.add(f+".src", "is %d bytes, at most %d", len(src), MaxIconSrc)
		case !strings.HasPrefix(src, "https://") && !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "data:"):
			ve.add(f+".src", "must be an http(s): or data: URI")
		}
		if n := len(ic.GetMimeType()); n > maxIconText {
			ve.add(f+".mime_type", "is %d bytes, at most %d", n, maxIconText)
		}
		switch ic.GetTheme() {
		case "", "light", "dark":
		default:
			ve.add(f+".theme", `must be "light", "dark" or empty`)
		}
		if n := len(ic.GetSizes()); n > MaxIconSizes {
			ve.add(f+".sizes", "has %d entries, at most %d", n, MaxIconSizes)
			continue
		}
		for j, s := range ic.GetSizes() {
			if s == "" || len(s) > maxIconText {
				ve.add(fmt.Sprintf("%s.sizes[%d]", f, j), "must be 1 to %d bytes", maxIconText)
			}
		}
	}
}

// hasMCPFields reports whether t sets any of the fields setMCPFields copies.
func hasMCPFields(t *tooldexv1.Tool) bool {
	return t.GetOutputSchema() != nil || t.GetTitle() != "" || len(t.GetIcons()) > 0 || t.GetMeta() != nil
}

// setMCPFields copies src's MCP fields (output_schema, title, icons, meta)
// to dst: cloned when clone is set (the catalog keeps them), else shared.
func setMCPFields(dst, src *tooldexv1.Tool, clone bool) {
	dst.OutputSchema, dst.Title, dst.Icons, dst.Meta = src.GetOutputSchema(), src.GetTitle(), src.GetIcons(), src.GetMeta()
	if !clone {
		return
	}
	if dst.OutputSchema != nil {
		dst.OutputSchema = proto.CloneOf(dst.OutputSchema)
	}
	if dst.Meta != nil {
		dst.Meta = proto.CloneOf(dst.Meta)
	}
	dst.Icons = nil
	for _, ic := range src.GetIcons() {
		dst.Icons = append(dst.Icons, proto.CloneOf(ic))
	}
}
