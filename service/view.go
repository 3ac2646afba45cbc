package service

import (
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// Schema views (SearchRequest.schema_view, and Discover's and Prefetch's):
// how results carry each tool's input schema.
//
//   - STRUCT (the default): the light tool (catalog.go), whose schema goes
//     out as the Struct's stored wire bytes.
//   - JSON: the light tool without those bytes and with input_schema_json
//     set to the entry's JSON, rendered once per entry (entry.schemaJSON)
//     and shared by every response and by the select:/Discover text. A
//     client decodes one string instead of a Struct tree: for the Go
//     client, a Struct of five schemas cost more than a whole health-check
//     round trip (docs/BENCHMARKS.md).
//   - NONE: the light tool without the schema.
//
// The tools are made per response, all in one allocation (lightResults),
// and share the entry's strings, annotations, source, aliases and bytes:
// nothing modifies them (the gRPC handlers marshal them; in-process
// callers get clones, fullResults).

// checkView reports an unknown schema view.
func checkView(ve *ValidationError, v tooldexv1.SchemaView) {
	switch v {
	case tooldexv1.SchemaView_SCHEMA_VIEW_UNSPECIFIED, tooldexv1.SchemaView_SCHEMA_VIEW_STRUCT,
		tooldexv1.SchemaView_SCHEMA_VIEW_JSON, tooldexv1.SchemaView_SCHEMA_VIEW_NONE:
		return
	}
	ve.add("schema_view", "is %d, not a SchemaView; use SCHEMA_VIEW_STRUCT (the default), SCHEMA_VIEW_JSON or SCHEMA_VIEW_NONE", int32(v))
}

// viewTool sets t, a zero Tool, to e's light tool in view v, which must
// have passed checkView.
func viewTool(t *tooldexv1.Tool, e *entry, v tooldexv1.SchemaView) {
	switch v {
	case tooldexv1.SchemaView_SCHEMA_VIEW_JSON:
		e.lightInto(t, false)
		t.InputSchemaJson = e.schemaJSON()
	case tooldexv1.SchemaView_SCHEMA_VIEW_NONE:
		e.lightInto(t, false)
	default:
		e.lightInto(t, true)
	}
}
