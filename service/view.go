package service

import (
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
)

// Schema views (SearchRequest.schema_view, and Discover's and Prefetch's):
// how results carry each tool's input schema.
//
//   - STRUCT (the default): the tool as registered, input_schema a Struct
//     (marshalled once, catalog.Entry.WireTool).
//   - JSON: the tool without input_schema and with input_schema_json, the
//     schema as compact JSON, rendered once per entry and shared by every
//     response and by the select:/Discover text. A client decodes one
//     string instead of a Struct tree: for the Go client, a Struct of five
//     schemas cost more than a whole health-check round trip
//     (docs/BENCHMARKS.md).
//   - NONE: the tool without its schema.
//
// Each view is a message the catalog entry makes once and shares:
// nothing modifies it (the gRPC handlers marshal it; in-process callers
// get copies, fullResults).

// checkView reports an unknown schema view.
func checkView(ve *ValidationError, v tooldexv1.SchemaView) {
	switch v {
	case tooldexv1.SchemaView_SCHEMA_VIEW_UNSPECIFIED, tooldexv1.SchemaView_SCHEMA_VIEW_STRUCT,
		tooldexv1.SchemaView_SCHEMA_VIEW_JSON, tooldexv1.SchemaView_SCHEMA_VIEW_NONE:
		return
	}
	ve.add("schema_view", "is %d, not a SchemaView; use SCHEMA_VIEW_STRUCT (the default), SCHEMA_VIEW_JSON or SCHEMA_VIEW_NONE", int32(v))
}

// viewTool returns e's tool in view v, which must have passed checkView.
func viewTool(e *catalog.Entry, v tooldexv1.SchemaView) *tooldexv1.Tool {
	switch v {
	case tooldexv1.SchemaView_SCHEMA_VIEW_JSON:
		return e.JSONTool()
	case tooldexv1.SchemaView_SCHEMA_VIEW_NONE:
		return e.BareTool()
	}
	return e.WireTool()
}
